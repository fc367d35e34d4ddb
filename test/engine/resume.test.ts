import { describe, expect, it } from 'vitest';
import {
  approverFromInbox,
  interactiveFromInbox,
  TurnEngine,
  type EngineEvent,
  type InboxItem,
  type Message,
} from '../../src/engine/index.js';
import { InMemoryInbox } from '../support/in-memory-inbox.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { collect, lowRisk, only, recordingTool, risky, waitFor } from '../support/engine-kit.js';

/**
 * A process that dies while a prompt is pending: the store holds what was persisted
 * (every append goes through onAppend), the inbox survives, the engine does not.
 */
async function runUntilPrompt(steps: Step[], inbox: InMemoryInbox, log: string[]) {
  const store: Message[] = [];
  const opened: InboxItem[] = [];
  const engine = new TurnEngine({
    provider: new ScriptedProvider(steps),
    model: 'm',
    sessionId: 'thread-1',
    tools: [recordingTool('write', risky, { log }), recordingTool('read', lowRisk, { log })],
    ports: {
      inbox,
      approver: approverFromInbox(inbox, (item) => opened.push(item)),
      interactive: interactiveFromInbox(inbox, (item) => opened.push(item)),
    },
    hooks: {
      onAppend: (message) => {
        store.push(structuredClone(message));
      },
    },
  });
  const events = engine.run('please write the file')[Symbol.asyncIterator]();
  const seen: EngineEvent[] = [];
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error('the turn ended before a prompt was pending');
    seen.push(next.value);
    if (next.value.type === 'permission_required' || next.value.type === 'interaction_required') break;
  }
  // Pull once more so the approver opens its inbox item and starts waiting; then the
  // process dies: that pull never completes and nothing further is persisted.
  void events.next();
  await waitFor(() => opened.length > 0);
  return { store, opened, seen };
}

function restartedEngine(
  store: Message[],
  inbox: InMemoryInbox,
  steps: Step[],
  log: string[],
  onPrompt?: (item: InboxItem) => void,
) {
  const provider = new ScriptedProvider(steps);
  const engine = new TurnEngine({
    provider,
    model: 'm',
    sessionId: 'thread-1',
    messages: structuredClone(store),
    tools: [recordingTool('write', risky, { log }), recordingTool('read', lowRisk, { log })],
    ports: { inbox, approver: approverFromInbox(inbox, onPrompt), interactive: interactiveFromInbox(inbox, onPrompt) },
  });
  return { engine, provider };
}

describe('resume after a restart', () => {
  it('an approval clicked after the restart runs the tool exactly once and finishes the turn', async () => {
    const inbox = new InMemoryInbox();
    const log: string[] = [];
    const { store, opened } = await runUntilPrompt([callTools(call('write', { path: 'a' }))], inbox, log);
    expect(log).toEqual([]);
    expect(store.at(-1)).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'write' } }] });

    // The click arrives while no engine exists; the item records it.
    expect(inbox.resolve(opened[0]!.id, { kind: 'approval', outcome: 'once' }, 'U_OWNER')).toMatchObject({ ok: true });

    const asked: InboxItem[] = [];
    const { engine, provider } = restartedEngine(store, inbox, [say('written')], log, (item) => asked.push(item));
    const events = await collect(engine.resume());
    expect(only(events, 'turn_start')[0]).toMatchObject({ kind: 'resume' });
    expect(asked).toEqual([]); // not asked again
    expect(only(events, 'permission_required')).toEqual([]);
    expect(log).toEqual(['start:write', 'end:write']);
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
    expect(provider.requests).toHaveLength(1);
    expect(engine.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'written' });

    // Resuming again finds nothing to do: nothing executes twice.
    expect(await collect(engine.resume())).toEqual([]);
    expect(log).toEqual(['start:write', 'end:write']);
  });

  it('a prompt still pending at restart is shown again (same inbox item) and answering it resumes', async () => {
    const inbox = new InMemoryInbox();
    const log: string[] = [];
    const { store, opened } = await runUntilPrompt([callTools(call('write'))], inbox, log);
    const reopened: InboxItem[] = [];
    const { engine } = restartedEngine(store, inbox, [say('done')], log, (item) => {
      reopened.push(item);
      setTimeout(() => inbox.resolve(item.id, { kind: 'approval', outcome: 'once' }), 1);
    });
    await collect(engine.resume());
    expect(reopened.map((item) => item.id)).toEqual([opened[0]!.id]);
    expect(log).toEqual(['start:write', 'end:write']);
  });

  it('skips calls already answered before the crash, and re-processes only the unanswered ones', async () => {
    const inbox = new InMemoryInbox();
    const log: string[] = [];
    const { store, opened } = await runUntilPrompt(
      [callTools(call('read', { n: 1 }), call('write', { n: 2 }))],
      inbox,
      log,
    );
    // The read was low-risk... but pass one asks first, so nothing ran yet; answer the write.
    expect(log).toEqual([]);
    inbox.resolve(opened[0]!.id, { kind: 'approval', outcome: 'deny' });
    // Pretend the read's result was persisted before the crash.
    const readCall = (store.at(-1) as Extract<Message, { role: 'assistant' }>).tool_calls![0]!;
    store.push({ role: 'tool', tool_call_id: readCall.id, content: 'read earlier' });

    const { engine } = restartedEngine(store, inbox, [say('ok')], log);
    expect(engine.unansweredToolCalls().map((c) => c.function.name)).toEqual(['write']);
    const events = await collect(engine.resume());
    expect(log).toEqual([]);
    expect(only(events, 'tool_finished')).toMatchObject([{ name: 'write', status: 'denied' }]);
    const results = engine.messages.filter((m) => m.role === 'tool');
    expect(results).toHaveLength(2);
  });

  it('a question answered after the restart is returned without asking again', async () => {
    const inbox = new InMemoryInbox();
    const log: string[] = [];
    const { store, opened } = await runUntilPrompt(
      [callTools(call('ask_user', { question: 'Which region?' }))],
      inbox,
      log,
    );
    expect(opened[0]).toMatchObject({ kind: 'question' });
    inbox.resolve(opened[0]!.id, { kind: 'question', answer: 'eu-west-1' });
    const asked: InboxItem[] = [];
    const { engine, provider } = restartedEngine(store, inbox, [say('deploying to eu-west-1')], log, (item) =>
      asked.push(item),
    );
    await collect(engine.resume());
    expect(asked).toEqual([]);
    expect(provider.requests[0]!.messages.at(-1)).toMatchObject({ role: 'tool', content: '{"answer":"eu-west-1"}' });
  });

  it('a prompt resolved as interrupted (the turn was stopped) is not asked again on resume', async () => {
    const inbox = new InMemoryInbox();
    const log: string[] = [];
    const { store, opened } = await runUntilPrompt([callTools(call('write'))], inbox, log);
    inbox.resolve(opened[0]!.id, { kind: 'interrupted' });
    const { engine } = restartedEngine(store, inbox, [say('ok')], log);
    const events = await collect(engine.resume());
    expect(only(events, 'tool_finished')).toMatchObject([{ status: 'interrupted' }]);
    expect(log).toEqual([]);
  });

  it('yields nothing when the history ends with an answer or a notice that ended the turn', async () => {
    const answered = restartedEngine(
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      new InMemoryInbox(),
      [],
      [],
    );
    expect(await collect(answered.engine.resume())).toEqual([]);
    const stopped = restartedEngine(
      [
        { role: 'user', content: 'hi' },
        { role: 'notice', kind: 'interrupted', text: 'Stopped.' },
      ],
      new InMemoryInbox(),
      [],
      [],
    );
    expect(await collect(stopped.engine.resume())).toEqual([]);
  });

  it('a history that ends where the model owed an answer (a crash mid-stream, or after a tool round) is answered', async () => {
    const midStream = restartedEngine(
      [{ role: 'user', content: 'tell me a story' }],
      new InMemoryInbox(),
      [say('Once upon a time')],
      [],
    );
    const events = await collect(midStream.engine.resume());
    expect(only(events, 'turn_end')).toMatchObject([{ status: 'completed' }]);
    expect(midStream.provider.requests[0]!.messages).toEqual([{ role: 'user', content: 'tell me a story' }]);

    const afterRound = restartedEngine(
      [
        { role: 'user', content: 'read it' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'the text' },
      ],
      new InMemoryInbox(),
      [say('It says: the text')],
      [],
    );
    await collect(afterRound.engine.resume());
    expect(afterRound.engine.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'It says: the text' });
  });
});

describe('the in-memory inbox', () => {
  it('opening is idempotent on (session, tool_call_id)', () => {
    const inbox = new InMemoryInbox();
    const a = inbox.open({ sessionId: 's', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] });
    const b = inbox.open({ sessionId: 's', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] });
    const c = inbox.open({ sessionId: 's2', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] });
    expect(b.id).toBe(a.id);
    expect(c.id).not.toBe(a.id);
  });

  it('the first answer wins; later ones are told it is already resolved', () => {
    const inbox = new InMemoryInbox();
    const item = inbox.open({ sessionId: 's', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] });
    expect(inbox.resolve(item.id, { kind: 'approval', outcome: 'deny' }, 'U1')).toMatchObject({ ok: true });
    expect(inbox.resolve(item.id, { kind: 'approval', outcome: 'once' }, 'U2')).toMatchObject({
      ok: false,
      reason: 'already_resolved',
    });
    expect(inbox.get(item.id)).toMatchObject({ state: 'resolved', resolvedBy: 'U1', resolution: { outcome: 'deny' } });
  });

  it('refuses an answer outside the offered choices (free text never mints a grant)', () => {
    const inbox = new InMemoryInbox();
    const item = inbox.open({ sessionId: 's', toolCallId: 'c1', kind: 'approval', choices: ['once', 'deny'] });
    expect(inbox.resolve(item.id, { kind: 'approval', outcome: 'always_tool' })).toMatchObject({
      ok: false,
      reason: 'not_a_choice',
    });
    expect(inbox.resolve(item.id, { kind: 'question', answer: 'always_tool' })).toMatchObject({
      ok: false,
      reason: 'not_a_choice',
    });
    expect(inbox.resolve('nope', { kind: 'interrupted' })).toMatchObject({ ok: false, reason: 'unknown_item' });
    expect(inbox.get(item.id)!.state).toBe('pending');
  });
});
