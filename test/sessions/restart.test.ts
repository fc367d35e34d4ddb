// Restarts inside one process: the first bot is abandoned mid-turn (its engine never hears
// from anyone again, as if the process had died), and a second bot opens the same SQLite
// file, recovers, and carries on. The child-process tests in restart-process.test.ts do
// the same with a real SIGKILL.
import { afterEach, describe, expect, it } from 'vitest';
import type { Message, ToolDefinition, ToolMetadata } from '../../src/engine/index.js';
import { call, callTools, say, type Step } from '../fakes/scripted-provider.js';
import { hangingTool, recordingTool, risky, waitFor } from '../support/engine-kit.js';
import { Restarts } from '../support/restarts.js';
import { TestBot } from '../support/test-connector.js';

const restarts = new Restarts();
afterEach(() => restarts.cleanup());
const storeFile = () => restarts.storeFile();
const bootBot = (storeUrl: string, steps: Step[], tools: ToolDefinition[]) => restarts.boot(storeUrl, steps, tools);

/** Every tool call in a provider request has its result right after it. */
function expectNoOrphans(messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[]): void {
  const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
  const results = messages.flatMap((m) => (m.role === 'tool' && m.tool_call_id ? [m.tool_call_id] : []));
  expect([...results].sort()).toEqual([...calls].sort());
}

describe('a restart while an approval is pending', () => {
  it('the old button still works after the restart: the tool runs exactly once and the turn finishes', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const first = await bootBot(
      url,
      [callTools(call('write', { path: 'a.txt' }))],
      [recordingTool('write', risky, { log })],
    );
    await first.bot.say('T1', 'U1', 'write a.txt');
    const prompt = await first.bot.waitForPrompt('T1');
    // The process "dies" here: the first bot is abandoned with its turn waiting.

    const second = await bootBot(url, [say('Written.')], [recordingTool('write', risky, { log })]);
    const report = await second.bot.manager.recover();
    expect(report).toMatchObject({ examined: 1, waiting: [second.bot.sessionId('T1')], resumed: [] });
    expect(await second.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
    await second.bot.manager.idle();
    expect(log).toEqual(['start:write', 'end:write']);
    expect(second.provider.requests).toHaveLength(1);
    expectNoOrphans(second.provider.requests[0]!.messages);
    const stored = await second.bot.store.loadTranscript(second.bot.sessionId('T1'));
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('a new message instead of a click declines the call, steers, and no orphan reaches the provider', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const first = await bootBot(
      url,
      [callTools(call('deploy', { target: 'prod' }))],
      [recordingTool('deploy', risky, { log })],
    );
    await first.bot.say('T1', 'U1', 'deploy');
    await first.bot.waitForPrompt('T1');

    const second = await bootBot(url, [say('Staging it is.')], [recordingTool('deploy', risky, { log })]);
    await second.bot.manager.recover();
    await second.bot.say('T1', 'U1', 'actually, staging');
    await second.bot.manager.idle();
    expect(log).toEqual([]);
    const request = second.provider.requests[0]!.messages;
    expectNoOrphans(request);
    expect(request.at(-2)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('replied instead of approving'),
    });
    expect(request.at(-1)).toEqual({ role: 'user', content: 'actually, staging' });
  });

  it('a stop after the restart closes the pending prompt and answers the call', async () => {
    const url = await storeFile();
    const first = await bootBot(url, [callTools(call('write'))], [recordingTool('write', risky)]);
    await first.bot.say('T1', 'U1', 'write');
    const prompt = await first.bot.waitForPrompt('T1');
    const second = await bootBot(url, [], [recordingTool('write', risky)]);
    await second.bot.manager.recover();
    expect(await second.bot.manager.interrupt(second.bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    expect(await second.bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'already_resolved',
    });
    const stored = await second.bot.store.loadTranscript(second.bot.sessionId('T1'));
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'notice']);
  });
});

describe('a restart while a tool runs', () => {
  const hangs = (idempotent: boolean): ToolMetadata => ({
    risk: 'low',
    category: idempotent ? 'read' : 'write',
    idempotent,
  });

  it('a side-effecting call gets an error result, is not run again, and the turn goes on with no orphan', async () => {
    const url = await storeFile();
    const runs: string[] = [];
    const first = await bootBot(url, [callTools(call('migrate_db'))], [hangingTool('migrate_db', hangs(false), runs)]);
    await first.bot.say('T1', 'U1', 'migrate');
    await first.bot.waitForEvent('T1', 'tool_started');

    const second = await bootBot(
      url,
      [say('The migration was interrupted; shall I check its state?')],
      [hangingTool('migrate_db', hangs(false), runs)],
    );
    expect(await second.bot.manager.recover()).toMatchObject({ resumed: [second.bot.sessionId('T1')] });
    await second.bot.manager.idle();
    expect(runs).toEqual(['migrate_db']);
    const finished = second.bot.events('T1').filter((e) => e.type === 'tool_finished');
    expect(finished).toMatchObject([{ status: 'interrupted', restart: 'not_rerun' }]);
    const stored = await second.bot.store.loadTranscript(second.bot.sessionId('T1'));
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(stored[2]).toMatchObject({ role: 'tool', content: expect.stringContaining('interrupted by a restart') });
    expectNoOrphans(second.provider.requests[0]!.messages);
    // Settled: the next start-up has nothing to read.
    expect(await second.bot.store.openSessionIds()).toEqual([]);
  });

  it('an idempotent call (a read) simply runs again and the turn completes', async () => {
    const url = await storeFile();
    const runs: string[] = [];
    const first = await bootBot(url, [callTools(call('read_file'))], [hangingTool('read_file', hangs(true), runs)]);
    await first.bot.say('T1', 'U1', 'read');
    await first.bot.waitForEvent('T1', 'tool_started');
    const readAgain = recordingTool('read_file', { risk: 'low', category: 'read', idempotent: true }, { log: runs });
    const second = await bootBot(url, [say('Here it is.')], [readAgain]);
    expect(await second.bot.manager.recover()).toMatchObject({ resumed: [second.bot.sessionId('T1')] });
    await second.bot.manager.idle();
    expect(runs).toEqual(['read_file', 'start:read_file', 'end:read_file']);
    const stored = await second.bot.store.loadTranscript(second.bot.sessionId('T1'));
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: 'Here it is.' });
  });
});

describe('what was recorded is not lost', () => {
  it('a message recorded but not yet taken by a turn starts its turn after the restart', async () => {
    const url = await storeFile();
    const first = await bootBot(url, [], []);
    // Recorded (as deliver does before acknowledging) but the process died before the turn began.
    const sessionId = first.bot.sessionId('T9');
    await first.bot.store.saveSession(TestBot.record('T9'));
    await first.bot.store.markOpen(sessionId);
    await first.bot.store.setPendingInputs(sessionId, [
      { id: 'in-1', text: 'hello after the crash', receivedAt: Date.now() },
    ]);
    const second = await bootBot(url, [say('Hello!')], []);
    expect(await second.bot.manager.recover()).toMatchObject({ started: [sessionId] });
    await second.bot.manager.idle();
    expect(second.provider.requests[0]!.messages).toEqual([{ role: 'user', content: 'hello after the crash' }]);
    expect(await second.bot.store.getPendingInputs(sessionId)).toEqual([]);
  });

  it('grants, the model and the history survive a restart', async () => {
    const url = await storeFile();
    const log: string[] = [];
    const first = await bootBot(url, [callTools(call('write')), say('done')], [recordingTool('write', risky, { log })]);
    await first.bot.say('T1', 'U1', 'write');
    const prompt = await first.bot.waitForPrompt('T1');
    await first.bot.manager.resolve(prompt.id, { choice: 'always_tool' }, 'U1');
    await first.bot.manager.idle();
    await first.bot.manager.controls.switchModel(first.bot.sessionId('T1'), 'other-model', 'U1');
    await first.bot.stop();

    const second = await bootBot(
      url,
      [callTools(call('write')), say('done again')],
      [recordingTool('write', risky, { log })],
    );
    await second.bot.manager.recover();
    await second.bot.say('T1', 'U1', 'write again');
    await second.bot.manager.idle();
    expect(log).toEqual(['start:write', 'end:write', 'start:write', 'end:write']);
    expect(second.bot.events('T1').filter((e) => e.type === 'permission_required')).toHaveLength(0);
    expect(second.provider.requests[0]!.model).toBe('other-model');
    const messages = second.provider.requests[0]!.messages as Message[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    await waitFor(() => true);
  });
});
