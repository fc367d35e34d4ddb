// Cluster mode in one process: two bots, each one instance with its own RedisCoordinator,
// sharing one real redis-server. What lands on an instance that does not own the thread
// reaches the one that does; a claimed event runs once; one click wins; a dead owner's
// thread is taken over; a former owner can no longer write. (The multi-process suite drives
// the same through Bolt, HTTP and SIGKILL.)
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/engine/index.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { hangingTool, lowRisk, recordingTool, risky, waitFor } from '../support/engine-kit.js';
import { RedisServer } from '../support/redis-server.js';
import { tempDir, TestBot } from '../support/test-connector.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
});

const bots: TestBot[] = [];
afterEach(async () => {
  for (const bot of bots.splice(0).reverse()) await bot.stop();
});

/** Two instances on one store (their own providers and tools: each runs what it owns). */
async function twoInstances(
  steps: { a: Step[]; b: Step[] },
  tools: { a: ToolDefinition[]; b: ToolDefinition[] } = { a: [], b: [] },
) {
  const dir = await tempDir('cluster-');
  const storeUrl = `sqlite://${dir.path}/shared.sqlite`;
  const a = { provider: new ScriptedProvider(steps.a), bot: undefined as unknown as TestBot };
  const b = { provider: new ScriptedProvider(steps.b), bot: undefined as unknown as TestBot };
  a.bot = await TestBot.start({ provider: a.provider, tools: tools.a, storeUrl, cluster: { url: redis.url } });
  b.bot = await TestBot.start({ provider: b.provider, tools: tools.b, storeUrl, cluster: { url: redis.url } });
  bots.push(a.bot, b.bot);
  return { a, b };
}

describe('two instances on one Redis', () => {
  it('the same event delivered to both runs one turn', async () => {
    const { a, b } = await twoInstances({ a: [say('once')], b: [say('once')] });
    const results = await Promise.all([
      a.bot.say('T1', 'U1', 'hello', 'Ev-same'),
      b.bot.say('T1', 'U1', 'hello', 'Ev-same'),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['duplicate', 'started']);
    await waitFor(() => a.provider.requests.length + b.provider.requests.length === 1);
    await a.bot.manager.idle();
    await b.bot.manager.idle();
    expect(a.provider.requests.length + b.provider.requests.length).toBe(1);
  });

  it('a reply that lands on the instance not running the turn steers it', async () => {
    const { a, b } = await twoInstances(
      { a: [callTools(call('slow_read')), say('Using staging.')], b: [] },
      { a: [recordingTool('slow_read', lowRisk, { delayMs: 300 })], b: [] },
    );
    expect(await a.bot.say('T1', 'U1', 'deploy')).toMatchObject({ status: 'started' });
    await a.bot.waitForEvent('T1', 'tool_started');
    expect(await b.bot.say('T1', 'U2', 'use staging')).toMatchObject({ status: 'queued' });
    await waitFor(() => a.provider.requests.length === 2, 5_000);
    await a.bot.manager.idle();
    expect(a.provider.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'use staging' });
    expect(b.provider.requests).toEqual([]);
    expect(a.bot.inputs.filter((input) => input.disposition === 'injected')).toHaveLength(1);
  });

  it('a stop that lands on the other instance stops the running turn', async () => {
    const runs: string[] = [];
    const { a, b } = await twoInstances(
      { a: [callTools(call('migrate'))], b: [] },
      { a: [hangingTool('migrate', lowRisk, runs)], b: [] },
    );
    await a.bot.say('T1', 'U1', 'migrate');
    await a.bot.waitForEvent('T1', 'tool_started');
    expect(await b.bot.manager.interrupt(a.bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    await a.bot.waitForEvent('T1', 'interrupted');
    await a.bot.manager.idle();
    expect(a.bot.events('T1').at(-1)).toMatchObject({ type: 'turn_end', status: 'interrupted' });
  });

  it('Approve clicked on both instances at once: one resolution, the tool runs once, the second clicker is told', async () => {
    const log: string[] = [];
    const { a, b } = await twoInstances(
      { a: [callTools(call('write')), say('Written.')], b: [] },
      { a: [recordingTool('write', risky, { log })], b: [recordingTool('write', risky, { log })] },
    );
    await a.bot.say('T1', 'U1', 'write it');
    const prompt = await a.bot.waitForPrompt('T1');
    const clicks = await Promise.all([
      a.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1'),
      b.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1'),
    ]);
    expect(clicks.filter((click) => click.ok)).toHaveLength(1);
    expect(clicks.filter((click) => !click.ok)).toMatchObject([{ ok: false, reason: 'already_resolved' }]);
    await waitFor(() => log.length === 2, 5_000);
    await a.bot.manager.idle();
    expect(log).toEqual(['start:write', 'end:write']);
    expect(a.bot.events('T1').at(-1)).toMatchObject({ type: 'turn_end', status: 'completed' });
  });

  it('Approve clicked on the instance not running the turn wakes the turn where it waits', async () => {
    const log: string[] = [];
    const { a, b } = await twoInstances(
      { a: [callTools(call('write')), say('Written.')], b: [] },
      { a: [recordingTool('write', risky, { log })], b: [recordingTool('write', risky, { log: [] })] },
    );
    await a.bot.say('T1', 'U1', 'write it');
    const prompt = await a.bot.waitForPrompt('T1');
    expect(await b.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
    await waitFor(() => a.bot.events('T1').some((event) => event.type === 'turn_end'), 5_000);
    expect(log).toEqual(['start:write', 'end:write']);
  });
});

describe('ownership that moves between instances', () => {
  it('turns of one thread alternating between instances keep the whole transcript (nothing stale overwrites it)', async () => {
    const { a, b } = await twoInstances({ a: [say('one'), say('three')], b: [say('two'), say('four')] });
    const turns: [TestBot, string][] = [
      [a.bot, 'first'],
      [b.bot, 'second'],
      [a.bot, 'third'],
      [b.bot, 'fourth'],
    ];
    for (const [bot, text] of turns) {
      // Each instance owns the thread for its turn, then releases it when idle.
      expect(await bot.say('T1', 'U1', text)).toMatchObject({ status: 'started' });
      await bot.manager.idle();
      await waitFor(
        () => !a.bot.coordinator!.owns(a.bot.sessionId('T1')) && !b.bot.coordinator!.owns(a.bot.sessionId('T1')),
        5_000,
      );
    }
    const transcript = await b.bot.store.loadTranscript(b.bot.sessionId('T1'));
    expect(transcript.map((m) => (m.role === 'user' || m.role === 'assistant' ? m.content : m.role))).toEqual([
      'first',
      'one',
      'second',
      'two',
      'third',
      'three',
      'fourth',
      'four',
    ]);
    // The last request saw the whole conversation, as stored by both instances.
    expect(b.provider.requests.at(-1)!.messages.map((m) => m.content)).toEqual([
      'first',
      'one',
      'second',
      'two',
      'third',
      'three',
      'fourth',
    ]);
  });
});

describe('an owner that dies', () => {
  it('its waiting thread is taken over: the card is shown again, the click resumes it there, the tool runs once', async () => {
    const logA: string[] = [];
    const logB: string[] = [];
    const { a, b } = await twoInstances(
      { a: [callTools(call('write'))], b: [say('Written after the takeover.')] },
      { a: [recordingTool('write', risky, { log: logA })], b: [recordingTool('write', risky, { log: logB })] },
    );
    await a.bot.say('T1', 'U1', 'write it');
    const prompt = await a.bot.waitForPrompt('T1');
    await a.bot.die();
    // b's sweep finds the lease gone and runs the restart recovery: the prompt is drawn again.
    await waitFor(() => b.bot.shown.some((shown) => shown.event.type === 'permission_required'), 5_000);
    expect(await b.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
    await waitFor(() => b.bot.events('T1').some((event) => event.type === 'turn_end'), 5_000);
    expect(logA).toEqual([]);
    expect(logB).toEqual(['start:write', 'end:write']);
    expect(b.provider.requests).toHaveLength(1);
  });

  it('a call it was running is answered "interrupted" by the new owner, not run again; its late result is refused', async () => {
    const runsA: string[] = [];
    const logB: string[] = [];
    let finishA: (() => void) | undefined;
    const slowA: ToolDefinition = {
      ...recordingTool('migrate', { risk: 'low', category: 'write' }, { log: runsA }),
      execute: async () => {
        runsA.push('migrate');
        await new Promise<void>((resolve) => (finishA = resolve));
        return { ok: true, late: true };
      },
    };
    const { a, b } = await twoInstances(
      { a: [callTools(call('migrate'))], b: [say('It was cut; I will not run it again.')] },
      { a: [slowA], b: [recordingTool('migrate', { risk: 'low', category: 'write' }, { log: logB })] },
    );
    await a.bot.say('T1', 'U1', 'migrate');
    // Dies once the tool runs, not at its card: between the two the start is written ahead, and
    // an instance killed before that write never runs the tool at all (another scenario).
    await waitFor(() => finishA !== undefined);
    await a.bot.die();
    await waitFor(() => b.provider.requests.length === 1, 5_000);
    await waitFor(() => b.bot.events('T1').some((event) => event.type === 'turn_end'), 5_000);
    // The former owner wakes up and tries to record its result: refused, the transcript is b's.
    finishA!();
    // Its turn ends once its writes are refused: after that, nothing more can come from it.
    await a.bot.manager.idle();
    const transcript = await b.bot.store.loadTranscript(b.bot.sessionId('T1'));
    const results = transcript.filter((m) => m.role === 'tool');
    expect(results).toHaveLength(1);
    expect(JSON.stringify(results[0])).toContain('interrupted by a restart');
    expect(JSON.stringify(transcript)).not.toContain('"late":true');
    expect(runsA).toEqual(['migrate']);
    expect(logB).toEqual([]);
  });
});
