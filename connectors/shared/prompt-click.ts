// A click on a prompt's button, the same on every platform: the session layer resolves it
// (who may answer is checked there); the card shows the decision; a refusal, a stale card
// or an unknown choice is told to the clicker alone (`say` is the platform's private answer).
import type { Core } from '../../src/core.js';
import type { SessionRecord } from '../../src/store/session-store.js';
import type { ThreadPresenter } from './thread-presenter.js';

/** What a clicker reads when the click could not be recorded. */
export const CLICK_NOT_RECORDED = 'I could not record that answer: the bot cannot reach its store right now. Click again in a moment.';

export async function answerPromptClick(
  core: Pick<Core, 'manager' | 'store'>,
  presenterFor: (session: SessionRecord) => ThreadPresenter,
  click: { item: string; choice: string; userId: string },
  say: (text: string) => Promise<void>,
): Promise<void> {
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
    const record = await core.store.getSession(result.item.sessionId);
    if (record) await presenterFor(record).onDecision(result.item, click.userId, click.choice);
    return;
  }
  switch (result.reason) {
    case 'refused':
      return say(result.message);
    case 'already_resolved':
      return say('This was already answered.');
    case 'unknown_item':
      return say('This prompt no longer exists (the thread may have been forgotten).');
    case 'not_a_choice':
    case 'invalid_choice':
      return say('That answer is not one this prompt offers.');
  }
}
