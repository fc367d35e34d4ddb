// The canonical history of one session and the questions the engine asks of it. It is the
// only state a turn leaves behind: resume and retry are decided from it alone (plus the
// inbox's answers and the tool ledger's start records), never from a second state machine.
//
// Append-only: every message goes through `append`, which awaits the persistence hook, so
// every append is a checkpoint (the outbound view's caches also rely on nothing being
// edited in place).
import { randomUUID } from 'node:crypto';
import { toolErrorContent, type AssistantMessage, type Message, type NoticeKind, type ToolCall } from './messages.js';
import { INTERRUPTED_BY_USER } from './tool-calls.js';

/** Notices after which a turn is over: what follows is another turn. */
const TURN_ENDING_NOTICES: ReadonlySet<NoticeKind> = new Set(['error', 'interrupted', 'max_iterations', 'budget']);

export type AppendHook = (message: Message, index: number) => void | Promise<void>;

/** The trailing assistant message's tool calls: the only ones that can lack a result. */
export interface ToolRound {
  /** The round's name in the tool ledger: its first call's id (unique per session). */
  round: string;
  calls: ToolCall[];
  unanswered: ToolCall[];
}

export class History {
  private readonly list: Message[];
  private readonly usedToolCallIds = new Set<string>();
  /**
   * The current turn's requesters, newest first, kept as messages are appended: the engine
   * asks for them on every model call and tool round, and walking back through a long turn
   * each time made every iteration cost as much as the turn was long. A new array whenever
   * it changes, so a caller may keep the one it got.
   */
  private requesters: readonly (string | undefined)[] = [];
  private requester: string | undefined;
  /** A turn ended (a final answer, a turn-ending notice) since the last user message. */
  private turnEndedSinceUser = false;

  constructor(
    messages: readonly Message[],
    private readonly onAppend: AppendHook | undefined,
  ) {
    this.list = [...messages];
    for (const message of this.list) {
      if (message.role === 'assistant') for (const call of message.tool_calls ?? []) this.usedToolCallIds.add(call.id);
      this.noteTurn(message);
    }
  }

  /** The messages, one array for the engine's life (the outbound view caches by its identity). */
  get messages(): readonly Message[] {
    return this.list;
  }

  /** Put the system prompt first (a rebuilt session: the prompt comes from the configuration, not the store). */
  prependSystem(instructions: string): void {
    if (this.list[0]?.role !== 'system') this.list.unshift({ role: 'system', content: instructions });
  }

  async append(message: Message): Promise<void> {
    this.list.push(message);
    this.noteTurn(message);
    if (this.onAppend) await this.onAppend(message, this.list.length - 1);
  }

  async appendNotice(kind: NoticeKind, text?: string): Promise<void> {
    const notice: Message = { role: 'notice', kind, ts: Date.now() };
    if (text) notice.text = text;
    await this.append(notice);
  }

  /** The partial the user watched arrive: text and thinking, never half-formed tool calls. */
  async appendPartial(text: string, reasoning: string): Promise<void> {
    if (!text && !reasoning) return;
    const message: AssistantMessage = { role: 'assistant', content: text || null, ts: Date.now() };
    if (reasoning) message.reasoning = reasoning;
    await this.append(message);
  }

  /** Answer every call of the trailing round that has no result yet, with an error saying why. */
  async answerUnanswered(reason: string): Promise<ToolCall[]> {
    const calls = this.unansweredToolCalls();
    for (const call of calls) {
      await this.append({ role: 'tool', tool_call_id: call.id, content: toolErrorContent(reason), ts: Date.now() });
    }
    return calls;
  }

  /** The trailing assistant message's tool calls, if it has any and no user message followed it. */
  trailingRound(): ToolRound | undefined {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const message = this.list[i]!;
      if (message.role === 'user') return undefined;
      if (message.role !== 'assistant') continue;
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return undefined;
      // Ids are unique within a session (see uniqueToolCallId), so a global answered set is exact.
      const answered = new Set(this.list.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
      return { round: calls[0]!.id, calls, unanswered: calls.filter((call) => !answered.has(call.id)) };
    }
    return undefined;
  }

  /**
   * The authors of the current turn's user messages (the one that started it and any
   * steering), newest first. The turn began after the last final answer (an assistant
   * message with no tool calls) or the last notice that ended a turn; walking back further
   * would only add people, which makes grants cover less, never more.
   */
  turnRequesters(): readonly (string | undefined)[] {
    return this.requesters;
  }

  /** The person whose message the turn answers: the newest requester that names one. */
  turnRequester(): string | undefined {
    return this.requester;
  }

  /** Keeps `turnRequesters` as the walk back from the end would find them. */
  private noteTurn(message: Message): void {
    if (message.role === 'user') {
      const userId = message.source?.userId;
      if (this.turnEndedSinceUser) {
        this.requesters = [userId];
        this.requester = userId;
      } else {
        this.requesters = [userId, ...this.requesters];
        this.requester = userId ?? this.requester;
      }
      this.turnEndedSinceUser = false;
    } else if (
      (message.role === 'assistant' && (message.tool_calls ?? []).length === 0) ||
      (message.role === 'notice' && TURN_ENDING_NOTICES.has(message.kind))
    ) {
      this.turnEndedSinceUser = true;
    }
  }

  unansweredToolCalls(): ToolCall[] {
    return this.trailingRound()?.unanswered ?? [];
  }

  /**
   * The model owes the next message: the history ends in a user message or a tool result
   * with nothing after it (no answer, no notice saying the turn ended). After a crash mid-
   * stream or between a tool round and the next model call, that is where to carry on;
   * not after a round a stop was cutting (its results say "interrupted by user").
   */
  awaitsModel(): boolean {
    const last = this.list.at(-1);
    if (last?.role === 'user') return true;
    if (last?.role !== 'tool') return false;
    const round = this.trailingRound();
    if (!round || round.unanswered.length > 0) return false;
    const ids = new Set(round.calls.map((call) => call.id));
    return !this.list.some(
      (m) => m.role === 'tool' && ids.has(m.tool_call_id) && m.content.includes(INTERRUPTED_BY_USER),
    );
  }

  /**
   * Whether the history ends in a provider error or the iteration limit, looking through
   * any model switches after it: switching model and then retrying is the intended recovery.
   */
  /** Whether the history ends in a spend limit's pause (looking through model switches). */
  endsPausedBySpend(): boolean {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const message = this.list[i]!;
      if (message.role !== 'notice') return false;
      if (message.kind === 'model_switch') continue;
      return message.kind === 'budget';
    }
    return false;
  }

  endsRetryable(): boolean {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const message = this.list[i]!;
      if (message.role !== 'notice') return false;
      if (message.kind === 'model_switch') continue;
      return message.kind === 'error' || message.kind === 'max_iterations' || message.kind === 'budget';
    }
    return false;
  }

  /**
   * Tool-call ids must be unique within the session: some providers number calls per turn
   * (`call_0` again every turn) or send none, and a reused id would let an approval or a
   * resume match an earlier call and silently reuse its decision.
   */
  uniqueToolCallId(proposed: string | null | undefined): string {
    let id = proposed?.trim() ?? '';
    if (!id || this.usedToolCallIds.has(id)) id = `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    this.usedToolCallIds.add(id);
    return id;
  }
}
