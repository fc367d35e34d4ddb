// A click on a prompt's button, the same on every platform: the session layer resolves it
// (who may answer is checked there); the card shows the decision; a refusal, a stale card
// (with what became of its call, and who made it so) or an unknown choice is told to the
// clicker alone (`say` is the platform's private answer).
//
// Before that, the click is held to what its place offers (approval-view.ts): a choice its
// card or full view does not show (an "always" for flagged text, an Approve on a card that
// holds only part of the call) is refused here, on the server, since a forged click can name
// any choice the item has.
import type { Core } from '../../src/core.js';
import type { SessionRecord } from '../../src/sessions/thread-records.js';
import type { CallText } from './call-arguments.js';
import { approvalView, choiceRefusal, NOT_ALL_ON_CARD, type ApprovalView } from './approval-view.js';
import { staleClickText } from './card-words.js';
import { storedCallText } from './stored-call-text.js';
import type { ThreadPresenter } from './thread-presenter.js';

/**
 * What a clicker reads when the click could not be recorded.
 * @internal
 */
export const CLICK_NOT_RECORDED =
  'I could not record that answer: the bot cannot reach its store right now. Click again in a moment.';

/** Where a click came from, as the platform knows it (never from what the click says of itself alone). */
export interface ClickPlace {
  /** The tool call whose full view (Slack's modal, Discord's Show all message, the playground's expanded view) was clicked; undefined for a card. */
  fullViewOf?: string;
  /** Whether this platform's card holds every character of the call (its own measure). */
  cardHoldsAll(call: CallText, view: ApprovalView): boolean;
  /** Whether the full view holds every character (Slack's modal has a size); always, when not given. */
  fullViewHoldsAll?(call: CallText): boolean;
}

export async function answerPromptClick(
  core: Pick<Core, 'manager'>,
  presenterFor: (session: SessionRecord) => ThreadPresenter,
  click: { item: string; choice: string; userId: string },
  say: (text: string) => Promise<void>,
  place: ClickPlace,
): Promise<void> {
  const refusal = await placeRefusal(core, presenterFor, click, place);
  if (refusal) return say(refusal);
  let result: Awaited<ReturnType<typeof core.manager.resolve>>;
  try {
    result = await core.manager.resolve(click.item, { choice: click.choice }, click.userId);
  } catch (error) {
    // The store (or, with several instances, Redis) could not be reached: nothing was
    // recorded, and the platform will not send the click again. The clicker is told, then
    // the connector logs the failure.
    await say(CLICK_NOT_RECORDED).catch(() => undefined);
    throw error;
  }
  if (result.ok) {
    const record = await core.manager.records.session(result.item.sessionId);
    if (record) await presenterFor(record).onDecision(result.item, click.userId, click.choice);
    return;
  }
  switch (result.reason) {
    case 'refused':
      return say(result.message);
    case 'already_resolved':
      // Told what became of the call and who decided it; the card is left as it is.
      return say(result.item ? staleClickText(result.item) : 'This was already answered.');
    case 'unknown_item':
      return say('This prompt no longer exists (the thread may have been forgotten).');
    case 'not_a_choice':
    case 'invalid_choice':
      return say('That answer is not one this prompt offers.');
  }
}

/** Why the click's place does not offer its choice, or undefined when it does (or there is no call text to judge). */
async function placeRefusal(
  core: Pick<Core, 'manager'>,
  presenterFor: (session: SessionRecord) => ThreadPresenter,
  click: { item: string; choice: string },
  place: ClickPlace,
): Promise<string | undefined> {
  const { records } = core.manager;
  const item = await records.prompt(click.item);
  if (!item || item.kind === 'question' || item.state !== 'pending') return undefined;
  const record = await records.session(item.sessionId);
  if (!record) return undefined;
  const call =
    presenterFor(record).fullTextOf(item.toolCallId) ??
    (await storedCallText(records, item.sessionId, item.toolCallId));
  if (!call) return undefined;
  const view = approvalView(call.parts, item.command);
  const claimed = place.fullViewOf !== undefined && place.fullViewOf === item.toolCallId;
  const fullView = claimed && (place.fullViewHoldsAll?.(call) ?? true);
  const refusal = choiceRefusal(click.choice, view, { cardHoldsAll: place.cardHoldsAll(call, view), fullView });
  // From a full view that could show only part of it: no view here shows it all.
  if (refusal === NOT_ALL_ON_CARD && claimed)
    return 'This call is too long to be shown in full here, so it cannot be approved here: deny it, or reply in the thread to ask for something smaller.';
  return refusal;
}
