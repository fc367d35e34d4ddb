import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ProviderError, type Message } from '../../src/engine/index.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { abortableDelay, lowRisk, recordingTool, risky, shellTool, waitFor } from '../support/engine-kit.js';
import { TestBot } from '../support/test-connector.js';

let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

async function start(steps: Step[], options: Partial<Parameters<typeof TestBot.start>[0]> = {}) {
  const provider = new ScriptedProvider(steps);
  bot = await TestBot.start({ provider, ...options });
  return { bot, provider };
}

const transcriptRoles = (messages: Message[]) => messages.map((m) => m.role);

describe('messages become turns', () => {
  it('a mention starts a turn in its thread, and every message is persisted as it is appended', async () => {
    const { bot } = await start([say('Hello!')]);
    expect(await bot.say('T1', 'U1', 'hi bot')).toMatchObject({ status: 'started' });
    await bot.manager.idle();
    const stored = await bot.store.loadTranscript(bot.sessionId('T1'));
    expect(stored).toMatchObject([
      { role: 'user', content: 'hi bot', source: { userId: 'U1' } },
      { role: 'assistant', content: 'Hello!' },
    ]);
    expect(await bot.store.getSession(bot.sessionId('T1'))).toMatchObject({ startedBy: 'U1', model: 'scripted-model' });
    expect(await bot.store.getPendingInputs(bot.sessionId('T1'))).toEqual([]);
  });

  it('a reply while the bot works is queued, then injected into the running turn; it never starts a second turn', async () => {
    // The read ends only once the reply is queued: a delay here was a race on a busy machine.
    let endRead!: () => void;
    const readMayEnd = new Promise<void>((resolve) => (endRead = resolve));
    const { bot, provider } = await start([callTools(call('slow_read')), say('Using staging.')], {
      tools: [recordingTool('slow_read', lowRisk, { until: readMayEnd })],
    });
    await bot.say('T1', 'U1', 'deploy');
    await bot.waitForEvent('T1', 'tool_started');
    const reply = await bot.say('T1', 'U2', 'use staging');
    expect(reply).toMatchObject({ status: 'queued' });
    endRead();
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'use staging' });
    const dispositions = bot.inputs
      .filter((i) => reply.status === 'queued' && i.inputId === reply.inputId)
      .map((i) => i.disposition);
    expect(dispositions).toEqual(['queued', 'injected']);
    expect(bot.events('T1').filter((e) => e.type === 'turn_start')).toHaveLength(1);
    // The steerer became a participant (they may stop the thread now).
    expect((await bot.store.getSession(bot.sessionId('T1')))!.steerers).toEqual(['U2']);
  });

  it('a replayed platform event (same event id) is processed once', async () => {
    const { bot, provider } = await start([say('once')]);
    expect(await bot.say('T1', 'U1', 'hello', 'Ev1')).toMatchObject({ status: 'started' });
    expect(await bot.say('T1', 'U1', 'hello', 'Ev1')).toEqual({ status: 'duplicate' });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(1);
  });

  it('two threads are two sessions', async () => {
    const { bot } = await start([say('one'), say('two')]);
    await bot.say('T1', 'U1', 'first thread');
    await bot.say('T2', 'U1', 'second thread');
    await bot.manager.idle();
    expect((await bot.store.listSessionIds()).sort()).toEqual([bot.sessionId('T1'), bot.sessionId('T2')].sort());
  });

  it('someone not on ALLOWED_USERS is refused and nothing is stored', async () => {
    const { bot, provider } = await start([say('x')], { allowedUsers: 'U1,U2' });
    expect(await bot.say('T1', 'U9', 'let me in')).toEqual({
      status: 'refused',
      reason: expect.stringContaining('not on the list'),
    });
    expect(provider.requests).toHaveLength(0);
    expect(await bot.store.listSessionIds()).toEqual([]);
  });

  it('Retry after a provider error runs the failed turn again', async () => {
    const { bot, provider } = await start([
      { error: new ProviderError('server', 'The provider had a server error.') },
      say('worked'),
    ]);
    await bot.say('T1', 'U1', 'question');
    await bot.manager.idle();
    expect(await bot.manager.controls.retry(bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(2);
    expect(await bot.manager.controls.retry(bot.sessionId('T1'), 'U1')).toEqual({ status: 'nothing_to_do' });
  });
});

describe('engines in memory', () => {
  it('an idle session is evicted, and rebuilt from the store on the next message', async () => {
    const provider = new ScriptedProvider([say('first answer'), say('second answer')]);
    bot = await TestBot.start({ provider, manager: { idleEvictMs: 40 } });
    await bot.say('T1', 'U1', 'hello');
    await bot.manager.idle();
    expect(bot.manager.liveCount).toBe(1);
    await waitFor(() => bot!.manager.liveCount === 0, 5_000);
    await bot.say('T1', 'U1', 'and again');
    await bot.manager.idle();
    expect(provider.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });
});

describe('approvals and who may give them', () => {
  it('the thread starter approves; the tool runs once; a second click on the same card is stale', async () => {
    const log: string[] = [];
    const { bot } = await start([callTools(call('write', { path: 'a' })), say('written')], {
      tools: [recordingTool('write', risky, { log })],
    });
    await bot.say('T1', 'U1', 'write it');
    const prompt = await bot.waitForPrompt('T1');
    expect(prompt).toMatchObject({ kind: 'approval', choices: ['once', 'always_tool', 'deny'], state: 'pending' });
    expect(await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({ ok: true });
    await bot.manager.idle();
    expect(log).toEqual(['start:write', 'end:write']);
    expect(await bot.manager.resolve(prompt.id, { choice: 'deny' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'already_resolved',
    });
  });

  it('a click by someone else is refused with a reason, and the prompt stays pending', async () => {
    const log: string[] = [];
    const { bot } = await start([callTools(call('write')), say('ok')], {
      tools: [recordingTool('write', risky, { log })],
    });
    await bot.say('T1', 'U1', 'write it');
    const prompt = await bot.waitForPrompt('T1');
    expect(await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U_STRANGER')).toEqual({
      ok: false,
      reason: 'refused',
      message: 'Only the person who started this thread can approve this.',
    });
    expect((await bot.inbox.get(prompt.id))!.state).toBe('pending');
    expect(log).toEqual([]);
    await bot.manager.resolve(prompt.id, { choice: 'deny' }, 'U1');
    await bot.manager.idle();
  });

  it('with ADMINS set, only an admin approves (not even the starter)', async () => {
    const { bot } = await start([callTools(call('write')), say('ok')], {
      tools: [recordingTool('write', risky)],
      admins: 'U_ADMIN',
    });
    await bot.say('T1', 'U1', 'write it');
    const prompt = await bot.waitForPrompt('T1');
    expect(await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'refused',
    });
    expect(await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U_ADMIN')).toMatchObject({
      ok: true,
      item: { resolvedBy: 'U_ADMIN' },
    });
    await bot.manager.idle();
  });

  it('a choice the prompt did not offer is refused (no "always this command" for a non-shell call)', async () => {
    const { bot } = await start([callTools(call('write')), say('ok')], { tools: [recordingTool('write', risky)] });
    await bot.say('T1', 'U1', 'write it');
    const prompt = await bot.waitForPrompt('T1');
    expect(await bot.manager.resolve(prompt.id, { choice: 'always_command' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'not_a_choice',
    });
    expect(await bot.manager.resolve(prompt.id, { choice: 'yes please' }, 'U1')).toEqual({
      ok: false,
      reason: 'invalid_choice',
    });
    await bot.manager.resolve(prompt.id, { choice: 'deny' }, 'U1');
    await bot.manager.idle();
  });

  it('"always allow this command" is remembered for the thread, listed, and can be revoked', async () => {
    const ran: string[] = [];
    const provider = new ScriptedProvider([
      callTools(call('run_shell', { command: 'npm test' })),
      say('one'),
      callTools(call('run_shell', { command: 'npm test' })),
      say('two'),
      callTools(call('run_shell', { command: 'npm test' })),
      say('three'),
    ]);
    bot = await TestBot.start({ provider, tools: [shellTool(ran)] });
    await bot.say('T1', 'U1', 'test it');
    const prompt = await bot.waitForPrompt('T1');
    expect(prompt.choices).toContain('always_command');
    await bot.manager.resolve(prompt.id, { choice: 'always_command' }, 'U1');
    await bot.manager.idle();
    expect(await bot.manager.controls.listGrants(bot.sessionId('T1'), 'U1')).toMatchObject({
      status: 'done',
      value: { thread: { commands: [{ tool: 'run_shell', command: 'npm test' }] } },
    });

    await bot.say('T1', 'U1', 'again');
    await bot.manager.idle();
    expect(ran).toEqual(['npm test', 'npm test']);
    expect(bot.events('T1').filter((e) => e.type === 'permission_required')).toHaveLength(1);

    expect(
      await bot.manager.controls.revokeGrant(bot.sessionId('T1'), { tool: 'run_shell', command: 'npm test' }, 'U1'),
    ).toMatchObject({ status: 'done' });
    expect(await bot.manager.controls.listGrants(bot.sessionId('T1'), 'U1')).toMatchObject({
      status: 'done',
      value: { thread: { commands: [] } },
    });
    await bot.say('T1', 'U1', 'and again');
    await bot.waitForEvent('T1', 'permission_required', 2);
    expect(ran).toEqual(['npm test', 'npm test']);
    await bot.manager.interrupt(bot.sessionId('T1'), 'U1');
    await bot.manager.idle();
  });
});

describe('replies to a waiting prompt', () => {
  it('a reply while a call awaits approval declines it, quoting the reply, and steers the turn', async () => {
    const log: string[] = [];
    const { bot, provider } = await start(
      [callTools(call('deploy', { target: 'prod' })), say('Deploying to staging instead.')],
      {
        tools: [recordingTool('deploy', risky, { log })],
      },
    );
    await bot.say('T1', 'U1', 'deploy');
    const prompt = await bot.waitForPrompt('T1');
    expect(await bot.say('T1', 'U1', 'no, use staging')).toMatchObject({ status: 'queued' });
    await bot.manager.idle();
    expect(log).toEqual([]);
    expect((await bot.inbox.get(prompt.id))!.resolution).toMatchObject({ kind: 'approval', outcome: 'deny' });
    expect(bot.closedPrompts.map((p) => p.id)).toEqual([prompt.id]);
    const second = provider.requests[1]!.messages;
    expect(second.at(-2)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('the user replied instead of approving: \\"no, use staging\\"'),
    });
    expect(second.at(-1)).toEqual({ role: 'user', content: 'no, use staging' });
  });

  it('a reply while a question waits is its answer', async () => {
    const { bot, provider } = await start([
      callTools(call('ask_user', { question: 'Which region?', options: ['eu', 'us'] })),
      say('eu it is'),
    ]);
    await bot.say('T1', 'U1', 'set it up');
    const prompt = await bot.waitForPrompt('T1', 'interaction_required');
    expect(prompt).toMatchObject({ kind: 'question', choices: ['eu', 'us'] });
    expect(await bot.say('T1', 'U1', 'eu-west-1 please')).toMatchObject({ status: 'answered' });
    await bot.manager.idle();
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: '{"answer":"eu-west-1 please"}',
    });
  });
});

describe('directory requests', () => {
  it('are offered to the model only when the tools can act on a grant', async () => {
    const { bot, provider } = await start([say('hi')]);
    await bot.say('T1', 'U1', 'hello');
    await bot.manager.idle();
    const offered = provider.requests[0]!.tools.map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(['ask_user', 'propose_plan']));
    expect(offered).not.toContain('request_directory');
  });
});

describe('stopping', () => {
  it('the starter stops a running turn; its pending prompt is closed by them, so a later click is stale and can say who stopped it', async () => {
    const { bot } = await start([callTools(call('write'))], { tools: [recordingTool('write', risky)] });
    await bot.say('T1', 'U1', 'write');
    const prompt = await bot.waitForPrompt('T1');
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U1')).toEqual({
      status: 'done',
      sessionId: bot.sessionId('T1'),
    });
    await bot.manager.idle();
    expect(bot.events('T1').at(-1)).toMatchObject({ type: 'turn_end', status: 'interrupted' });
    expect(await bot.inbox.get(prompt.id)).toMatchObject({
      state: 'resolved',
      resolution: { kind: 'interrupted' },
      resolvedBy: 'U1',
    });
    expect(await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'already_resolved',
      item: { resolvedBy: 'U1' },
    });
  });

  it('a stranger may not stop a thread; a participant and an admin may', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'slow',
      schema: z.object({}),
      metadata: lowRisk,
      execute: async (_args, { signal }) => {
        await abortableDelay(10_000, signal).catch(() => undefined);
        return 'stopped';
      },
    });
    const { bot } = await start([callTools(call('slow')), callTools(call('slow'))], {
      tools: [slow],
      admins: 'U_ADMIN',
    });
    await bot.say('T1', 'U1', 'go');
    await bot.waitForEvent('T1', 'tool_started');
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U_STRANGER')).toMatchObject({ status: 'refused' });
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U_ADMIN')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
    await bot.say('T1', 'U2', 'go again');
    await bot.waitForEvent('T1', 'tool_started', 2);
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U2')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
  });

  it('replies queued in a turn that was then stopped are dropped visibly, not run', async () => {
    const { bot, provider } = await start([callTools(call('write'))], { tools: [recordingTool('write', risky)] });
    await bot.say('T1', 'U1', 'write');
    await bot.waitForPrompt('T1');
    // The reply declines the approval and is queued; the stop lands before it is injected.
    const reply = await bot.say('T1', 'U1', 'also do X');
    await bot.manager.interrupt(bot.sessionId('T1'), 'U1');
    await bot.manager.idle();
    const mine = bot.inputs
      .filter((i) => reply.status === 'queued' && i.inputId === reply.inputId)
      .map((i) => i.disposition);
    expect(mine[0]).toBe('queued');
    expect(['dropped', 'injected']).toContain(mine.at(-1));
    expect(provider.requests).toHaveLength(1);
    expect(await bot.store.getPendingInputs(bot.sessionId('T1'))).toEqual([]);
  });

  it('a reply sent the moment the stop note is shown starts the next turn; it is not dropped with the stopped turn', async () => {
    let again: Awaited<ReturnType<TestBot['say']>> | undefined;
    const { bot, provider } = await start(
      [{ text: 'Thinking about it', stallAfterChunks: 1 }, say('Again, from the top.')],
      {
        // The reply leaves as the "Stopped" note is drawn, before the stopped turn has ended.
        onShown: async (event, shownBot) => {
          if (event.type === 'interrupted') again = await shownBot.say('T1', 'U1', 'again');
        },
      },
    );
    await bot.say('T1', 'U1', 'think');
    await bot.waitForEvent('T1', 'assistant_delta');
    await bot.manager.interrupt(bot.sessionId('T1'), 'U1');
    await waitFor(() => provider.requests.length === 2);
    await bot.manager.idle();
    expect(provider.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'again' });
    const mine = bot.inputs
      .filter((i) => again?.status === 'queued' && i.inputId === again.inputId)
      .map((i) => i.disposition);
    expect(mine).not.toContain('dropped');
    expect(bot.events('T1').filter((e) => e.type === 'turn_start')).toHaveLength(2);
    expect(await bot.store.getPendingInputs(bot.sessionId('T1'))).toEqual([]);
  });

  it('of the replies left when a stop lands, only those queued before it are dropped; one sent after it starts the next turn', async () => {
    let after: Awaited<ReturnType<TestBot['say']>> | undefined;
    const { bot, provider } = await start(
      [{ text: 'Thinking about it', stallAfterChunks: 1 }, say('After the stop.')],
      {
        onShown: async (event, shownBot) => {
          if (event.type === 'interrupted') after = await shownBot.say('T1', 'U1', 'sent after the stop');
        },
      },
    );
    await bot.say('T1', 'U1', 'think');
    await bot.waitForEvent('T1', 'assistant_delta');
    // Queued as steering while the answer streams: the stop lands before any safe point takes it.
    const before = await bot.say('T1', 'U1', 'sent before the stop');
    await bot.manager.interrupt(bot.sessionId('T1'), 'U1');
    await waitFor(() => provider.requests.length === 2);
    await bot.manager.idle();
    const dispositionsOf = (reply: typeof before | undefined) =>
      bot.inputs.filter((i) => reply?.status === 'queued' && i.inputId === reply.inputId).map((i) => i.disposition);
    expect(dispositionsOf(before).at(-1)).toBe('dropped');
    expect(dispositionsOf(after)).not.toContain('dropped');
    const asked = JSON.stringify(provider.requests[1]!.messages);
    expect(asked).toContain('sent after the stop');
    expect(asked).not.toContain('sent before the stop');
  });
});

describe('forgetting', () => {
  it('one call deletes everything stored for the thread', async () => {
    const { bot } = await start([callTools(call('write')), say('done')], { tools: [recordingTool('write', risky)] });
    await bot.say('T1', 'U1', 'write');
    const prompt = await bot.waitForPrompt('T1');
    await bot.manager.resolve(prompt.id, { choice: 'always_tool' }, 'U1');
    await bot.manager.idle();
    await bot.store.putMessageRef('C1:171.1', {
      sessionId: bot.sessionId('T1'),
      kind: 'tool',
      toolCallId: prompt.toolCallId,
    });
    expect(await bot.manager.controls.forget(bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    expect(await bot.store.getSession(bot.sessionId('T1'))).toBeUndefined();
    expect(await bot.store.loadTranscript(bot.sessionId('T1'))).toEqual([]);
    expect(await bot.inbox.get(prompt.id)).toBeUndefined();
    expect(await bot.store.getMessageRef('C1:171.1')).toBeUndefined();
    expect(await bot.store.listSessionIds()).toEqual([]);
    await waitFor(() => true);
    expect(transcriptRoles(await bot.store.loadTranscript(bot.sessionId('T1')))).toEqual([]);
  });
});
