// The bot core as a child process, for restart tests that kill it with SIGKILL. It runs
// the real session layer on a SQLite file, with the real OpenAI provider pointed at the
// parent's fake server, and two tools whose side effects land in a marker file (so the
// parent can count how often each really ran). The parent drives it over IPC.
import { appendFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, type EngineEvent, type InboxItem } from '../../src/engine/index.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { AccessPolicy, parseAccessConfig } from '../../src/sessions/access-policy.js';
import { InProcessCoordinator } from '../../src/sessions/coordination.js';
import { SessionManager } from '../../src/sessions/session-manager.js';
import { openKeyvStore } from '../../src/store/keyv-factory.js';
import { PersistentInbox } from '../../src/store/persistent-inbox.js';
import { SessionStore } from '../../src/store/session-store.js';

export type ChildCommand =
  | { id: number; cmd: 'deliver'; thread: string; user: string; text: string }
  | { id: number; cmd: 'resolve'; itemId: string; choice: string; user: string }
  | { id: number; cmd: 'recover' }
  | { id: number; cmd: 'transcript'; thread: string };

/** A command as the parent writes it (the id is added on sending). */
export type ChildRequest = ChildCommand extends infer C ? (C extends ChildCommand ? Omit<C, 'id'> : never) : never;

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'event'; thread: string; event: EngineEvent; prompt?: InboxItem }
  | { type: 'result'; id: number; value: unknown };

const env = z
  .object({ STORE_URL: z.string(), OPENAI_BASE_URL: z.string(), MARKER_FILE: z.string() })
  .parse(process.env);

const send = (message: ChildMessage): void => {
  process.send?.(message);
};

const opened = await openKeyvStore(env.STORE_URL);
const store = new SessionStore(opened.keyv);
const inbox = new PersistentInbox(store);
const mark = (line: string) => appendFile(env.MARKER_FILE, `${line}\n`);

const tools = [
  defineTool({
    name: 'write_marker',
    description: 'Write a line (a side effect the test counts)',
    schema: z.object({ line: z.string() }),
    metadata: { risk: 'high', category: 'write' },
    execute: async ({ line }) => {
      await mark(`write_marker:${line}`);
      return 'written';
    },
  }),
  defineTool({
    name: 'slow_migration',
    description: 'A long side-effecting job',
    schema: z.object({}),
    metadata: { risk: 'low', category: 'write' },
    execute: async () => {
      await mark('slow_migration:started');
      await new Promise((resolve) => setTimeout(resolve, 60_000));
      await mark('slow_migration:finished');
      return 'migrated';
    },
  }),
];

const provider = new OpenAIProvider({ apiKey: 'sk-test', baseURL: env.OPENAI_BASE_URL, maxRetries: 0 });
const manager = new SessionManager({
  store,
  inbox,
  coordinator: new InProcessCoordinator(store),
  access: new AccessPolicy(parseAccessConfig('*', '')),
  defaultModel: 'openai:gpt-4.1',
  engineSetup: () => ({ provider, tools }),
  observer: {
    onEvent: (session, event, prompt) =>
      send({ type: 'event', thread: session.key.thread, event, ...(prompt ? { prompt } : {}) }),
  },
});

const key = (thread: string) => ({ platform: 'test', workspace: 'W1', channel: 'C1', thread });

process.on('message', (raw: ChildCommand) => {
  void (async () => {
    let value: unknown;
    switch (raw.cmd) {
      case 'deliver':
        value = await manager.deliver(key(raw.thread), {
          text: raw.text,
          userId: raw.user,
          eventId: `ev-${raw.id}-${Date.now()}`,
        });
        break;
      case 'resolve':
        value = await manager.resolve(raw.itemId, { choice: raw.choice }, raw.user);
        break;
      case 'recover':
        value = await manager.recover();
        break;
      case 'transcript': {
        const sessionId = (await store.listSessionIds()).find((id) => id.endsWith(`:${raw.thread}`));
        value = sessionId ? await store.loadTranscript(sessionId) : [];
        break;
      }
    }
    send({ type: 'result', id: raw.id, value });
  })();
});

send({ type: 'ready' });
