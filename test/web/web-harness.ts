// The playground against fakes, in process: the real core (store on a SQLite file in a
// temporary folder, the real OpenAI provider against FakeOpenAI) and the real WebConnector on
// a random loopback port. Scenarios act as the page does (HTTP with the token in an
// Authorization header) and read what it would draw from the live stream, parsed as the
// page parses it.
import { join } from 'node:path';
import { WebConnector } from '../../connectors/web/web-connector.js';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { SecretMasker } from '../../src/secrets/index.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

export interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface WebBot {
  llm: FakeOpenAI;
  core: Core;
  connector: WebConnector;
  /** The access token of this start (from the printed address's fragment). */
  token: string;
  origin: string;
  /** The address the playground prints, token included. */
  url: string;
  dir: string;
  /** The connector's folder for this run's files (uploads/ and posted/). */
  filesDir: string;
  logs: ReturnType<typeof memoryLogger>;
  /** What tool results are masked with (the access token included). */
  secrets: SecretMasker;
  /** POST an action as the page does; `token: null` sends none. */
  act(
    path: string,
    body: unknown,
    options?: { token?: string | null },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Open the live stream; events accumulate in `events` until `close`. */
  stream(): Promise<LiveStream>;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export async function bootWebBot(
  options: { env?: Record<string, string>; dir?: string; llm?: FakeOpenAI } = {},
): Promise<WebBot> {
  const own = options.dir === undefined ? await tempDir() : undefined;
  const dir = options.dir ?? own!.path;
  const llm = options.llm ?? (await new FakeOpenAI().start());
  const logs = memoryLogger();
  const config = loadConfig({ ...coreTestEnv(dir, llm), PERMISSION_MODE: 'interactive', ...options.env });
  // As main.ts does: one masker for the core's tools and the connector, which adds its token.
  const secrets = new SecretMasker();
  const core = await startCore(config, { logger: logs, secrets });
  const filesDir = join(dir, 'playground-files');
  const connector = await WebConnector.create({ config, core, logger: logs, secrets, filesDir });
  await core.recover();
  await connector.start();
  const origin = `http://127.0.0.1:${connector.port}`;
  const url = connector.url;
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token') ?? '';
  const streams: LiveStream[] = [];
  return {
    llm,
    core,
    connector,
    token,
    origin,
    url,
    dir,
    filesDir,
    logs,
    secrets,
    async act(path, body, o = {}) {
      const given = o.token === undefined ? token : o.token;
      const response = await fetch(`${origin}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(given === null ? {} : { authorization: `Bearer ${given}` }),
        },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async stream() {
      const live = await LiveStream.open(`${origin}/api/events`, token);
      streams.push(live);
      return live;
    },
    idle: () => core.manager.idle(),
    async stop() {
      for (const live of streams) live.close();
      await connector.stopTaking();
      await core.close();
      await connector.close();
      if (!options.llm) await llm.stop();
      await own?.remove();
    },
  };
}

/** An SSE connection read the way the page reads one: `event:` and `data:` lines, a blank line ends an event. */
class LiveStream {
  readonly events: StreamEvent[] = [];
  private readonly controller = new AbortController();

  static async open(url: string, token: string): Promise<LiveStream> {
    const live = new LiveStream();
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: live.controller.signal,
    });
    if (response.status !== 200 || !response.body) throw new Error(`the live stream answered ${response.status}`);
    void live.read(response.body);
    await waitFor(() => live.events.length > 0, 5_000);
    return live;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0)
            this.events.push({ event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
        }
      }
    } catch {
      // aborted by close()
    }
  }

  /** The first event that matches, once it has arrived. */
  async next(predicate: (event: StreamEvent) => boolean, timeoutMs = 8_000): Promise<StreamEvent> {
    let found: StreamEvent | undefined;
    await waitFor(() => (found = this.events.find(predicate)) !== undefined, timeoutMs);
    return found!;
  }

  close(): void {
    this.controller.abort();
  }
}

/** A message update of a given kind, as the stream carries it. */
export function messageOf(event: StreamEvent): { kind: string; id: string; [field: string]: unknown } | undefined {
  if (event.event !== 'message') return undefined;
  return event.data.message as { kind: string; id: string };
}
