// A click on a card's "Show all": open the modal with every character of that card's call.
//
// The button carries only the call's id (a value holds at most 2,000 characters). The call is
// found from the message that was clicked: its stored reference (written when the card was
// posted) names the session and the tool call, so a click can only ever open the call of the
// card it was made on. Its arguments come from the thread's live presenter when it has them (the
// exact text the card was drawn from), else from the session's stored transcript (after a
// restart, for a card decided before it: shared/stored-call-text.ts).
//
// Who may open it: anyone Slack lets click the card, that is anyone who can see the thread.
// The modal shows the arguments of a call already posted in that thread, and opens only for
// the person who clicked (views.open with their trigger_id). While the call waits, the modal
// carries the approve buttons (approval-modal.ts); who may approve is still the session
// layer's to judge when one is clicked.
//
// The trigger_id is good for 3 seconds: the listener acknowledges first, and nothing slow
// stands between the click and views.open (one stored reference, at worst one transcript).
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { EngineLogger } from '../../src/engine/index.js';
import type { ThreadRecords } from '../../src/sessions/thread-records.js';
import type { CallText } from '../shared/call-arguments.js';
import { storedCallText } from '../shared/stored-call-text.js';
import { CallValueSchema, decodeValue } from './actions.js';
import { fullTextView } from './approval-modal.js';
import { messageKey } from './slack-surface.js';

export interface ShowAllDeps {
  client: WebClient;
  records: Pick<ThreadRecords, 'messageAt' | 'session' | 'promptOfCall' | 'transcript'>;
  logger: EngineLogger;
  /** The full text a live thread presenter holds for a card's call, if it has it. */
  cardText(sessionId: string, toolCallId: string): CallText | undefined;
  /** GRANT_SCOPE, for the words of the modal's "always" buttons. */
  grantScope?: 'thread' | 'channel';
}

/** The parts of a block_actions payload a Show all click needs. */
const ShowAllClickSchema = z.object({
  trigger_id: z.string().min(1),
  container: z.object({ channel_id: z.string().min(1), message_ts: z.string().min(1) }),
  actions: z.array(z.object({ value: z.string().optional() })).min(1),
});

type ModalView = Parameters<WebClient['views']['open']>[0]['view'];

/** Open the modal for the clicked card's call; anything that prevents it is told to the clicker privately. */
export async function showAll(deps: ShowAllDeps, click: unknown, say: (text: string) => Promise<void>): Promise<void> {
  const parsed = ShowAllClickSchema.safeParse(click);
  const value = parsed.success ? decodeValue(CallValueSchema, parsed.data.actions[0]?.value) : undefined;
  if (!parsed.success || !value) return say('That button is not one I recognise.');
  const { trigger_id: triggerId, container } = parsed.data;
  const ref = await deps.records.messageAt(messageKey(container.channel_id, container.message_ts));
  if (!ref?.toolCallId || ref.toolCallId !== value.call)
    return say('I no longer have this call (the thread may have been forgotten).');
  const call =
    deps.cardText(ref.sessionId, ref.toolCallId) ?? (await storedCallText(deps.records, ref.sessionId, ref.toolCallId));
  if (!call) return say('I no longer have this call (the thread may have been forgotten).');
  const [record, item] = await Promise.all([
    deps.records.session(ref.sessionId),
    deps.records.promptOfCall(ref.sessionId, ref.toolCallId),
  ]);
  const prompt =
    item?.state === 'pending' && item.kind !== 'question'
      ? { item, ...(deps.grantScope ? { grantScope: deps.grantScope } : {}) }
      : undefined;
  const where = {
    call: ref.toolCallId,
    channel: container.channel_id,
    thread: record?.key.thread ?? container.message_ts,
  };
  try {
    await deps.client.views.open({ trigger_id: triggerId, view: fullTextView(call, where, prompt).view as ModalView });
  } catch (error) {
    deps.logger.warn(
      { err: error, sessionId: ref.sessionId, toolCallId: ref.toolCallId },
      'could not open the Show all modal',
    );
    const reason = (error as { data?: { error?: string } }).data?.error;
    await say(
      `I could not open the full text${reason ? ` (Slack said: ${reason})` : ''}. Click Show all again, and do not approve what you have not seen.`,
    );
  }
}
