// What the playground page shows of the threads it knows: the channel (each thread's root with
// its reply count and whether the bot works there), the open thread's messages, its status
// line and Stop, and the private answers placed by time among them. It owns no thread: app.js
// keeps them as the live stream reports them and asks for a drawing after each change.
//
// The open thread is the one named in the URL's hash, so a reload reopens it.
/* global window, document, location, history, CSS, HTMLButtonElement */
import { element, fillAnswer, messageElement } from './render.js';
import { threadStatus } from './thread-status.js';

/** @typedef {import('./render.js').PageThread} PageThread */
/** @typedef {import('./render.js').PageMessage} PageMessage */
/** @typedef {import('./render.js').Person} Person */
/** @typedef {import('./render.js').Actions} Actions */
/** @typedef {import('./private-answers.js').PrivateAnswers} PrivateAnswers */

/**
 * @typedef {object} PageElements
 * @property {HTMLElement} channelList
 * @property {HTMLElement} threadPane
 * @property {HTMLElement} threadList
 * @property {HTMLElement} statusLine
 * @property {HTMLButtonElement} stopButton
 */

/** @returns {string | undefined} the thread the URL's hash opens */
export function openThreadId() {
  const match = /^#thread=(.+)$/.exec(location.hash);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}

/** @param {HTMLElement} list */
function nearBottom(list) {
  return list.scrollHeight - list.scrollTop - list.clientHeight < 80;
}

/** @param {HTMLElement} list */
function scrollDown(list) {
  list.scrollTop = list.scrollHeight;
}

/**
 * The page's drawing, over the threads app.js keeps.
 * @param {{ threads: Map<string, PageThread>, people: { user: Person, bot: Person }, actions: Actions, whispers: PrivateAnswers, elements: PageElements }} page
 */
export function pageView({ threads, people, actions, whispers, elements }) {
  const { channelList, threadPane, threadList, statusLine, stopButton } = elements;

  function drawChannel() {
    channelList.replaceChildren();
    for (const thread of threads.values()) drawChannelItem(thread);
    whispers.redraw('');
    scrollDown(channelList);
  }

  /**
   * A thread's root in the channel, with how many replies it has and whether the bot works in it.
   * @param {PageThread} thread
   */
  function drawChannelItem(thread) {
    const root = thread.messages[0];
    if (!root) return;
    const item = messageElement(root, { bot: people.bot, actions });
    item.dataset.thread = thread.id;
    const replies = thread.messages.length - 1;
    if (replies > 0 || thread.sessionId) {
      const link = /** @type {HTMLButtonElement} */ (
        element('button', 'replies', replies === 1 ? '1 reply' : `${replies} replies`)
      );
      link.type = 'button';
      link.addEventListener('click', () => openThread(thread.id));
      const { asking } = threadStatus(thread);
      if (asking) link.append(element('span', 'working', ` · waiting for your ${asking}`));
      else if (thread.status === 'thinking') link.append(element('span', 'working', ' · bot is working…'));
      item.querySelector('.msg-body')?.append(link);
    }
    if (thread.id === openThreadId()) item.classList.add('selected');
    item.dataset.at = String(root.at);
    const known = channelList.querySelector(`li[data-thread="${CSS.escape(thread.id)}"]`);
    if (known) known.replaceWith(item);
    else {
      const follow = nearBottom(channelList);
      channelList.insertBefore(item, whispers.laterThan(channelList, root.at));
      if (follow) scrollDown(channelList);
    }
  }

  /**
   * A thread the live stream says is gone: out of the channel (and closed if open). What the
   * bot said privately there (the /forget that removed it says so) stays in sight.
   * @param {string} threadId
   */
  function dropThread(threadId) {
    channelList.querySelector(`li[data-thread="${CSS.escape(threadId)}"]`)?.remove();
    if (threadId === openThreadId()) openThread(undefined);
    whispers.moveToChannel(threadId);
    scrollDown(channelList);
  }

  function drawThread() {
    const thread = threads.get(openThreadId() ?? '');
    threadPane.hidden = !thread;
    document.body.classList.toggle('with-thread', Boolean(thread));
    for (const item of channelList.querySelectorAll('li.selected')) item.classList.remove('selected');
    if (!thread) return;
    channelList.querySelector(`li[data-thread="${CSS.escape(thread.id)}"]`)?.classList.add('selected');
    threadList.replaceChildren(...thread.messages.map((message) => threadItem(message)));
    whispers.redraw(thread.id);
    drawStatus(thread);
    scrollDown(threadList);
  }

  /**
   * A message of the open thread as a list item, with its time for placing private answers.
   * @param {PageMessage} message
   * @returns {HTMLElement}
   */
  function threadItem(message) {
    const item = messageElement(message, { bot: people.bot, actions });
    item.dataset.at = String(message.at);
    return item;
  }

  /**
   * One message of the open thread, drawn again in place or added after the others (and after
   * the private answers that came before it).
   * @param {PageMessage} message
   */
  function drawMessage(message) {
    const follow = nearBottom(threadList);
    const item = threadItem(message);
    const known = threadList.querySelector(`li[data-id="${CSS.escape(message.id)}"]`);
    if (known) known.replaceWith(item);
    else threadList.insertBefore(item, whispers.laterThan(threadList, message.at));
    if (follow) scrollDown(threadList);
  }

  /**
   * An answer of the open thread that grew: its text drawn again in place, the list kept at
   * the bottom if it was there.
   * @param {Extract<PageMessage, { kind: 'answer' }>} message
   */
  function drawAnswerText(message) {
    const body = threadList.querySelector(`li[data-id="${CSS.escape(message.id)}"] .msg-body`);
    if (body instanceof window.HTMLElement) {
      const follow = nearBottom(threadList);
      fillAnswer(body, message);
      if (follow) scrollDown(threadList);
    } else drawMessage(message);
  }

  /**
   * The thread's status line (thread-status.js), and Stop: enabled only while there is
   * something to stop.
   * @param {PageThread} thread
   */
  function drawStatus(thread) {
    const status = threadStatus(thread);
    statusLine.textContent = status.text;
    statusLine.dataset.status = thread.status;
    if (status.asking) statusLine.dataset.asking = status.asking;
    else delete statusLine.dataset.asking;
    stopButton.disabled = !status.canStop;
  }

  /**
   * A private answer: in the thread it concerns when that is open, else in the channel; placed
   * by its time (the server's clock for the bot's, this page's for a refusal: the same machine).
   * @param {string} text
   * @param {string} [threadId]
   * @param {number} [at]
   */
  function showWhisper(text, threadId, at = Date.now()) {
    scrollDown(whispers.show(text, threadId, openThreadId(), at));
  }

  /** @param {string | undefined} threadId */
  function openThread(threadId) {
    history.replaceState(
      null,
      '',
      `${location.pathname}${location.search}${threadId ? `#thread=${encodeURIComponent(threadId)}` : ''}`,
    );
    drawThread();
  }

  return {
    drawChannel,
    drawChannelItem,
    dropThread,
    drawThread,
    drawMessage,
    drawAnswerText,
    drawStatus,
    showWhisper,
    openThread,
  };
}
