// Restarts for real: the bot core runs as a child process on a SQLite file and is killed
// with SIGKILL at chosen points (awaiting approval, mid-tool, mid-stream), then started
// again. Checked: history intact, no orphan tool call reaches the provider, a pending
// approval answered after the restart runs its tool exactly once, and no side-effecting
// tool runs twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineEvent, InboxItem, Message } from '../../src/engine/index.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import type { ChildMessage, ChildRequest } from '../support/bot-core-child.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

const CHILD = fileURLToPath(new URL('../support/bot-core-child.ts', import.meta.url));

class BotProcess {
  readonly events: { thread: string; event: EngineEvent; prompt?: InboxItem }[] = [];
  private readonly results = new Map<number, unknown>();
  private nextId = 1;
  private ready = false;
  private exited = false;

  constructor(private readonly child: ChildProcess) {
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') this.ready = true;
      else if (message.type === 'event') this.events.push(message);
      else this.results.set(message.id, message.value);
    });
    child.on('exit', () => {
      this.exited = true;
    });
  }

  static async start(env: Record<string, string>): Promise<BotProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const bot = new BotProcess(child);
    await waitFor(() => bot.ready || bot.exited, 20_000);
    if (!bot.ready) throw new Error('the bot process did not start');
    return bot;
  }

  async call<T>(command: ChildRequest): Promise<T> {
    const id = this.nextId++;
    this.child.send({ ...command, id });
    await waitFor(() => this.results.has(id), 10_000);
    return this.results.get(id) as T;
  }

  async waitForEvent(type: EngineEvent['type'], count = 1): Promise<void> {
    await waitFor(() => this.events.filter((e) => e.event.type === type).length >= count, 10_000);
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await waitFor(() => this.exited, 5_000);
  }
}

const running: BotProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const bot of running.splice(0)) await bot.kill().catch(() => undefined);
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  const env = {
    STORE_URL: `sqlite://${dir.path}/bot.sqlite`,
    OPENAI_BASE_URL: fake.baseURL,
    MARKER_FILE: `${dir.path}/marker.log`,
  };
  const boot = async () => {
    const bot = await BotProcess.start(env);
    running.push(bot);
    return bot;
  };
  const marks = async () => (await readFile(env.MARKER_FILE, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { fake, boot, marks };
}

/** Resolves once the marker file holds `line` (a generous bound, for a busy machine). */
async function untilMarked(marks: () => Promise<string[]>, line: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await marks()).includes(line)) {
    if (Date.now() > deadline) throw new Error(`no "${line}" in the marker file within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type Body = { messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string; content?: unknown }[] };

function expectNoOrphans(body: Body): void {
  const calls = body.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
  const results = body.messages.flatMap((m) => (m.role === 'tool' && m.tool_call_id ? [m.tool_call_id] : []));
  expect([...results].sort()).toEqual([...calls].sort());
}

describe('killed with SIGKILL and started again', () => {
  it('while awaiting approval: the click after the restart runs the tool exactly once', async () => {
    const { fake, boot, marks } = await setup();
    fake.replyToolCalls([{ name: 'write_marker', arguments: { line: 'hello' } }]);
    const first = await boot();
    await first.call({ cmd: 'deliver', thread: 'T1', user: 'U1', text: 'write hello' });
    await first.waitForEvent('permission_required');
    const prompt = first.events.find((e) => e.prompt)!.prompt!;
    await first.kill();

    fake.replyText('Written.');
    const second = await boot();
    await second.call({ cmd: 'recover' });
    expect(await second.call({ cmd: 'resolve', itemId: prompt.id, choice: 'once', user: 'U1' })).toMatchObject({
      ok: true,
    });
    await second.waitForEvent('turn_end');
    expect(await marks()).toEqual(['write_marker:hello']);
    const bodies = fake.requests.map((r) => r.body as Body);
    expect(bodies).toHaveLength(2);
    expectNoOrphans(bodies[1]!);
    const transcript = await second.call<Message[]>({ cmd: 'transcript', thread: 'T1' });
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('mid-tool: the call gets an honest error result, is not run again, and the turn goes on with no orphan', async () => {
    const { fake, boot, marks } = await setup();
    fake.replyToolCalls([{ name: 'slow_migration', arguments: {} }]);
    const first = await boot();
    await first.call({ cmd: 'deliver', thread: 'T1', user: 'U1', text: 'migrate' });
    await first.waitForEvent('tool_started');
    await waitFor(() => fake.requests.length === 1);
    // Killed once the job's side effect has begun (its mark is written), however long that takes.
    await untilMarked(marks, 'slow_migration:started');
    await first.kill();
    expect(await marks()).toEqual(['slow_migration:started']);

    fake.replyText('The migration was interrupted by a restart.');
    const second = await boot();
    expect(await second.call({ cmd: 'recover' })).toMatchObject({ resumed: [expect.stringContaining('T1')] });
    await second.waitForEvent('turn_end');
    const transcript = await second.call<Message[]>({ cmd: 'transcript', thread: 'T1' });
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(transcript[2]).toMatchObject({ content: expect.stringContaining('interrupted by a restart') });
    expectNoOrphans(fake.requests[1]!.body as Body);
    expect(await marks()).toEqual(['slow_migration:started']);
  });

  it('mid-stream: the user message survives, and after the restart the model answers it', async () => {
    const { fake, boot } = await setup();
    fake.replyStallAfter(4, { text: 'A long answer that is cut off by the crash' });
    const first = await boot();
    await first.call({ cmd: 'deliver', thread: 'T1', user: 'U1', text: 'tell me a story' });
    await first.waitForEvent('assistant_delta');
    await first.kill();

    fake.replyText('Here is the story again.');
    const second = await boot();
    expect(await second.call({ cmd: 'recover' })).toMatchObject({ resumed: [expect.stringContaining('T1')] });
    await second.waitForEvent('turn_end');
    const body = fake.requests[1]!.body as Body;
    expect(body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['tell me a story']);
    const transcript = await second.call<Message[]>({ cmd: 'transcript', thread: 'T1' });
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(transcript[1]).toMatchObject({ content: 'Here is the story again.' });
  });
});
