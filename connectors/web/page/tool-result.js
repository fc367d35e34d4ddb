// A tool's result on its card: its start, readable and wrapped (the server made it readable:
// result-view.ts), and a "Full result" toggle that asks the bot for the whole result, as the
// model got it, the first time it is opened (POST /api/tool-result, with the token). The page
// does not keep every result twice; a result is fetched only when someone wants to read it.
/* global document, fetch */
import { withToken } from './access-token.js';

/** @typedef {{ text: string, json: boolean } | { message: string }} FullResult */
/** @typedef {(messageId: string) => Promise<FullResult>} LoadResult */

/**
 * The result's part of a card.
 * @param {string} result the readable start
 * @param {string} messageId the card's message
 * @param {LoadResult} load
 * @returns {HTMLElement}
 */
export function resultElement(result, messageId, load) {
  const section = node('div', 'part');
  section.append(node('div', 'part-label', 'Result'), node('pre', 'result', result));
  const details = /** @type {HTMLDetailsElement} */ (node('details', 'result-full'));
  const summary = node('summary', '', 'Full result');
  const body = node('pre', 'result-text', 'Loading…');
  details.append(summary, body);
  let asked = false;
  details.addEventListener('toggle', () => {
    if (!details.open || asked) return;
    asked = true;
    void load(messageId).then((answer) => {
      if ('message' in answer) {
        body.textContent = answer.message;
        body.classList.add('failed');
        asked = false;
        return;
      }
      body.textContent = answer.text;
      summary.textContent = answer.json ? 'Full result (JSON)' : 'Full result';
    });
  });
  section.append(details);
  return section;
}

/**
 * Ask the bot for a card's whole result.
 * @param {string} token
 * @param {string} thread
 * @param {string} message
 * @returns {Promise<FullResult>}
 */
export async function fetchToolResult(token, thread, message) {
  try {
    const response = await fetch('/api/tool-result', {
      method: 'POST',
      headers: withToken(token, { 'content-type': 'application/json' }),
      body: JSON.stringify({ thread, message }),
    });
    const answer = /** @type {{ ok: boolean, message?: string, text?: string, json?: boolean }} */ (
      parseJson(await response.text())
    );
    if (answer.ok && typeof answer.text === 'string') return { text: answer.text, json: answer.json === true };
    return { message: answer.message ?? `The bot could not show the result (${response.status}).` };
  } catch {
    return { message: 'Could not reach the bot: is the playground still running?' };
  }
}

/**
 * @param {string} tag
 * @param {string} className
 * @param {string} [text]
 * @returns {HTMLElement}
 */
function node(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseJson(text) {
  return JSON.parse(text);
}
