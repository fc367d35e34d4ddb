// The page's live stream: server-sent events over plain node:http (no dependency, and the
// browser's EventSource reconnects by itself). Each connection opens with a snapshot of the
// whole channel, then gets every change (page-threads.ts's PageUpdate) as it happens; a
// reconnecting page gets a fresh snapshot, so nothing sent while it was away is missed.
//
// A comment line every HEARTBEAT_MS keeps idle connections open through anything that times
// them out, and tells a dead client apart (its write fails and it is dropped).
import type { ServerResponse } from 'node:http';
import type { PageThread, PageUpdate, Person } from './page-threads.js';

const HEARTBEAT_MS = 15_000;

/** What a page is told once, first: the whole channel, who the person at the page is, and whether the bot is the demo model. */
export interface PageSnapshot {
  user: Person;
  bot: Person;
  threads: PageThread[];
  /** The bot answers with the built-in demo model (MODEL=demo, or no MODEL set): the page says so in a banner. */
  demo: boolean;
  /** MAX_FILE_BYTES: the page refuses a larger file before uploading it (the server refuses it anyway). */
  maxFileBytes: number;
}

/** A private answer for the person at the page ("only visible to you"); never stored. */
export interface Whisper {
  type: 'whisper';
  threadId?: string;
  text: string;
  /** When it was said: the page places it after what came before it (the command it answers). */
  at: number;
}

export class LiveUpdates {
  private readonly clients = new Set<ServerResponse>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor() {
    this.heartbeat = setInterval(() => {
      for (const client of this.clients) client.write(': keep-alive\n\n');
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Take an SSE connection: headers, the snapshot, then every update until it closes. */
  open(response: ServerResponse, snapshot: PageSnapshot): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      // The stream must not sit in a proxy's buffer: a token would arrive late.
      'x-accel-buffering': 'no',
    });
    response.flushHeaders();
    this.clients.add(response);
    response.on('close', () => this.clients.delete(response));
    send(response, 'snapshot', snapshot);
  }

  broadcast(update: PageUpdate | Whisper): void {
    for (const client of this.clients) send(client, update.type, update);
  }

  get connections(): number {
    return this.clients.size;
  }

  /** End every stream (the server is closing). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const client of this.clients) client.end();
    this.clients.clear();
  }
}

function send(client: ServerResponse, event: string, data: unknown): void {
  // JSON has no raw newline, so one `data:` line carries it whole.
  client.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
