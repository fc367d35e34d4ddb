// What the open thread's status line says, and whether Stop has anything to stop: the bot
// waits for a model slot, a card waits for the person (its buttons are out: the turn is
// paused until they answer, so the line says so rather than nothing), or the bot works.
/** @typedef {import('./render.js').PageThread} PageThread */

/**
 * @param {PageThread} thread
 * @returns {{ text: string, asking: 'approval' | 'answer' | undefined, canStop: boolean }}
 */
export function threadStatus(thread) {
  const card = thread.messages.find(
    (message) => message.kind === 'card' && message.card.itemId !== undefined && message.card.buttons.length > 0,
  );
  const asking = card?.kind === 'card' ? (card.card.phase === 'awaiting_answer' ? 'answer' : 'approval') : undefined;
  const text =
    thread.waiting !== null
      ? `bot is waiting for a free model slot (${thread.waiting} ahead)…`
      : asking === 'answer'
        ? 'Waiting for your answer on the card above…'
        : asking === 'approval'
          ? 'Waiting for your approval on the card above…'
          : thread.status === 'thinking'
            ? 'bot is working…'
            : '';
  // A running turn, or a card waiting for an answer (a stop closes it).
  const canStop = Boolean(thread.sessionId) && (thread.status === 'thinking' || asking !== undefined);
  return { text, asking, canStop };
}
