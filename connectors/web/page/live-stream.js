// The page's live stream (the server's GET /api/events, server-sent events), read with fetch
// rather than EventSource: EventSource cannot send a header, and the access token must travel
// in one (access-token.js), never in a cookie or the URL. Reading it ourselves also tells
// apart what EventSource lumps into one "error":
// - `refused` (401/403): the playground answers here but not to this token: it was restarted
//   and made a new one. Retrying cannot help; the page says where the new address is.
// - `moved` (any other answer that is not the stream): another program holds this address.
// - `unreachable` (no answer, or the stream ended): the playground is down or restarting;
//   it is tried again, a little later each time, up to RETRY_MAX_MS apart.
// Each event is dispatched as a MessageEvent of the event's name with its data as text.
/* global fetch, setTimeout, AbortController, TextDecoder, EventTarget, Event, MessageEvent, CustomEvent */
import { withToken } from './access-token.js';

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 4_000;

/** @typedef {{ reason: 'refused' | 'moved' | 'unreachable', failures: number }} StreamDown */

/**
 * After this many failed attempts in a row the page stops only saying "reconnecting…": the
 * playground may be down for good, or running at another address (a restart whose old port
 * was taken), which this page cannot learn.
 */
const FAILURES_BEFORE_ADVICE = 3;

/**
 * What the page's connection line says when the stream is down, and its state (for its colour).
 * @param {StreamDown} down
 * @returns {{ state: string, text: string }}
 */
export function downWords(down) {
  switch (down.reason) {
    case 'refused':
      return {
        state: 'restarted',
        text: 'The playground was restarted and has a new access token. Open the new address it printed in its terminal (…/#token=…).',
      };
    case 'moved':
      // Something answered at this address, but not with our live stream: another program took the port.
      return {
        state: 'moved',
        text: 'The playground no longer answers at this address: it was restarted at another one. Open the address it printed in its terminal.',
      };
    case 'unreachable':
      return {
        state: 'reconnecting',
        text:
          down.failures < FAILURES_BEFORE_ADVICE
            ? 'reconnecting…'
            : 'reconnecting… The playground is not running at this address. If you restarted it, open the address it printed in its terminal.',
      };
  }
}

export class LiveStream extends EventTarget {
  /**
   * @param {string} path
   * @param {string} token
   */
  constructor(path, token) {
    super();
    this.path = path;
    this.token = token;
    this.failures = 0;
    this.controller = new AbortController();
  }

  /** Connect, and keep connecting while the failure is one a retry can mend. */
  start() {
    void this.connect();
  }

  async connect() {
    /** @type {StreamDown['reason']} */
    let reason = 'unreachable';
    try {
      const response = await fetch(this.path, {
        headers: withToken(this.token, { accept: 'text/event-stream' }),
        cache: 'no-store',
        signal: this.controller.signal,
      });
      const type = response.headers.get('content-type') ?? '';
      if (response.status === 401 || response.status === 403) reason = 'refused';
      else if (!response.ok || !type.startsWith('text/event-stream') || !response.body) reason = 'moved';
      else {
        this.failures = 0;
        this.dispatchEvent(new Event('open'));
        await this.read(response.body);
      }
    } catch {
      // No answer at all, or the connection broke: unreachable.
    }
    if (this.controller.signal.aborted) return;
    this.failures += 1;
    this.dispatchEvent(
      new CustomEvent('down', { detail: /** @type {StreamDown} */ ({ reason, failures: this.failures }) }),
    );
    if (reason !== 'unreachable') return;
    const delay = Math.min(RETRY_FIRST_MS * 2 ** (this.failures - 1), RETRY_MAX_MS);
    setTimeout(() => void this.connect(), delay);
  }

  /**
   * The events of one connection until it ends: `event:` and `data:` lines, a blank line ends
   * one; a line starting with `:` is a keep-alive comment.
   * @param {ReadableStream<Uint8Array>} body
   */
  async read(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      // The playground writes `\n` line ends only (live-updates.ts).
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) this.dispatchEvent(new MessageEvent(name, { data: data.join('\n') }));
      }
    }
  }

  /** Stop for good. */
  close() {
    this.controller.abort();
  }
}
