// 👍 / 👎 under a turn's final answer: two small buttons, the person's vote shown pressed, and
// after a 👎 an optional field for the reason. A click sends only the message's id and the
// vote (the bot finds the answer by the message); the bot's thanks arrive as a private answer,
// and the message is drawn again with the vote it recorded.
/* global document, HTMLButtonElement, HTMLInputElement */

/** @typedef {{ vote?: 'up' | 'down', reason?: boolean }} FeedbackMark */
/**
 * What the buttons do (app.js sends them with the page's token; a refusal is shown privately).
 * @typedef {{ vote: (messageId: string, value: 'up' | 'down', button: HTMLButtonElement) => void,
 *   giveReason: (messageId: string, reason: string, button: HTMLButtonElement) => void }} FeedbackActions
 */

/** The reason the bot keeps is at most this long (src/feedback/feedback-book.ts REASON_MAX). */
const REASON_MAX = 500;

/**
 * The actions, given the page's `send` (path, body → whether it was done).
 * @param {(path: string, body: Record<string, unknown>) => Promise<boolean>} send
 * @returns {FeedbackActions}
 */
export function feedbackActions(send) {
  return {
    vote: (messageId, value, button) => {
      const buttons = button.parentElement ? [...button.parentElement.querySelectorAll('button')] : [button];
      for (const other of buttons) other.disabled = true;
      void send('/api/feedback', { message: messageId, value }).finally(() => {
        for (const other of buttons) other.disabled = false;
      });
    },
    giveReason: (messageId, reason, button) => {
      button.disabled = true;
      void send('/api/feedback-reason', { message: messageId, reason }).then((ok) => {
        if (!ok) button.disabled = false;
      });
    },
  };
}

/**
 * @param {string} tag
 * @param {string} className
 * @param {string} [text]
 * @returns {HTMLElement}
 */
function node(tag, className, text) {
  const made = document.createElement(tag);
  made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

/**
 * The row under an answer that offers feedback.
 * @param {string} messageId
 * @param {FeedbackMark} mark
 * @param {FeedbackActions} actions
 * @returns {HTMLElement}
 */
export function feedbackRow(messageId, mark, actions) {
  const row = node('div', 'feedback');
  const votes = node('div', 'votes');
  for (const [value, face, label] of /** @type {const} */ ([
    ['up', '👍', 'Good answer'],
    ['down', '👎', 'Bad answer'],
  ])) {
    const button = /** @type {HTMLButtonElement} */ (
      node('button', `vote${mark.vote === value ? ' voted' : ''}`, face)
    );
    button.type = 'button';
    button.dataset.vote = value;
    button.title = label;
    button.setAttribute('aria-label', label);
    button.setAttribute('aria-pressed', String(mark.vote === value));
    button.addEventListener('click', () => actions.vote(messageId, value, button));
    votes.append(button);
  }
  row.append(votes);
  if (mark.vote === 'down' && mark.reason) row.append(node('span', 'context reason-sent', 'Reason sent. Thanks.'));
  else if (mark.vote === 'down') row.append(reasonForm(messageId, actions));
  return row;
}

/**
 * @param {string} messageId
 * @param {FeedbackActions} actions
 * @returns {HTMLElement}
 */
function reasonForm(messageId, actions) {
  const form = node('form', 'reason');
  const input = /** @type {HTMLInputElement} */ (node('input', 'reason-text'));
  input.name = 'reason';
  input.maxLength = REASON_MAX;
  input.placeholder = 'What was wrong? (optional)';
  input.setAttribute('aria-label', 'What was wrong with this answer (optional)');
  const send = /** @type {HTMLButtonElement} */ (node('button', 'btn btn-default', 'Send'));
  send.type = 'submit';
  form.append(input, send);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const reason = input.value.trim();
    if (reason) actions.giveReason(messageId, reason, send);
  });
  return form;
}
