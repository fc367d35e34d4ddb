// Whether a workspace has Slack's native streaming (chat.startStream / appendStream /
// stopStream). GovSlack, an older Enterprise Grid or a test server answers one of the errors
// below; from then on the connector's answers are posted and edited instead (answer-stream.ts).
import { slackError } from './slack-errors.js';

/** Shared by every stream of a connector: once a workspace says it has no native streaming, stop trying. */
export interface StreamingSupport {
  native: boolean;
}

const UNSUPPORTED = new Set([
  'unknown_method',
  'method_deprecated',
  'not_allowed_token_type',
  'invalid_arguments',
  'not_implemented',
]);

/** Slack's answer says this workspace cannot stream natively (not a failure of one call). */
export function streamingUnsupported(error: unknown): boolean {
  return UNSUPPORTED.has(slackError(error) ?? '');
}
