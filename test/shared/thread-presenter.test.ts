// The thread presenter against a recording surface: engine reports in, surface calls out.
// What is asserted is what any platform would be asked to show, in order.
import { describe, expect, it } from 'vitest';
import type { EngineEvent, InboxItem, MessageSource, Usage } from '../../src/engine/index.js';
import type { MessageRef } from '../../src/sessions/thread-records.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { ThreadPresenter } from '../../connectors/shared/thread-presenter.js';
import type {
  AnswerDraft,
  CardLocator,
  CardView,
  InputMark,
  MessageId,
  ThreadNote,
  ThreadSurface,
  WorkStatus,
} from '../../connectors/shared/thread-surface.js';

const SESSION = 'test:W1:C1:T1';

type Call =
  | { op: 'postCard'; id: MessageId; card: CardView }
  | { op: 'updateCard'; id: MessageId; card: CardView }
  | { op: 'postNote'; id: MessageId; note: ThreadNote }
  | { op: 'startAnswer' }
  | { op: 'finishAnswer'; text: string; footer: string | undefined; messages: MessageId[] }
  | { op: 'react' | 'unreact'; id: MessageId; mark: InputMark }
  | { op: 'setStatus'; status: WorkStatus }
  | { op: 'showWaiting'; ahead: number | null }
  | { op: 'cards.find' | 'cards.posting'; toolCallId: string }
  | { op: 'cards.posted'; toolCallId: string; id: MessageId };

/** A thread that remembers every call made on it; `fail` makes an operation throw, `hold` makes it wait. */
class RecordingSurface implements ThreadSurface {
  readonly platform = 'Test';
  readonly calls: Call[] = [];
  readonly fail = new Set<Call['op']>();
  /** Cards "on the platform" by tool call id: what a restarted process finds. */
  readonly placed = new Map<string, MessageId>();
  holdPostCard: Promise<void> | undefined;
  private next = 0;

  readonly cards: CardLocator = {
    find: async (toolCallId) => {
      this.record({ op: 'cards.find', toolCallId });
      return this.placed.get(toolCallId);
    },
    posting: async (toolCallId) => this.record({ op: 'cards.posting', toolCallId }),
    posted: async (toolCallId, id) => {
      this.record({ op: 'cards.posted', toolCallId, id });
      this.placed.set(toolCallId, id);
    },
  };

  messageKey(id: MessageId): string {
    return `test:C1:${id}`;
  }

  async postCard(card: CardView): Promise<MessageId> {
    await this.holdPostCard;
    const id = this.newId();
    this.record({ op: 'postCard', id, card: structuredClone(card) });
    return id;
  }

  async updateCard(id: MessageId, card: CardView): Promise<void> {
    this.record({ op: 'updateCard', id, card: structuredClone(card) });
  }

  async postNote(note: ThreadNote): Promise<MessageId> {
    const id = this.newId();
    this.record({ op: 'postNote', id, note });
    return id;
  }

  startAnswer(): AnswerDraft {
    this.record({ op: 'startAnswer' });
    let text = '';
    const messages: MessageId[] = [];
    return {
      push: (delta) => {
        if (messages.length === 0) messages.push(this.newId());
        text += delta;
      },
      finish: async (ending) =>
        this.record({ op: 'finishAnswer', text, footer: ending?.footer, messages: [...messages] }),
      messages,
    };
  }

  async react(id: MessageId, mark: InputMark): Promise<void> {
    this.record({ op: 'react', id, mark });
  }

  async unreact(id: MessageId, mark: InputMark): Promise<void> {
    this.record({ op: 'unreact', id, mark });
  }

  async setStatus(status: WorkStatus): Promise<void> {
    this.record({ op: 'setStatus', status });
  }

  async showWaiting(ahead: number | null): Promise<void> {
    this.record({ op: 'showWaiting', ahead });
  }

  ops(): string[] {
    return this.calls.map((call) => call.op);
  }

  of<Op extends Call['op']>(op: Op): Extract<Call, { op: Op }>[] {
    return this.calls.filter((call): call is Extract<Call, { op: Op }> => call.op === op);
  }

  private record(call: Call): void {
    if (this.fail.has(call.op)) throw new Error(`${call.op} failed`);
    this.calls.push(call);
  }

  private newId(): MessageId {
    return `m${++this.next}`;
  }
}

function thread(options: { grantScope?: 'thread' | 'channel' } = {}) {
  const surface = new RecordingSurface();
  const refs = new Map<string, MessageRef>();
  const records = { rememberMessage: async (key: string, ref: MessageRef) => void refs.set(key, ref) };
  const logger = memoryLogger();
  const presenter = new ThreadPresenter({ surface, records, logger, ...options }, { id: SESSION });
  const play = async (...events: EngineEvent[]) => {
    for (const event of events) await presenter.onEvent(event);
  };
  return { surface, refs, logger, presenter, play };
}

const usage: Usage = { model: 'openai:gpt-4.1', input: 1200, output: 300 };
const shellArgs = { command: 'rm -rf build' };

function approvalItem(state: InboxItem['state'] = 'pending', extra: Partial<InboxItem> = {}): InboxItem {
  return {
    id: 'item-1',
    sessionId: SESSION,
    toolCallId: 'call_1',
    kind: 'approval',
    choices: ['once', 'always_tool', 'deny'],
    state,
    createdAt: 1,
    ...extra,
  };
}

const proposed: EngineEvent = { type: 'tool_proposed', toolCallId: 'call_1', name: 'run_shell', arguments: shellArgs };
const permission: EngineEvent = {
  type: 'permission_required',
  toolCallId: 'call_1',
  name: 'run_shell',
  arguments: shellArgs,
  reason: 'deletes files',
  command: 'rm -rf build',
};
const started: EngineEvent = { type: 'tool_started', toolCallId: 'call_1', name: 'run_shell' };
const finished: EngineEvent = {
  type: 'tool_finished',
  toolCallId: 'call_1',
  name: 'run_shell',
  status: 'ok',
  resultPreview: '',
  durationMs: 40,
};

describe('the thread presenter', () => {
  it('a turn with an answer: thinking, the text streamed into one answer, the usage footer under it, then idle', async () => {
    const { surface, refs, play } = thread();
    await play(
      { type: 'turn_start', kind: 'run', input: 'hi' },
      { type: 'assistant_delta', text: 'Hello' },
      { type: 'assistant_delta', text: ', Ada.' },
      { type: 'assistant_message', text: 'Hello, Ada.', toolCalls: [], usage },
      { type: 'turn_end', status: 'completed', iterations: 1, pendingSteering: 0 },
    );
    expect(surface.ops()).toEqual(['setStatus', 'startAnswer', 'finishAnswer', 'setStatus']);
    expect(surface.of('setStatus').map((call) => call.status)).toEqual(['thinking', 'idle']);
    expect(surface.of('finishAnswer')).toEqual([
      { op: 'finishAnswer', text: 'Hello, Ada.', footer: '1,200 in · 300 out · ≈ $0.0048', messages: ['m1'] },
    ]);
    // The answer's message is recorded: a 🛑 on it finds the session.
    expect(refs.get('test:C1:m1')).toEqual({ sessionId: SESSION, kind: 'answer' });
  });

  it('a reply taken in after a plain answer: the answer to it is a new message (below the reply), and the usage footer goes under the last one', async () => {
    const { surface, play } = thread();
    await play(
      { type: 'turn_start', kind: 'run', input: 'tell me' },
      { type: 'assistant_delta', text: 'The story ends here.' },
      { type: 'assistant_message', text: 'The story ends here.', toolCalls: [], usage },
      { type: 'steering_injected', id: 's1', text: 'actually, shorter' },
      { type: 'assistant_delta', text: 'Shorter: it ends.' },
      { type: 'assistant_message', text: 'Shorter: it ends.', toolCalls: [], usage },
      { type: 'turn_end', status: 'completed', iterations: 2, pendingSteering: 0 },
    );
    expect(surface.ops()).toEqual([
      'setStatus',
      'startAnswer',
      'finishAnswer',
      'startAnswer',
      'finishAnswer',
      'setStatus',
    ]);
    expect(surface.of('finishAnswer').map((call) => [call.text, call.footer !== undefined, call.messages])).toEqual([
      ['The story ends here.', false, ['m1']],
      ['Shorter: it ends.', true, ['m2']],
    ]);
  });

  it('a tool card through approval: the answer closes first, the card is posted once (written ahead) and then updated in place', async () => {
    const { surface, refs, presenter, play } = thread({ grantScope: 'channel' });
    await play(
      { type: 'turn_start', kind: 'run', input: 'clean up' },
      { type: 'assistant_delta', text: 'Cleaning the build folder.' },
      {
        type: 'assistant_message',
        text: 'Cleaning the build folder.',
        toolCalls: [{ id: 'call_1', name: 'run_shell' }],
      },
      proposed,
    );
    await presenter.onEvent(permission, approvalItem());
    await presenter.onDecision(approvalItem('resolved'), 'U_ADA', 'once');
    await play(started, finished);

    expect(surface.ops()).toEqual([
      'setStatus',
      'startAnswer',
      'finishAnswer',
      'cards.find',
      'cards.posting',
      'postCard',
      'cards.posted',
      'updateCard',
      'setStatus',
      'updateCard',
      'setStatus',
      'updateCard',
      'updateCard',
    ]);
    // Where the conversation stands: working, waiting for the approver, working again.
    expect(surface.of('setStatus').map((call) => call.status)).toEqual(['thinking', 'waiting', 'thinking']);
    const [posted] = surface.of('postCard');
    expect(posted!.card.state).toMatchObject({ phase: 'proposed', name: 'run_shell', argsSummary: 'rm -rf build' });
    const updates = surface.of('updateCard');
    expect(updates.every((update) => update.id === posted!.id)).toBe(true);
    // The prompt's buttons ride on the call's own card, with the words "always" needs.
    expect(updates[0]!.card).toMatchObject({
      state: { phase: 'awaiting_approval', approvalReason: 'deletes files' },
      prompt: { item: { id: 'item-1' }, grantScope: 'channel' },
    });
    // The click: who decided shows, the buttons go.
    expect(updates[1]!.card.prompt).toBeUndefined();
    expect(updates[1]!.card.state.decision).toEqual({ by: 'U_ADA', choice: 'once' });
    expect(updates.slice(2).map((update) => update.card.state.phase)).toEqual(['running', 'done']);
    expect(updates[3]!.card.state.decision).toEqual({ by: 'U_ADA', choice: 'once' });
    // Show all gets every character the approver was asked about.
    expect(presenter.fullTextOf('call_1')).toEqual({
      name: 'run_shell',
      parts: [{ label: 'Command', text: 'rm -rf build' }],
    });
    expect(refs.get(`test:C1:${posted!.id}`)).toEqual({ sessionId: SESSION, kind: 'tool_card', toolCallId: 'call_1' });
  });

  it('a question shows its text on the card rather than its raw arguments', async () => {
    const { surface, presenter } = thread();
    const ask: EngineEvent = {
      type: 'interaction_required',
      toolCallId: 'call_q',
      kind: 'question',
      arguments: { question: 'Which branch?', options: ['main', 'dev'] },
    };
    await presenter.onEvent(ask, {
      ...approvalItem(),
      toolCallId: 'call_q',
      kind: 'question',
      choices: ['main', 'dev'],
    });
    const [card] = surface.of('postCard');
    expect(card!.card.state).toMatchObject({ phase: 'awaiting_answer', argsSummary: '' });
    expect(card!.card.prompt).toMatchObject({ question: 'Which branch?' });
  });

  it('a stop: the partial answer is kept and closed, the open prompt says it was closed, and the note names who stopped', async () => {
    const { surface, presenter, play } = thread();
    await play({ type: 'turn_start', kind: 'run', input: 'go' }, proposed);
    await presenter.onEvent(permission, approvalItem());
    await play({ type: 'assistant_delta', text: 'Half an ans' });
    presenter.noteStoppedBy('U_BOB');
    await presenter.onPromptClosed(
      approvalItem('resolved', { resolution: { kind: 'interrupted' }, resolvedBy: 'U_BOB' }),
    );
    await play(
      { type: 'interrupted', iterations: 1 },
      { type: 'turn_end', status: 'interrupted', iterations: 1, pendingSteering: 0 },
    );

    const closed = surface.of('updateCard').at(-1)!.card;
    expect(closed.state.decision).toEqual({ by: 'U_BOB', choice: 'interrupted' });
    expect(closed.prompt).toBeUndefined();
    expect(surface.of('finishAnswer').map((call) => call.text)).toEqual(['Half an ans']);
    expect(surface.of('postNote').map((call) => call.note)).toEqual([{ kind: 'stopped', by: 'U_BOB' }]);
    expect(surface.ops().slice(-3)).toEqual(['finishAnswer', 'postNote', 'setStatus']);
  });

  it('a stop nobody is named for says only that it stopped; the next turn forgets who stopped the last one', async () => {
    const { surface, presenter, play } = thread();
    presenter.noteStoppedBy('U_BOB');
    await play({ type: 'turn_start', kind: 'run', input: 'again' }, { type: 'interrupted', iterations: 0 });
    expect(surface.of('postNote').map((call) => call.note)).toEqual([{ kind: 'stopped' }]);
  });

  it('a failure ends the answer and posts the error with a Retry button for this session; the step limit offers Continue', async () => {
    const { surface, refs, play } = thread();
    await play(
      { type: 'turn_start', kind: 'run', input: 'go' },
      { type: 'assistant_delta', text: 'Working on' },
      { type: 'error', message: 'The provider said <no>', errorKind: 'provider' },
      { type: 'turn_end', status: 'error', iterations: 1, pendingSteering: 0 },
    );
    expect(surface.ops()).toEqual(['setStatus', 'startAnswer', 'finishAnswer', 'postNote', 'setStatus']);
    const [failed] = surface.of('postNote');
    expect(failed!.note).toEqual({
      kind: 'failed',
      message: 'The provider said <no>',
      action: { kind: 'retry', sessionId: SESSION },
    });
    expect(refs.get(`test:C1:${failed!.id}`)).toEqual({ sessionId: SESSION, kind: 'note' });

    await play(
      { type: 'turn_start', kind: 'retry', input: null },
      { type: 'turn_end', status: 'max_iterations_exceeded', iterations: 20, pendingSteering: 0 },
    );
    expect(surface.of('postNote').at(-1)!.note).toEqual({
      kind: 'step_limit',
      iterations: 20,
      action: { kind: 'continue', sessionId: SESSION },
    });
  });

  it('a spend limit pausing the turn posts its words with a Continue only admins may use; an 80 % notice is a plain note', async () => {
    const { surface, presenter, play } = thread();
    await play(
      { type: 'turn_start', kind: 'run', input: 'go' },
      { type: 'error', message: "Paused: this channel's daily budget of $5.00 is spent.", errorKind: 'budget' },
      { type: 'turn_end', status: 'error', iterations: 1, pendingSteering: 0 },
    );
    expect(surface.of('postNote').map((call) => call.note)).toEqual([
      {
        kind: 'budget_paused',
        message: "Paused: this channel's daily budget of $5.00 is spent.",
        action: { kind: 'continue_past_limit', sessionId: SESSION },
      },
    ]);
    await presenter.onNotice({ kind: 'budget_warning', text: 'This channel has used 80 % of its daily budget.' });
    expect(surface.of('postNote').at(-1)!.note).toEqual({
      kind: 'budget_warning',
      text: 'This channel has used 80 % of its daily budget.',
    });
  });

  it('too many tool calls at once: a note says how many ran', async () => {
    const { surface, play } = thread();
    await play({ type: 'tool_calls_limited', requested: 30, allowed: 20 });
    expect(surface.of('postNote').map((call) => call.note)).toEqual([
      { kind: 'tool_calls_limited', requested: 30, allowed: 20 },
    ]);
  });

  it('a decision clicked before its card is known (after a restart) shows on the card found again, which is not posted twice', async () => {
    const { surface, presenter, play } = thread();
    surface.placed.set('call_1', 'card-from-before');
    await presenter.onDecision(approvalItem('resolved'), 'U_ADA', 'always_tool');
    expect(surface.calls).toEqual([]);

    // The click resumed the turn: the call is proposed again and runs.
    await play(proposed, started);
    expect(surface.ops()).toEqual(['cards.find', 'updateCard']);
    const [update] = surface.of('updateCard');
    expect(update).toMatchObject({
      id: 'card-from-before',
      card: { state: { phase: 'running', decision: { by: 'U_ADA', choice: 'always_tool' } } },
    });
  });

  it('a call heard of only when it runs (its card posted before a restart) finds that card instead of posting one', async () => {
    const { surface, play } = thread();
    surface.placed.set('call_1', 'card-from-before');
    await play(started, finished);
    expect(surface.ops()).toEqual(['cards.find', 'updateCard', 'updateCard']);
    expect(surface.of('updateCard').map((call) => call.id)).toEqual(['card-from-before', 'card-from-before']);
  });

  it('a click while the card is still being posted updates that card afterwards, never posts a second one', async () => {
    const { surface, presenter, play } = thread();
    let release = () => {};
    surface.holdPostCard = new Promise((resolve) => (release = resolve));
    const posting = play(proposed);
    await waitFor(() => surface.ops().includes('cards.posting'));
    const clicking = presenter.onDecision(approvalItem('resolved'), 'U_ADA', 'deny');
    release();
    await Promise.all([posting, clicking]);
    expect(surface.of('postCard')).toHaveLength(1);
    const [update] = surface.of('updateCard');
    expect(update).toMatchObject({
      id: surface.of('postCard')[0]!.id,
      card: { state: { decision: { by: 'U_ADA', choice: 'deny' } } },
    });
  });

  it("marks a person's message with what became of it", async () => {
    const { surface, presenter } = thread();
    const from = (messageId: string): MessageSource => ({
      platform: 'test',
      workspace: 'W1',
      channel: 'C1',
      thread: 'T1',
      userId: 'U_ADA',
      messageId,
    });
    await presenter.onInput('started', from('u1'));
    await presenter.onInput('queued', from('u2'));
    await presenter.onInput('injected', from('u3'));
    await presenter.onInput('answered', from('u4'));
    await presenter.onInput('dropped', from('u5'));
    await presenter.onInput('dropped', from('u6'));
    await presenter.onInput('started', undefined);
    expect(surface.calls).toEqual([
      { op: 'react', id: 'u1', mark: 'received' },
      { op: 'react', id: 'u2', mark: 'received' },
      { op: 'react', id: 'u3', mark: 'taken' },
      { op: 'react', id: 'u4', mark: 'taken' },
      { op: 'unreact', id: 'u5', mark: 'received' },
      { op: 'react', id: 'u5', mark: 'dropped' },
      // Dropped replies are explained in words, once however many there are.
      { op: 'postNote', id: 'm1', note: { kind: 'dropped_at_stop' } },
      { op: 'unreact', id: 'u6', mark: 'received' },
      { op: 'react', id: 'u6', mark: 'dropped' },
    ]);
  });

  it('a wait for a model slot is shown, and its end', async () => {
    const { surface, presenter } = thread();
    await presenter.onWaiting(2);
    await presenter.onWaiting(null);
    expect(surface.calls).toEqual([
      { op: 'showWaiting', ahead: 2 },
      { op: 'showWaiting', ahead: null },
    ]);
  });

  it('a surface call that fails is logged and the turn goes on', async () => {
    const { surface, logger, presenter, play } = thread();
    surface.fail.add('postCard');
    surface.fail.add('unreact');
    await play(proposed);
    await presenter.onInput('dropped', {
      platform: 'test',
      workspace: 'W1',
      channel: 'C1',
      thread: 'T1',
      userId: 'U_ADA',
      messageId: 'u1',
    });
    await play({ type: 'error', message: 'boom', errorKind: 'provider' });
    expect(surface.ops()).toEqual(['cards.find', 'cards.posting', 'react', 'postNote', 'postNote']);
    expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      'could not post a tool card in Test',
      'could not remove a reaction in Test',
    ]);
    // The card was never posted: the next event tries again.
    surface.fail.clear();
    await play(started);
    expect(surface.of('postCard')).toHaveLength(1);
  });
});

describe('the thread presenter at a shutdown for a restart', () => {
  it('closes an answer being streamed, says the turn carries on after the restart, and goes idle', async () => {
    const { surface, presenter, play } = thread();
    await play({ type: 'turn_start', kind: 'run', input: 'hi' }, { type: 'assistant_delta', text: 'Half an ans' });
    await presenter.onSuspend(false);
    expect(surface.of('finishAnswer').map((call) => call.text)).toEqual(['Half an ans']);
    expect(surface.of('postNote').map((call) => call.note)).toEqual([{ kind: 'restarting' }]);
    expect(surface.ops().slice(-3)).toEqual(['finishAnswer', 'postNote', 'setStatus']);
    expect(surface.of('setStatus').at(-1)?.status).toBe('idle');
  });

  it('adds nothing to a thread that only waits for a click: its buttons keep working after the restart', async () => {
    const { surface, presenter, play } = thread();
    await play({ type: 'turn_start', kind: 'run', input: 'hi' }, proposed);
    await presenter.onEvent(permission, approvalItem());
    await presenter.onSuspend(true);
    expect(surface.of('postNote')).toEqual([]);
    expect(surface.of('updateCard').filter((call) => call.card.prompt?.item.state !== 'pending')).toEqual([]);
  });

  it('says so when a tool was running (its card is redrawn as cut by the next start)', async () => {
    const { surface, presenter, play } = thread();
    await play({ type: 'turn_start', kind: 'run', input: 'hi' }, proposed, started);
    await presenter.onSuspend(false);
    expect(surface.of('postNote').map((call) => call.note.kind)).toEqual(['restarting']);
  });
});

describe('the thread presenter when this instance takes a thread over (cluster mode)', () => {
  it('closes the answer the stopped instance left open, then says it picked the thread up', async () => {
    const { surface, presenter } = thread();
    const closed: string[] = [];
    Object.assign(surface, { closeStaleAnswer: async () => void closed.push('stale answer closed') });
    await presenter.onTakeover();
    expect(closed).toEqual(['stale answer closed']);
    expect(surface.of('postNote').map((call) => call.note)).toEqual([{ kind: 'taken_over' }]);
  });

  it('still says so when closing the old answer fails', async () => {
    const { surface, presenter } = thread();
    Object.assign(surface, { closeStaleAnswer: () => Promise.reject(new Error('ratelimited')) });
    await presenter.onTakeover();
    expect(surface.of('postNote').map((call) => call.note.kind)).toEqual(['taken_over']);
  });
});
