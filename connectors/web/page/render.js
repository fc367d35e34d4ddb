// How each message of a thread looks: a person's message with its marks, an answer segment,
// a tool card with its buttons, a note with Retry / Continue, a private answer; compact
// mode's checklist (progress-view.js), a result's "Full result" toggle (tool-result.js) and 👍 / 👎 under a final answer (feedback-buttons.js). Every string
// goes in as text (textContent, or markdown.js, which builds text nodes): nothing the model,
// a tool or a person wrote is ever parsed as HTML.
/* global document */
import { appendInline, renderMarkdown } from './markdown.js';
import { progressElement } from './progress-view.js';
import { feedbackRow } from './feedback-buttons.js';
import { resultElement } from './tool-result.js';

/** @typedef {{ id: string, name: string }} Person */
/** @typedef {{ label: string, choice: string, style: 'primary' | 'danger' | 'default' }} CardButton */
/**
 * @typedef {{ name: string, phase?: string, icon: string, summary: string, status: string, notes: string[],
 *   question?: string, plan?: string, parts: { label: string, text: string, omitted?: number, tail?: string }[], result?: string,
 *   itemId?: string, buttons: CardButton[], showAll?: boolean }} CardModel
 */
/**
 * The expanded view of a call (the server's answer to Show all): every character, its warnings,
 * and the buttons to decide it.
 * @typedef {{ name: string, notes: string[], parts: { label: string, text: string }[], itemId: string, buttons: CardButton[] }} FullView
 */
/** @typedef {{ id: string, name: string, size: number, mimeType?: string }} ShownFile */
/**
 * @typedef {{ kind: 'input', id: string, at: number, author: Person, text: string, marks: string[], files?: ShownFile[] }
 *   | { kind: 'file', id: string, at: number, file: ShownFile, comment?: string }
 *   | { kind: 'answer', id: string, at: number, text: string, footer?: string, streaming: boolean, feedback?: import('./feedback-buttons.js').FeedbackMark }
 *   | { kind: 'progress', id: string, at: number, steps: import('./progress-view.js').ProgressStep[], footer?: string, feedback?: import('./feedback-buttons.js').FeedbackMark }
 *   | { kind: 'card', id: string, at: number, toolCallId: string, card: CardModel }
 *   | { kind: 'note', id: string, at: number, text: string, action?: { kind: string, label: string }, done?: string }
 *   | { kind: 'bot', id: string, at: number, text: string }} PageMessage
 */
/**
 * @typedef {{ id: string, sessionId?: string, createdAt: number, status: 'thinking' | 'idle',
 *   waiting: number | null, messages: PageMessage[] }} PageThread
 */
/**
 * What a message's buttons do (app.js sends them to the bot).
 * @typedef {{ click: (itemId: string, choice: string, button: HTMLButtonElement) => void,
 *   showAll: (itemId: string, button: HTMLButtonElement) => void,
 *   noteAction: (messageId: string, button: HTMLButtonElement) => void,
 *   loadResult: import('./tool-result.js').LoadResult,
 *   download: (file: ShownFile, link: HTMLAnchorElement) => void,
 *   openThread?: (threadId: string) => void } & import('./feedback-buttons.js').FeedbackActions} Actions
 */

const MARKS = /** @type {Record<string, string>} */ ({ received: '👀', taken: '✅', dropped: '❌' });
const MARK_TITLES = /** @type {Record<string, string>} */ ({
  received: 'The bot got it',
  taken: 'It steered the running turn, or answered a prompt',
  dropped: 'It will not be acted on',
});

/**
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElement}
 */
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * The frame every message shares: avatar, name, time; the body is the caller's.
 * @param {PageMessage} message
 * @param {Person} author
 * @param {boolean} isBot
 * @returns {{ item: HTMLElement, body: HTMLElement }}
 */
function frame(message, author, isBot) {
  const item = element('li', `msg msg-${message.kind}${isBot ? ' from-bot' : ''}`);
  item.dataset.id = message.id;
  item.dataset.kind = message.kind;
  const avatar = element('div', 'avatar', author.name.slice(0, 1).toUpperCase());
  const main = element('div', 'msg-main');
  const head = element('div', 'msg-head');
  head.append(element('span', 'author', author.name));
  if (isBot) head.append(element('span', 'badge', 'APP'));
  const time = element(
    'time',
    'time',
    new Date(message.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }),
  );
  time.setAttribute('datetime', new Date(message.at).toISOString());
  head.append(time);
  const body = element('div', 'msg-body');
  main.append(head, body);
  item.append(avatar, main);
  return { item, body };
}

/**
 * One message as a list item.
 * @param {PageMessage} message
 * @param {{ bot: Person, actions: Actions }} context
 * @returns {HTMLElement}
 */
export function messageElement(message, context) {
  switch (message.kind) {
    case 'input': {
      const { item, body } = frame(message, message.author, false);
      if (message.text) body.append(element('div', 'text plain', message.text));
      if (message.files && message.files.length > 0) {
        const files = element('div', 'files');
        for (const file of message.files) files.append(fileChip(file));
        body.append(files);
      }
      if (message.marks.length > 0) {
        const marks = element('div', 'marks');
        for (const mark of message.marks) {
          const pill = element('span', `mark mark-${mark}`, MARKS[mark] ?? mark);
          pill.title = MARK_TITLES[mark] ?? mark;
          marks.append(pill);
        }
        body.append(marks);
      }
      return item;
    }
    case 'answer': {
      const { item, body } = frame(message, context.bot, true);
      fillAnswer(body, message);
      if (message.feedback) body.append(feedbackRow(message.id, message.feedback, context.actions));
      return item;
    }
    case 'progress': {
      const { item, body } = frame(message, context.bot, true);
      body.append(progressElement(message.steps));
      if (message.footer) body.append(element('div', 'context footer', message.footer));
      if (message.feedback) body.append(feedbackRow(message.id, message.feedback, context.actions));
      return item;
    }
    case 'card': {
      const { item, body } = frame(message, context.bot, true);
      body.append(cardElement(message.card, message.id, context.actions));
      return item;
    }
    case 'note': {
      const { item, body } = frame(message, context.bot, true);
      const text = element('div', 'text note-text');
      appendInline(text, message.text);
      body.append(text);
      if (message.action) {
        const button = /** @type {HTMLButtonElement} */ (element('button', 'btn btn-primary', message.action.label));
        button.type = 'button';
        button.dataset.action = message.action.kind;
        button.addEventListener('click', () => context.actions.noteAction(message.id, button));
        const row = element('div', 'buttons');
        row.append(button);
        body.append(row);
      }
      if (message.done) body.append(element('div', 'context', message.done));
      return item;
    }
    case 'file': {
      // A file the bot posted: its comment, and a link the page downloads with its token (app.js).
      const { item, body } = frame(message, context.bot, true);
      if (message.comment) body.append(element('div', 'text plain', message.comment));
      const chip = fileChip(message.file);
      const link = /** @type {HTMLAnchorElement} */ (element('a', 'file-link'));
      link.href = `/api/files/${encodeURIComponent(message.file.id)}`;
      link.download = message.file.name;
      link.title = `Download ${message.file.name}`;
      const name = chip.querySelector('.name');
      if (name) {
        name.replaceWith(link);
        link.append(name);
      }
      link.addEventListener('click', (event) => {
        event.preventDefault();
        context.actions.download(message.file, link);
      });
      const files = element('div', 'files');
      files.append(chip);
      body.append(files);
      return item;
    }
    case 'bot': {
      const { item, body } = frame(message, context.bot, true);
      const text = element('div', 'text');
      text.append(renderMarkdown(message.text));
      body.append(text);
      return item;
    }
  }
}

/**
 * A file as a chip: 📄 its name (as text), its size.
 * @param {{ name: string, size: number }} file
 * @returns {HTMLElement}
 */
export function fileChip(file) {
  const chip = element('span', 'file-chip');
  chip.append(
    element('span', 'icon', '📄'),
    element('span', 'name', file.name),
    element('span', 'size', sizeText(file.size)),
  );
  chip.title = file.name;
  return chip;
}

/**
 * A byte count as the bot writes one (src/files/sizes.ts): base 1024, one decimal.
 * @param {number} bytes
 * @returns {string}
 */
export function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 100 ? Math.round(value) : Math.round(value * 10) / 10} ${units[unit]}`;
}

/**
 * An answer's text (markdown), its caret while it streams, its usage footer.
 * @param {HTMLElement} body
 * @param {{ text: string, footer?: string, streaming: boolean }} answer
 */
export function fillAnswer(body, answer) {
  body.replaceChildren();
  const text = element('div', 'text answer-text');
  text.append(renderMarkdown(answer.text));
  if (answer.streaming) text.append(element('span', 'caret'));
  body.append(text);
  if (answer.footer) body.append(element('div', 'context footer', answer.footer));
}

/**
 * A tool call's card: name and arguments, why it asks, every character it covers, its
 * result, its status, and, while a prompt waits, the buttons.
 * @param {CardModel} card
 * @param {string} messageId
 * @param {Actions} actions
 * @returns {HTMLElement}
 */
function cardElement(card, messageId, actions) {
  const box = element('div', 'card');
  if (card.phase) box.dataset.phase = card.phase;
  const title = element('div', 'card-title');
  title.append(element('span', 'icon', card.icon), element('strong', 'tool', card.name));
  if (card.summary) title.append(element('code', 'summary', card.summary));
  box.append(title);
  for (const note of card.notes) box.append(element('div', 'context', note));
  if (card.question) box.append(labelled('Question', element('div', 'text plain', card.question)));
  if (card.plan) box.append(labelled('Plan', element('div', 'text plain', card.plan)));
  for (const part of card.parts) {
    if (part.omitted === undefined) {
      box.append(labelled(part.label, element('pre', 'argument', part.text)));
      continue;
    }
    // A part too long for the card: its start and its end, and how much lies between.
    const glimpse = element('div', 'glimpse');
    glimpse.append(
      element('pre', 'argument', part.text),
      element('div', 'context omitted', `… ${part.omitted.toLocaleString('en-US')} characters not shown here …`),
      element('pre', 'argument', part.tail ?? ''),
    );
    box.append(labelled(part.label, glimpse));
  }
  if (card.showAll)
    box.append(
      element(
        'div',
        'context',
        '🔍 Not all of it fits on this card: Show all to decide opens every character, with the approve buttons under it.',
      ),
    );
  if (card.result) box.append(resultElement(card.result, messageId, actions.loadResult));
  box.append(element('div', 'context status', card.status));
  if (card.itemId && card.buttons.length > 0) {
    const itemId = card.itemId;
    const row = element('div', 'buttons');
    for (const choice of card.buttons) {
      const button = /** @type {HTMLButtonElement} */ (element('button', `btn btn-${choice.style}`, choice.label));
      button.type = 'button';
      button.dataset.choice = choice.choice;
      // Show all is not an answer: it opens the expanded view, where the approve buttons are.
      button.addEventListener('click', () =>
        choice.choice === 'show_all' ? actions.showAll(itemId, button) : actions.click(itemId, choice.choice, button),
      );
      row.append(button);
    }
    box.append(row);
  }
  return box;
}

/**
 * @param {string} label
 * @param {HTMLElement} content
 * @returns {HTMLElement}
 */
export function labelled(label, content) {
  const section = element('div', 'part');
  section.append(element('div', 'part-label', label), content);
  return section;
}

/**
 * A private answer, for the person at the page only; gone on reload, as an ephemeral message.
 * @param {string} text
 * @param {Person} bot
 * @param {number} at
 * @returns {HTMLElement}
 */
export function whisperElement(text, bot, at) {
  const { item, body } = frame({ kind: 'bot', id: `whisper-${at}`, at, text }, bot, true);
  item.classList.add('whisper');
  item.dataset.kind = 'whisper';
  body.append(element('div', 'context', 'Only visible to you'));
  const content = element('div', 'text');
  content.append(renderMarkdown(text));
  body.append(content);
  return item;
}
