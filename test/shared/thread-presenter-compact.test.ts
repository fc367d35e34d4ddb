// The thread presenter's newer duties against a recording surface: where the conversation
// stands (thinking, waiting for a person, idle, with a new request's title), compact progress
// (TOOL_DISPLAY=compact: tool calls as steps of one reply, a card only for a call that asks),
// and the 👍 / 👎 asked under a completed turn's final answer.
import { describe, expect, it } from 'vitest';
import type { EngineEvent, InboxItem, Usage } from '../../src/engine/index.js';
import type { MessageRef } from '../../src/sessions/thread-records.js';
import { memoryLogger } from '../support/engine-kit.js';
import type { AnsweredTurn } from '../../src/feedback/feedback-book.js';
import { ThreadPresenter } from '../../connectors/shared/thread-presenter.js';
import type {
  AnswerDraft,
  AnswerEnding,
  CardView,
  MessageId,
  ProgressStep,
  StatusDetails,
  ThreadSurface,
  WorkStatus,
} from '../../connectors/shared/thread-surface.js';

const SESSION = 'test:W1:C1:T1';

type Call =
  | { op: 'startAnswer'; draft: number }
  | { op: 'push'; draft: number; text: string }
  | { op: 'step'; draft: number; step: ProgressStep }
  | { op: 'finish'; draft: number; ending: AnswerEnding | undefined; messages: MessageId[] }
  | { op: 'postCard'; id: MessageId; card: CardView }
  | { op: 'updateCard'; id: MessageId; card: CardView }
  | { op: 'postNote'; note: unknown }
  | { op: 'setStatus'; status: WorkStatus; details: StatusDetails | undefined };

class StepSurface implements ThreadSurface {
  readonly platform = 'Test';
  readonly calls: Call[] = [];
  private next = 0;
  private drafts = 0;
  constructor(private readonly drawsSteps = true) {}
  readonly cards = { find: async () => undefined, posting: async () => undefined, posted: async () => undefined };
  messageKey(id: MessageId): string {
    return `test:C1:${id}`;
  }
  newId(): MessageId {
    return `m${++this.next}`;
  }
  async postCard(card: CardView): Promise<MessageId> {
    const id = this.newId();
    this.calls.push({ op: 'postCard', id, card: structuredClone(card) });
    return id;
  }
  async updateCard(id: MessageId, card: CardView): Promise<void> {
    this.calls.push({ op: 'updateCard', id, card: structuredClone(card) });
  }
  async postNote(note: unknown): Promise<MessageId> {
    this.calls.push({ op: 'postNote', note });
    return `m${++this.next}`;
  }
  startAnswer(): AnswerDraft {
    const draft = ++this.drafts;
    this.calls.push({ op: 'startAnswer', draft });
    const messages: MessageId[] = [];
    const open = () => {
      if (messages.length === 0) messages.push(this.newId());
    };
    return {
      push: (text) => {
        open();
        this.calls.push({ op: 'push', draft, text });
      },
      ...(this.drawsSteps
        ? {
            step: (step: ProgressStep) => {
              open();
              this.calls.push({ op: 'step', draft, step: { ...step } });
            },
          }
        : {}),
      finish: async (ending) => void this.calls.push({ op: 'finish', draft, ending, messages: [...messages] }),
      messages,
    };
  }
  async react(): Promise<void> {}
  async unreact(): Promise<void> {}
  async setStatus(status: WorkStatus, details?: StatusDetails): Promise<void> {
    this.calls.push({ op: 'setStatus', status, details });
  }
  async showWaiting(): Promise<void> {}
  of<Op extends Call['op']>(op: Op): Extract<Call, { op: Op }>[] {
    return this.calls.filter((call): call is Extract<Call, { op: Op }> => call.op === op);
  }
}

function thread(options: { compact?: boolean; drawsSteps?: boolean; mask?: (text: string) => string } = {}) {
  const surface = new StepSurface(options.drawsSteps ?? true);
  const refs = new Map<string, MessageRef>();
  const answered: AnsweredTurn[] = [];
  const presenter = new ThreadPresenter(
    {
      surface,
      records: { rememberMessage: async (key: string, ref: MessageRef) => void refs.set(key, ref) },
      logger: memoryLogger(),
      toolDisplay: options.compact ? 'compact' : 'cards',
      feedback: { answered: async (turn) => void answered.push(turn) },
      ...(options.mask ? { mask: options.mask } : {}),
    },
    { id: SESSION, startedBy: 'U_ADA' },
  );
  const play = async (...events: EngineEvent[]) => {
    for (const event of events) await presenter.onEvent(event);
  };
  return { surface, presenter, play, answered, refs };
}

const usage: Usage = { model: 'openai:gpt-4.1', input: 100, output: 20 };
const call = (id: string, command: string) => ({
  proposed: { type: 'tool_proposed', toolCallId: id, name: 'run_shell', arguments: { command } } as EngineEvent,
  started: { type: 'tool_started', toolCallId: id, name: 'run_shell' } as EngineEvent,
  finished: {
    type: 'tool_finished',
    toolCallId: id,
    name: 'run_shell',
    status: 'ok',
    resultPreview: `${command}: ok`,
    durationMs: 5,
  } as EngineEvent,
});
const start: EngineEvent = {
  type: 'turn_start',
  kind: 'run',
  input: 'check the build <@U_EVE>',
  source: { platform: 'test', channel: 'C1', thread: 'T1', userId: 'U_ADA', messageId: 'req-1' },
};
const end: EngineEvent = { type: 'turn_end', status: 'completed', iterations: 2, pendingSteering: 0 };

describe('compact progress (TOOL_DISPLAY=compact)', () => {
  it('shows every tool call as a step of one reply, text before and after, and no card at all', async () => {
    const { surface, play } = thread({ compact: true });
    const a = call('call_a', 'npm test');
    const b = call('call_b', 'git status');
    await play(
      start,
      { type: 'assistant_delta', text: 'Checking.' },
      {
        type: 'assistant_message',
        text: 'Checking.',
        toolCalls: [
          { id: 'call_a', name: 'run_shell' },
          { id: 'call_b', name: 'run_shell' },
        ],
        usage,
      },
      a.proposed,
      b.proposed,
      a.started,
      a.finished,
      b.started,
      b.finished,
      { type: 'assistant_delta', text: 'All green.' },
      { type: 'assistant_message', text: 'All green.', toolCalls: [], usage },
      end,
    );
    expect(surface.of('startAnswer')).toHaveLength(1);
    expect(surface.of('postCard')).toEqual([]);
    expect(surface.of('step').map(({ step }) => [step.id, step.status])).toEqual([
      ['call_a', 'pending'],
      ['call_b', 'pending'],
      ['call_a', 'in_progress'],
      ['call_a', 'complete'],
      ['call_b', 'in_progress'],
      ['call_b', 'complete'],
    ]);
    const steps = surface.of('step');
    expect(steps[0]!.step).toMatchObject({ title: 'run_shell', details: 'npm test' });
    expect(steps[3]!.step.output).toBe('npm test: ok');
    expect(surface.of('finish')).toHaveLength(1);
  });

  it('a call that asks a person: the reply closes, the call gets its own card with the buttons, and the steps go on after', async () => {
    const { surface, presenter, play } = thread({ compact: true });
    const a = call('call_a', 'rm -rf build');
    await play(
      start,
      { type: 'assistant_delta', text: 'Cleaning.' },
      { type: 'assistant_message', text: 'Cleaning.', toolCalls: [{ id: 'call_a', name: 'run_shell' }] },
      a.proposed,
    );
    const item: InboxItem = {
      id: 'item-1',
      sessionId: SESSION,
      toolCallId: 'call_a',
      kind: 'approval',
      choices: ['once', 'deny'],
      state: 'pending',
      createdAt: 1,
    };
    await presenter.onEvent(
      {
        type: 'permission_required',
        toolCallId: 'call_a',
        name: 'run_shell',
        arguments: { command: 'rm -rf build' },
        reason: 'deletes files',
      },
      item,
    );
    await presenter.onDecision({ ...item, state: 'resolved' }, 'U_ADA', 'once');
    await play(a.started, a.finished, end);

    const ops = surface.calls.map((c) => c.op);
    // The reply (text and the pending step) is finished before the card is posted.
    expect(ops.indexOf('finish')).toBeLessThan(ops.indexOf('postCard'));
    const [card] = surface.of('postCard');
    expect(card!.card.state).toMatchObject({
      name: 'run_shell',
      argsSummary: 'rm -rf build',
      phase: 'awaiting_approval',
    });
    expect(card!.card.prompt?.item.id).toBe('item-1');
    // The card shows the decision and the outcome; the steps after the decision go into a new reply.
    expect(surface.of('updateCard').map((u) => u.card.state.phase)).toEqual(['awaiting_approval', 'running', 'done']);
    expect(surface.of('startAnswer')).toHaveLength(2);
    expect(
      surface
        .of('step')
        .filter((s) => s.draft === 2)
        .map((s) => s.step.status),
    ).toEqual(['in_progress', 'complete']);
    expect(surface.of('setStatus').map((s) => s.status)).toEqual(['thinking', 'waiting', 'thinking', 'idle']);
  });

  it('on a surface that cannot draw steps, compact mode shows cards as before', async () => {
    const { surface, play } = thread({ compact: true, drawsSteps: false });
    const a = call('call_a', 'ls');
    await play(start, a.proposed, a.started, a.finished, end);
    expect(surface.of('postCard')).toHaveLength(1);
    expect(surface.of('step')).toEqual([]);
  });
});

describe('the conversation status and feedback', () => {
  it('a new request sends its words (secrets masked) and starter with the first status; a resumed turn sends none', async () => {
    const { surface, play } = thread({ mask: (text) => text.replace('build', '[secret]') });
    await play(start, end, { type: 'turn_start', kind: 'resume', input: null }, end);
    expect(surface.of('setStatus').map((s) => [s.status, s.details])).toEqual([
      ['thinking', { title: 'check the [secret] <@U_EVE>', initiator: 'U_ADA' }],
      ['idle', undefined],
      ['thinking', undefined],
      ['idle', undefined],
    ]);
  });

  it("a completed turn's final answer asks for feedback and is recorded with its turn and model; a stopped one is not", async () => {
    const { surface, play, answered } = thread();
    await play(
      start,
      { type: 'assistant_delta', text: 'Done.' },
      { type: 'assistant_message', text: 'Done.', toolCalls: [], usage },
      end,
    );
    const ending = surface.of('finish')[0]!.ending;
    expect(ending?.feedback).toBe(true);
    expect(typeof ending?.footer).toBe('string');
    expect(answered).toHaveLength(1);
    const [turn] = answered;
    expect(turn).toMatchObject({
      sessionId: SESSION,
      messageKey: `test:C1:${surface.of('finish')[0]!.messages[0]}`,
      model: 'openai:gpt-4.1',
      requestId: 'req-1',
    });
    expect(turn!.turnStartedAt).toBeGreaterThan(0);

    await play(
      start,
      { type: 'assistant_delta', text: 'Half' },
      { type: 'interrupted', iterations: 1 },
      { type: 'turn_end', status: 'interrupted', iterations: 1, pendingSteering: 0 },
    );
    expect(surface.of('finish')[1]!.ending?.feedback).toBeUndefined();
    expect(answered).toHaveLength(1);
  });

  it('a turn that ends in tool steps without words asks for no feedback', async () => {
    const { surface, play, answered } = thread({ compact: true });
    const a = call('call_a', 'ls');
    await play(start, a.proposed, a.started, a.finished, end);
    expect(surface.of('finish')[0]!.ending?.feedback).toBeUndefined();
    expect(answered).toEqual([]);
  });
});
