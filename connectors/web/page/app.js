// The playground page: a channel on the left (each message a thread's root, with its reply
// count), the open thread on the right. It draws what the live stream says (a snapshot first,
// then every change) and sends what the person does: a message, a reply, a click, 🛑, Retry.
//
// The access token comes in the printed address's fragment and is held by this tab alone
// (access-token.js); every request sends it in a header, the live stream too (live-stream.js).
// What the page shows of the threads, and which one is open (the URL's hash), is page-view.js.
//
// Private answers ("only visible to you") are the page's alone (private-answers.js). The
// thread's status line says what the bot is doing or waiting for (thread-status.js).
//
// Files: the composers (composer.js) upload what is attached when the person sends, and the
// message carries the upload ids; a file the bot posted is fetched with the token and saved
// (file-transfer.js).
/* global window, document, fetch, File, HTMLAnchorElement, HTMLButtonElement, CustomEvent */
import { forgetToken, reloadOnNewToken, takeToken, withToken } from './access-token.js';
import { downWords, LiveStream } from './live-stream.js';
import { composer, keepDropsOnPage } from './composer.js';
import { downloadFile, uploadFile } from './file-transfer.js';
import { feedbackActions } from './feedback-buttons.js';
import { openFullView } from './full-view.js';
import { fetchToolResult } from './tool-result.js';
import { PrivateAnswers } from './private-answers.js';
import { openThreadId, pageView } from './page-view.js';

/** @typedef {import('./render.js').PageThread} PageThread */
/** @typedef {import('./render.js').PageMessage} PageMessage */
/** @typedef {import('./render.js').Person} Person */
/** @typedef {import('./render.js').Actions} Actions */

const token = takeToken();

/** @type {Map<string, PageThread>} */
const threads = new Map();
/** @type {{ user: Person, bot: Person }} */
const people = { user: { id: 'local', name: 'you' }, bot: { id: 'bot', name: 'bot' } };
/** MAX_FILE_BYTES, from the snapshot: a larger file is refused here before it is uploaded. */
let maxFileBytes = Infinity;

const channelList = byId('channel-messages');
const threadList = byId('thread-messages');
const connection = byId('connection');
const stopButton = /** @type {HTMLButtonElement} */ (byId('thread-stop'));
/** A mention this page just sent: its thread opens as soon as the bot says it exists, before the bot answers. */
let mentionSent = '';
/** Private answers, by where they were shown. Gone on reload. */
const whispers = new PrivateAnswers(channelList, threadList, () => people.bot);

/** @type {Actions} */
const actions = {
  click: (itemId, choice, button) => {
    const row = button.parentElement;
    const buttons = row ? [...row.querySelectorAll('button')] : [button];
    for (const other of buttons) other.disabled = true;
    void send('/api/click', { item: itemId, choice }).then((ok) => {
      if (!ok) for (const other of buttons) other.disabled = false;
    });
  },
  showAll: (itemId, button) => {
    button.disabled = true;
    const shown = openFullView(token, itemId, { send, whisper: (text) => showWhisper(text, openThreadId()) });
    void shown.finally(() => {
      button.disabled = false;
    });
  },
  noteAction: (messageId, button) => {
    const thread = openThreadId();
    if (!thread) return;
    button.disabled = true;
    void send('/api/note-action', { thread, message: messageId }).then((ok) => {
      if (!ok) button.disabled = false;
    });
  },
  loadResult: (messageId) => fetchToolResult(token, openThreadId() ?? '', messageId),
  openThread: (threadId) => openThread(threadId),
  download: (file, link) => void download(file, link),
  ...feedbackActions((path, body) => send(path, body)),
};

const view = pageView({
  threads,
  people,
  actions,
  whispers,
  elements: { channelList, threadPane: byId('thread-pane'), threadList, statusLine: byId('thread-status'), stopButton },
});
const { drawChannel, drawChannelItem, drawThread, drawMessage, drawStatus, showWhisper, openThread } = view;

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found;
}

// ---- the live stream ------------------------------------------------------------------

/**
 * Listen to one kind of event on the stream, its JSON data handed over parsed.
 * @template T
 * @param {LiveStream} stream
 * @param {string} name
 * @param {(data: T) => void} handle
 */
function on(stream, name, handle) {
  stream.addEventListener(name, (event) => {
    const text = /** @type {MessageEvent<string>} */ (event).data;
    handle(/** @type {T} */ (parseJson(text)));
  });
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseJson(text) {
  return JSON.parse(text);
}

function connect() {
  if (!token) {
    setConnection(
      'no-token',
      "This page needs the playground's access token: open the address the playground printed in its terminal (it ends in #token=…).",
    );
    return;
  }
  const stream = new LiveStream('/api/events', token);
  stream.addEventListener('open', () => setConnection('live', 'live'));
  stream.addEventListener('down', (event) => {
    const down = /** @type {CustomEvent<import('./live-stream.js').StreamDown>} */ (event).detail;
    // Refused: the playground answers here, but not to this token (it was restarted and made a new one).
    if (down.reason === 'refused') forgetToken();
    const { state, text } = downWords(down);
    setConnection(state, text);
  });
  on(
    stream,
    'snapshot',
    /** @param {{ user: Person, bot: Person, threads: PageThread[], demo: boolean, maxFileBytes: number }} snapshot */ (
      snapshot,
    ) => {
      maxFileBytes = snapshot.maxFileBytes;
      people.user = snapshot.user;
      people.bot = snapshot.bot;
      byId('demo-banner').hidden = !snapshot.demo;
      threads.clear();
      for (const thread of snapshot.threads) threads.set(thread.id, thread);
      drawChannel();
      drawThread();
    },
  );
  on(
    stream,
    'thread',
    /** @param {{ thread: PageThread }} data */ ({ thread }) => {
      threads.set(thread.id, thread);
      drawChannelItem(thread);
      const root = thread.messages[0];
      if (mentionSent && root?.kind === 'input' && root.author.id === people.user.id && root.text === mentionSent) {
        mentionSent = '';
        openThread(thread.id);
      } else if (thread.id === openThreadId()) drawThread();
    },
  );
  on(
    stream,
    'message',
    /** @param {{ threadId: string, message: PageMessage }} data */ ({ threadId, message }) => {
      const thread = threads.get(threadId);
      if (!thread) return;
      const index = thread.messages.findIndex((known) => known.id === message.id);
      if (index >= 0) thread.messages[index] = message;
      else thread.messages.push(message);
      drawChannelItem(thread);
      if (threadId === openThreadId()) {
        drawMessage(message);
        drawStatus(thread);
      }
    },
  );
  on(
    stream,
    'append',
    /** @param {{ threadId: string, messageId: string, text: string }} data */ ({ threadId, messageId, text }) => {
      const message = threads.get(threadId)?.messages.find((known) => known.id === messageId);
      if (message?.kind !== 'answer') return;
      message.text += text;
      if (threadId === openThreadId()) view.drawAnswerText(message);
    },
  );
  on(
    stream,
    'status',
    /** @param {{ threadId: string, status: 'thinking' | 'idle', waiting: number | null }} update */ (update) => {
      const thread = threads.get(update.threadId);
      if (!thread) return;
      thread.status = update.status;
      thread.waiting = update.waiting;
      drawChannelItem(thread);
      if (thread.id === openThreadId()) drawStatus(thread);
    },
  );
  on(
    stream,
    'removed',
    /** @param {{ threadId: string }} data */ ({ threadId }) => {
      threads.delete(threadId);
      view.dropThread(threadId);
    },
  );
  on(
    stream,
    'whisper',
    /** @param {{ threadId?: string, text: string, at: number }} whisper */ (whisper) => {
      showWhisper(whisper.text, whisper.threadId, whisper.at);
    },
  );
  stream.start();
}

/**
 * @param {string} state
 * @param {string} text
 */
function setConnection(state, text) {
  connection.dataset.state = state;
  connection.textContent = text;
}

// ---- what the person does ----------------------------------------------------------------

/**
 * Send one action; a refusal is shown to this person alone. Resolves with whether it was done.
 * @param {string} path
 * @param {{ thread?: string, [field: string]: unknown }} body
 * @returns {Promise<boolean>}
 */
async function send(path, body) {
  try {
    const response = await fetch(path, {
      method: 'POST',
      headers: withToken(token, { 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    const answer = /** @type {{ ok: boolean, message?: string, thread?: string, status?: string, notice?: string }} */ (
      parseJson(await response.text())
    );
    if (!answer.ok) showWhisper(answer.message ?? `The bot refused (${response.status}).`, body.thread);
    // Files of the message past a cap: said to this person alone, like a refusal.
    if (answer.ok && answer.notice) showWhisper(answer.notice, body.thread ?? answer.thread);
    else if (
      path === '/api/messages' &&
      !body.thread &&
      answer.thread &&
      answer.status !== 'posted' &&
      answer.thread !== openThreadId()
    )
      openThread(answer.thread);
    return answer.ok;
  } catch {
    showWhisper('Could not reach the bot: is the playground still running?', body.thread);
    return false;
  }
}

/**
 * Upload one file for a message; resolves with its upload id, or undefined after showing why not.
 * @param {File} file
 * @param {string | undefined} thread
 * @returns {Promise<string | undefined>}
 */
async function upload(file, thread) {
  const result = await uploadFile(token, file);
  if ('id' in result) return result.id;
  showWhisper(result.message, thread);
  return undefined;
}

/**
 * Download a file the bot posted (file-transfer.js); a refusal is shown to this person alone.
 * @param {import('./render.js').ShownFile} file
 * @param {HTMLAnchorElement} link
 */
async function download(file, link) {
  const problem = await downloadFile(token, file.name, link.pathname);
  if (problem) showWhisper(problem, openThreadId());
}

/** @type {import('./composer.js').ComposerActions} */
const composing = {
  maxFileBytes: () => maxFileBytes,
  whisper: (text, thread) => showWhisper(text, thread),
  upload,
  post: async (text, thread, files) => {
    if (!thread && /@bot\b/i.test(text)) mentionSent = text;
    await send('/api/messages', { text, ...(thread ? { thread } : {}), ...(files.length > 0 ? { files } : {}) });
  },
};

composer(byId('channel-composer'), byId('channel-pane'), () => undefined, composing);
composer(byId('thread-composer'), byId('thread-pane'), openThreadId, composing);
keepDropsOnPage();
stopButton.addEventListener('click', () => {
  const thread = openThreadId();
  if (thread) void send('/api/stop', { thread });
});
byId('thread-close').addEventListener('click', () => openThread(undefined));
window.addEventListener('hashchange', () => drawThread());
reloadOnNewToken();
connect();
