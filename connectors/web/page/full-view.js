// Show all: the expanded view of a call too long for its card, as a modal dialog. The bot is
// asked for every character of the call (POST /api/full-view), and the dialog's buttons answer
// with the proof it handed out with that view: the bot takes an approval of such a call only
// from there, never from the card, which showed a glimpse.
/* global document, fetch */
import { withToken } from './access-token.js';
import { element, labelled } from './render.js';

/** @typedef {import('./render.js').FullView} FullView */

/**
 * Ask the bot for every character of the item's call and show it in a dialog whose buttons
 * answer with the proof the bot handed out with it.
 * @param {string} token
 * @param {string} itemId
 * @param {{ send: (path: string, body: { [field: string]: unknown }) => Promise<boolean>, whisper: (text: string) => void }} page
 */
export async function openFullView(token, itemId, page) {
  const { send, whisper } = page;
  try {
    const response = await fetch('/api/full-view', {
      method: 'POST',
      headers: withToken(token, { 'content-type': 'application/json' }),
      body: JSON.stringify({ item: itemId }),
    });
    const answer = /** @type {{ ok: boolean, message?: string, view?: FullView, proof?: string }} */ (
      parseJson(await response.text())
    );
    const { view, proof } = answer;
    if (!answer.ok || !view || !proof) {
      whisper(answer.message ?? `The bot refused (${response.status}).`);
      return;
    }
    const dialog = fullViewDialog(view, (choice, button) => {
      button.disabled = true;
      void send('/api/click', { item: itemId, choice, view: proof }).then((ok) => {
        if (ok) dialog.close();
        else button.disabled = false;
      });
    });
    document.body.append(dialog);
    dialog.showModal();
  } catch {
    whisper('Could not reach the bot: is the playground still running?');
  }
}

/**
 * The expanded view of a call, as a modal dialog: every character, its warnings, its buttons.
 * `decide` sends a button's choice (with the view's proof).
 * @param {FullView} view
 * @param {(choice: string, button: HTMLButtonElement) => void} decide
 * @returns {HTMLDialogElement}
 */
function fullViewDialog(view, decide) {
  const dialog = /** @type {HTMLDialogElement} */ (element('dialog', 'full-view'));
  const box = element('div', 'card');
  box.append(element('div', 'card-title', `${view.name}: every character of this call, as the tool would receive it`));
  for (const note of view.notes) box.append(element('div', 'context', note));
  for (const part of view.parts) box.append(labelled(part.label, element('pre', 'argument full', part.text)));
  const row = element('div', 'buttons');
  for (const choice of view.buttons) {
    const button = /** @type {HTMLButtonElement} */ (element('button', `btn btn-${choice.style}`, choice.label));
    button.type = 'button';
    button.dataset.choice = choice.choice;
    button.addEventListener('click', () => decide(choice.choice, button));
    row.append(button);
  }
  const close = /** @type {HTMLButtonElement} */ (element('button', 'btn btn-default', 'Close'));
  close.type = 'button';
  close.addEventListener('click', () => dialog.close());
  row.append(close);
  box.append(row);
  dialog.append(box);
  dialog.addEventListener('close', () => dialog.remove());
  return dialog;
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseJson(text) {
  return JSON.parse(text);
}
