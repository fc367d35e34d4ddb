// How the bot posts a file into a Slack thread (the attach_file tool): files.uploadV2 of
// @slack/web-api, which is Slack's three steps: files.getUploadURLExternal (a URL and a file
// id for this name and length), a POST of the bytes to that URL, and
// files.completeUploadExternal with `channel_id` and `thread_ts`, which shares the file into
// the thread with the comment (`initial_comment`). Scope: `files:write`.
//
// The call goes through the thread's own rate-limited client when its presenter is live, so
// the upload queues behind the thread's earlier card updates instead of overtaking them. The
// upload URL is whatever Slack returned (web-api 8.2 posts to it as given, with the same
// `fetch`: under SLACK_API_URL the fake's own 127.0.0.1 address works too).
import { readFile } from 'node:fs/promises';
import type { WebClient } from '@slack/web-api';
import { FileTransferError, type FileSink, type OutgoingFile, type PostedFile } from '../../src/files/transfer.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import { ABORTED, raceAbort } from '../../src/engine/index.js';

/** Slack's largest file: 1 GB (docs.slack.dev, files.getUploadURLExternal). */
const SLACK_MAX_FILE_BYTES = 1024 * 1024 * 1024;

/** Platform errors a second try can get past; the others (a missing scope, a channel the bot left) cannot. */
const TRANSIENT_ERRORS = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

export class SlackFileSink implements FileSink {
  /** `clientFor`: the Web API client to post into this thread with (its rate-limited one when live). */
  constructor(private readonly clientFor: (thread: SessionKey) => WebClient) {}

  maxBytes(): Promise<number> {
    return Promise.resolve(SLACK_MAX_FILE_BYTES);
  }

  async post(thread: SessionKey, file: OutgoingFile, signal: AbortSignal): Promise<PostedFile> {
    if (file.size > SLACK_MAX_FILE_BYTES)
      throw new FileTransferError(
        `${file.name} is ${file.size} bytes; Slack takes files of at most ${SLACK_MAX_FILE_BYTES} bytes (1 GB).`,
        false,
      );
    const bytes = await readFile(file.path, { signal });
    const comment = file.comment?.trim();
    const upload = this.clientFor(thread).files.uploadV2({
      channel_id: thread.channel,
      thread_ts: thread.thread,
      file: bytes,
      filename: file.name,
      title: file.name,
      ...(comment ? { initial_comment: comment } : {}),
    });
    try {
      // The request itself cannot be cut short: the call ends at the stop, the upload is left to finish.
      if ((await raceAbort(upload, signal)) === ABORTED)
        throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
    } catch (error) {
      if (signal.aborted) throw error;
      throw refusalOf(error, file.name);
    }
    // Slack's answer names the file's id and title only: no permalink without another call.
    return {};
  }
}

/** A person-readable FileTransferError for what the WebClient threw. */
function refusalOf(error: unknown, name: string): FileTransferError {
  const code = (error as { data?: { error?: unknown } }).data?.error;
  if (typeof code === 'string') {
    if (code === 'missing_scope' || code === 'not_allowed_token_type') {
      return new FileTransferError(
        `Slack refused to take ${name} (${code}): the Slack app needs the files:write scope (manifest/slack.yaml lists it); add it and reinstall the app.`,
        false,
      );
    }
    if (code === 'not_in_channel' || code === 'channel_not_found' || code === 'is_archived')
      return new FileTransferError(`Slack refused to post ${name} here (${code}).`, false);
    return new FileTransferError(`Slack refused to take ${name} (${code}).`, TRANSIENT_ERRORS.has(code));
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new FileTransferError(`Could not upload ${name} to Slack (${reason}).`);
}
