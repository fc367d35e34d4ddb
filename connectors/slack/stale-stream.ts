// Closing the Slack stream an instance left open when it died (cluster mode), which Slack
// would otherwise show as still being written for minutes.
//
// The open answer is recorded ahead (answer-stream.ts): a mark right before chat.startStream,
// the stream's ts once Slack answered. With the ts, the stream is stopped by it. With only the
// mark, the owner died while Slack was opening the stream or before it could record the ts
// (a slow machine makes that window wide): the stream is looked for among this bot's replies
// posted since the mark, newest first, as card-index.ts looks for a card. One short page is
// enough (`conversations.replies` is 1 request a minute and 15 messages a page for apps
// outside the Marketplace), and the lookup happens only for a death inside that window.
import type { WebClient } from '@slack/web-api';
import type { OpenAnswer } from '../../src/sessions/thread-records.js';
import { slackError } from './slack-errors.js';
import { CARD_METADATA_EVENT } from './card-index.js';

export interface StaleStreamTarget {
  channel: string;
  threadTs: string;
  /** This bot's user id (auth.test), to tell its replies from a person's or another app's. */
  botUserId?: string;
}

/** Stop the stream the record names, or the one posted since its mark. True when one was stopped. */
export async function closeStaleStream(
  client: WebClient,
  target: StaleStreamTarget,
  open: OpenAnswer,
): Promise<boolean> {
  if ('messageId' in open) return stopIfStreaming(client, target.channel, open.messageId);
  for (const ts of await repliesSince(client, target, open.startingAt)) {
    if (await stopIfStreaming(client, target.channel, ts)) return true;
  }
  return false;
}

/**
 * chat.stopStream, where Slack refusing it means there was nothing to stop: the stream ended
 * already (message_not_in_streaming_state), or a candidate of the lookup is no stream at all.
 * A failure that is no answer from Slack (the network) is thrown.
 */
async function stopIfStreaming(client: WebClient, channel: string, ts: string): Promise<boolean> {
  try {
    await client.chat.stopStream({ channel, ts });
    return true;
  } catch (error) {
    if (slackError(error) === undefined) throw error;
    return false;
  }
}

/** This bot's replies in the thread since a little before `since` (epoch ms), newest first, cards left out. */
async function repliesSince(client: WebClient, target: StaleStreamTarget, since: number): Promise<string[]> {
  const page = await client.conversations.replies({
    channel: target.channel,
    ts: target.threadTs,
    // A little before the mark: clocks differ, and ts is Slack's.
    oldest: ((since - 10_000) / 1000).toFixed(6),
    include_all_metadata: true,
    limit: 15,
  });
  const ours = (message: { user?: string; bot_id?: string }) =>
    target.botUserId ? message.user === target.botUserId : message.bot_id !== undefined;
  return (page.messages ?? [])
    .filter((message) => message.ts !== undefined && message.ts !== target.threadTs && ours(message))
    .filter(
      (message) => (message as { metadata?: { event_type?: string } }).metadata?.event_type !== CARD_METADATA_EVENT,
    )
    .map((message) => message.ts!)
    .reverse();
}
