// Start-up recovery and stops through the session layer: a first bot is abandoned mid-turn
// (as if its process died), a second bot opens the same SQLite file. Checked: recovery reads
// only the sessions with work in flight, decides each unanswered call on its own, and a stop
// that arrives in any gap before a turn's first step still stops that turn.
import { afterEach, describe, expect, it } from 'vitest';
import {
  approvalChoices,
  INTERRUPTED_BY_USER,
  toolErrorContent,
  type ToolDefinition,
  type ToolMetadata,
} from '../../src/engine/index.js';
import { PersistentInbox } from '../../src/store/persistent-inbox.js';
import { PersistentToolLedger } from '../../src/store/persistent-tool-ledger.js';
import { sessionIdOf } from '../../src/store/session-store.js';
import { call, callTools, say, type Step } from '../fakes/scripted-provider.js';
import { hangingTool, lowRisk, recordingTool, risky, waitFor } from '../support/engine-kit.js';
import { Restarts } from '../support/restarts.js';
import { TestBot } from '../support/test-connector.js';

const restarts = new Restarts();
afterEach(() => restarts.cleanup());
const storeFile = () => restarts.storeFile();
const bootBot = (storeUrl: string, steps: Step[], tools: ToolDefinition[]) => restarts.boot(storeUrl, steps, tools);

/** A session as a dead process left it: a `deploy` call awaiting (or holding) its approval, or running. */
async function writeCrashedSession(
  url: string,
  thread: string,
  options: { approved: boolean; started?: boolean; restartResumes?: number },
): Promise<string> {
  const opened = await TestBot.openStore(url);
  const store = TestBot.sessionStore(opened, url);
  const inbox = new PersistentInbox(store);
  const key = TestBot.thread(thread);
  const id = sessionIdOf(key);
  const now = Date.now();
  await store.markOpen(id);
  await store.saveSession(
    TestBot.record(thread, options.restartResumes !== undefined ? { restartResumes: options.restartResumes } : {}),
  );
  await store.appendMessage(id, { role: 'user', content: 'deploy', ts: now });
  await store.appendMessage(id, {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_deploy', type: 'function', function: { name: 'deploy', arguments: '{}' } }],
    ts: now,
  });
  const item = await inbox.open({
    sessionId: id,
    toolCallId: 'call_deploy',
    kind: 'approval',
    choices: approvalChoices(undefined),
  });
  if (options.approved) await inbox.resolve(item.id, { kind: 'approval', outcome: 'once' }, 'U1');
  if (options.started) await new PersistentToolLedger(store).markStarted(id, 'call_deploy', ['call_deploy']);
  await opened.close();
  return id;
}

type Sent = { role: string; tool_calls?: { id: string }[]; tool_call_id?: string; content?: unknown };

/** Every call has exactly one result, right after its assistant message, in call order. */
function expectAnsweredInOrder(messages: Sent[]): void {
  messages.forEach((message, i) => {
    if (message.role !== 'assistant' || !message.tool_calls?.length) return;
    const ids = message.tool_calls.map((c) => c.id);
    const results = messages.slice(i + 1, i + 1 + ids.length).map((m) => (m.role === 'tool' ? m.tool_call_id : m.role));
    expect(results).toEqual(ids);
  });
  const results = messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
  expect(new Set(results).size).toBe(results.length);
}

describe('recovery reads only what needs repair', () => {
  it('quiet sessions leave the open index when their turn ends; recovery examines none of them', async () => {
    const url = await storeFile();
    const first = await bootBot(url, [say('one'), say('two'), say('three')], []);
    for (const thread of ['T1', 'T2', 'T3']) {
      await first.bot.say(thread, 'U1', 'hello');
      await first.bot.manager.idle();
    }
    expect(await first.bot.store.openSessionIds()).toEqual([]);

    const second = await bootBot(url, [], []);
    expect(await second.bot.manager.recover()).toEqual({
      examined: 0,
      resumed: [],
      started: [],
      waiting: [],
      settled: [],
      givenUp: [],
    });
    expect(second.bot.manager.liveCount).toBe(0);
  });

  it('a session is in the open index from its first recorded input until its turn ends', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const { bot } = await bootBot(
      url,
      [callTools(call('write')), say('done')],
      [recordingTool('write', risky, { log })],
    );
    await bot.say('T1', 'U1', 'write');
    const prompt = await bot.waitForPrompt('T1');
    expect(await bot.store.openSessionIds()).toEqual([bot.sessionId('T1')]);
    await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1');
    await bot.manager.idle();
    expect(await bot.store.openSessionIds()).toEqual([]);
  });
});

describe('recovery decides each unanswered call on its own', () => {
  it('a batch cut mid-way: the running call is answered, the approved one runs, the turn finishes, nothing runs twice', async () => {
    const url = await storeFile();
    const runs: string[] = [];
    const metaWrite: ToolMetadata = { risk: 'high', category: 'write' };
    // Round: approve(a) + approve(b); a runs and hangs (the process dies), b was approved, never started.
    const first = await bootBot(
      url,
      [callTools(call('step_a'), call('step_b'))],
      [hangingTool('step_a', metaWrite, runs), recordingTool('step_b', metaWrite, { log: runs })],
    );
    await first.bot.say('T1', 'U1', 'do a then b');
    const promptA = await first.bot.waitForPrompt('T1');
    await first.bot.manager.resolve(promptA.id, { choice: 'once' }, 'U1');
    await waitFor(() => first.bot.shown.filter((s) => s.prompt).length === 2);
    const promptB = first.bot.shown.filter((s) => s.prompt).at(-1)!.prompt!;
    await first.bot.manager.resolve(promptB.id, { choice: 'once' }, 'U1');
    await waitFor(() => runs.includes('step_a'));

    const second = await bootBot(
      url,
      [say('a was interrupted, b is done')],
      [recordingTool('step_a', metaWrite, { log: runs }), recordingTool('step_b', metaWrite, { log: runs })],
    );
    expect(await second.bot.manager.recover()).toMatchObject({ resumed: [second.bot.sessionId('T1')] });
    await second.bot.manager.idle();
    expect(runs).toEqual(['step_a', 'start:step_b', 'end:step_b']);
    const finished = second.bot.events('T1').filter((e) => e.type === 'tool_finished');
    expect(finished).toMatchObject([
      { name: 'step_a', status: 'interrupted', restart: 'not_rerun' },
      { name: 'step_b', status: 'ok' },
    ]);
    // The old buttons answer "already answered"; nothing runs again.
    expect(await second.bot.manager.resolve(promptA.id, { choice: 'once' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'already_resolved',
    });
    expectAnsweredInOrder(second.provider.requests[0]!.messages);
    expect(await second.bot.store.openSessionIds()).toEqual([]);
  });

  it('a reply recorded while a prompt waited, and not yet applied when the process died, declines it and steers', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const first = await bootBot(url, [callTools(call('deploy'))], [recordingTool('deploy', risky, { log })]);
    await first.bot.say('T1', 'U1', 'deploy');
    await first.bot.waitForPrompt('T1');
    const sessionId = first.bot.sessionId('T1');
    // The reply was recorded; the process died before it declined the prompt.
    await first.bot.store.setPendingInputs(sessionId, [
      {
        id: 'in-1',
        text: 'no, staging',
        receivedAt: Date.now(),
        source: { platform: 'test', userId: 'U1', messageId: 'm-9' },
      },
    ]);

    const second = await bootBot(url, [say('Staging then.')], [recordingTool('deploy', risky, { log })]);
    expect(await second.bot.manager.recover()).toMatchObject({ resumed: [sessionId] });
    await second.bot.manager.idle();
    expect(log).toEqual([]);
    const sent = second.provider.requests[0]!.messages as Sent[];
    expect(sent.at(-2)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('replied instead of approving'),
    });
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'no, staging' });
  });

  it('an input already in the transcript is not run a second time; the model answers it once', async () => {
    const url = await storeFile();
    const first = await bootBot(url, [{ stallBeforeFirstToken: true }], []);
    await first.bot.say('T1', 'U1', 'hello', 'ev-42');
    await first.bot.waitForEvent('T1', 'turn_start');
    const sessionId = first.bot.sessionId('T1');
    // The crash fell between the message joining the history and leaving the pending list.
    await first.bot.store.setPendingInputs(sessionId, [
      { id: 'in-1', text: 'hello', receivedAt: Date.now(), source: { platform: 'test', messageId: 'ev-42' } },
    ]);

    const second = await bootBot(url, [say('hi')], []);
    expect(await second.bot.manager.recover()).toMatchObject({ resumed: [sessionId] });
    await second.bot.manager.idle();
    expect(await second.bot.store.getPendingInputs(sessionId)).toEqual([]);
    expect(second.provider.requests).toHaveLength(1);
    expect(second.provider.requests[0]!.messages.filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('a prompt whose call already has its result is closed, so its buttons no longer work', async () => {
    const url = await storeFile();
    const first = await bootBot(url, [callTools(call('deploy'))], [recordingTool('deploy', risky)]);
    await first.bot.say('T1', 'U1', 'deploy');
    const prompt = await first.bot.waitForPrompt('T1');
    const sessionId = first.bot.sessionId('T1');
    // A stop answered the call; the crash came before the prompt was resolved.
    await first.bot.store.appendMessage(sessionId, {
      role: 'tool',
      tool_call_id: prompt.toolCallId,
      content: toolErrorContent(INTERRUPTED_BY_USER),
    });

    const second = await bootBot(url, [], [recordingTool('deploy', risky)]);
    expect(await second.bot.manager.recover()).toMatchObject({ settled: [sessionId] });
    expect(second.bot.closedPrompts.map((item) => item.id)).toEqual([prompt.id]);
    expect(await second.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'already_resolved',
    });
  });
});

describe('what the thread shows after a restart', () => {
  it('a prompt still waiting is shown again with its buttons (the dead process may not have drawn them)', async () => {
    const url = await storeFile();
    const sessionId = await writeCrashedSession(url, 'T1', { approved: false });
    const { bot } = await bootBot(url, [], [recordingTool('deploy', risky)]);
    expect(await bot.manager.recover()).toMatchObject({ waiting: [sessionId] });
    const shown = bot.shown.filter((s) => s.sessionId === sessionId);
    expect(shown.map((s) => s.event.type)).toEqual(['tool_proposed', 'permission_required']);
    expect(shown[1]).toMatchObject({
      event: { name: 'deploy', toolCallId: 'call_deploy' },
      prompt: { state: 'pending', kind: 'approval' },
    });
  });

  it('a call a restart cut is shown as cut again at the next start, in case its card was not updated', async () => {
    const url = await storeFile();
    const runs: string[] = [];
    const first = await bootBot(
      url,
      [callTools(call('migrate'))],
      [hangingTool('migrate', { risk: 'low', category: 'write' }, runs)],
    );
    await first.bot.say('T1', 'U1', 'migrate');
    await first.bot.waitForEvent('T1', 'tool_started');
    // The second life answers the cut call, then dies before the model call.
    const second = await bootBot(
      url,
      [{ stallBeforeFirstToken: true }],
      [hangingTool('migrate', { risk: 'low', category: 'write' }, runs)],
    );
    await second.bot.manager.recover();
    await waitFor(() => second.provider.requests.length === 1);

    const third = await bootBot(
      url,
      [say('It was cut by a restart.')],
      [hangingTool('migrate', { risk: 'low', category: 'write' }, runs)],
    );
    expect(await third.bot.manager.recover()).toMatchObject({ resumed: [third.bot.sessionId('T1')] });
    await third.bot.manager.idle();
    expect(third.bot.events('T1').filter((e) => e.type === 'tool_finished')).toMatchObject([
      { name: 'migrate', status: 'interrupted', restart: 'not_rerun' },
    ]);
    expect(runs).toEqual(['migrate']);
  });
});

describe('a turn that keeps crashing the bot', () => {
  it('is resumed by two restarts in a row, then given up with a note and Retry, never run a third time', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const sessionId = await writeCrashedSession(url, 'T1', { approved: true, restartResumes: 2 });
    const { bot, provider } = await bootBot(url, [say('never')], [recordingTool('deploy', risky, { log })]);
    expect(await bot.manager.recover()).toMatchObject({ givenUp: [sessionId], resumed: [] });
    expect(log).toEqual([]);
    expect(provider.requests).toEqual([]);
    const stored = await bot.store.loadTranscript(sessionId);
    expect(stored.slice(-2)).toMatchObject([
      { role: 'tool', content: expect.stringContaining('interrupted by a restart') },
      { role: 'notice', kind: 'error', text: expect.stringContaining('restarted during this turn several times') },
    ]);
    expect(bot.events('T1').map((e) => e.type)).toEqual(['tool_proposed', 'tool_finished', 'error']);
    expect(await bot.store.openSessionIds()).toEqual([]);
    // Retry goes on from there.
    expect(await bot.manager.controls.retry(sessionId, 'U1')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(1);
  });

  it('a resumed turn that ends on its own clears the count', async () => {
    const url = await storeFile();
    const sessionId = await writeCrashedSession(url, 'T1', { approved: true, started: true, restartResumes: 1 });
    const { bot } = await bootBot(url, [say('The deploy was cut by a restart.')], [recordingTool('deploy', risky)]);
    expect(await bot.manager.recover()).toMatchObject({ resumed: [sessionId] });
    await bot.manager.idle();
    expect((await bot.store.getSession(sessionId))!.restartResumes).toBe(0);
  });
});

describe('a stop always lands', () => {
  it('a stop right after the message, before the turn took its first step: the model is never called', async () => {
    const { bot, provider } = await bootBot(await storeFile(), [say('never')], []);
    expect(await bot.say('T1', 'U1', 'start something')).toMatchObject({ status: 'started' });
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
    expect(provider.requests).toEqual([]);
    expect(bot.events('T1').at(-1)).toMatchObject({ type: 'turn_end', status: 'interrupted' });
    expect((await bot.store.loadTranscript(bot.sessionId('T1'))).map((m) => m.role)).toEqual(['user', 'notice']);
  });

  it('a stop processed before the message it reacts to (events in either order) stops the turn that message starts', async () => {
    const { bot, provider } = await bootBot(await storeFile(), [say('never')], []);
    // Both issued at once: the session does not exist yet when the stop is looked at.
    const delivered = bot.say('T1', 'U1', 'start something');
    const stopped = bot.manager.interrupt(bot.sessionId('T1'), 'U1');
    expect(await delivered).toMatchObject({ status: 'started' });
    await stopped;
    await bot.manager.idle();
    expect(provider.requests).toEqual([]);
    expect(bot.events('T1').at(-1)).toMatchObject({ type: 'turn_end', status: 'interrupted' });
  });

  it('an early stop from someone who may not stop that thread is not applied', async () => {
    const { bot, provider } = await bootBot(await storeFile(), [say('answer')], []);
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U_STRANGER')).toMatchObject({ status: 'unknown_session' });
    expect(await bot.say('T1', 'U1', 'start something')).toMatchObject({ status: 'started' });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(1);
    expect(bot.events('T1').at(-1)).toMatchObject({ type: 'turn_end', status: 'completed' });
  });

  it('a stop during recovery stops the turn recovery resumes: the approved call never runs', async () => {
    const url = await storeFile();
    const log: string[] = [];
    // What a crash left: the call's approval was clicked and recorded, and the process died
    // before the turn heard of it.
    const sessionId = await writeCrashedSession(url, 'T1', { approved: true });

    const second = await bootBot(url, [say('never')], [recordingTool('deploy', risky, { log })]);
    const recovering = second.bot.manager.recover();
    const stop = second.bot.manager.interrupt(sessionId, 'U1');
    await recovering;
    expect(await stop).toMatchObject({ status: 'done' });
    await second.bot.manager.idle();
    expect(log).toEqual([]);
    expect(second.provider.requests).toEqual([]);
    const stored = await second.bot.store.loadTranscript(sessionId);
    expect(stored.at(-2)).toMatchObject({ role: 'tool', content: expect.stringContaining('interrupted by user') });
  });

  it('a stop while a resumed turn starts (a click after a restart, then 🛑 at once): nothing runs', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const first = await bootBot(url, [callTools(call('deploy'))], [recordingTool('deploy', risky, { log })]);
    await first.bot.say('T1', 'U1', 'deploy');
    const prompt = await first.bot.waitForPrompt('T1');

    const second = await bootBot(url, [say('never')], [recordingTool('deploy', risky, { log })]);
    await second.bot.manager.recover();
    const click = second.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1');
    const stop = second.bot.manager.interrupt(second.bot.sessionId('T1'), 'U1');
    await click;
    expect(await stop).toMatchObject({ status: 'done' });
    await second.bot.manager.idle();
    expect(log).toEqual([]);
    expect(second.provider.requests).toEqual([]);
    const finished = second.bot.events('T1').filter((e) => e.type === 'tool_finished');
    expect(finished).toMatchObject([{ status: 'interrupted' }]);
    expectAnsweredInOrder(await second.bot.store.loadTranscript(second.bot.sessionId('T1')));
  });

  it('a click, then a stop once the resumed turn runs: the stop still lands before the tool', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const first = await bootBot(url, [callTools(call('deploy'))], [recordingTool('deploy', risky, { log })]);
    await first.bot.say('T1', 'U1', 'deploy');
    const prompt = await first.bot.waitForPrompt('T1');
    const second = await bootBot(url, [say('never')], [recordingTool('deploy', lowRisk, { log, delayMs: 200 })]);
    await second.bot.manager.recover();
    expect(await second.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
    expect(await second.bot.manager.interrupt(second.bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    await second.bot.manager.idle();
    expect(log.filter((l) => l.startsWith('end:'))).toEqual([]);
    expect(second.bot.events('T1').at(-1)).toMatchObject({ type: 'turn_end', status: 'interrupted' });
  });
});
