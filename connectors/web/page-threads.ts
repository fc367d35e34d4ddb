// The playground's channel as documents: every thread the page shows (its root message, the
// person's replies, the answer segments, one card per tool call, the notes) kept in memory and
// in the bot's store, so a page reload or a bot restart redraws the same thread.
//
// The idea to hold: this is the playground's "platform". Slack and Discord keep their own
// messages; the playground has none but these documents, so every change goes through here:
// the memory copy changes, the change is announced (the live stream pushes it to the page)
// and the document is written to the store. Structural changes (a card, a note, a mark) are
// written before the call returns, so a card with buttons is on disk before anyone can click
// it or the process can die; answer text arrives in many small deltas and is written at most
// every ANSWER_SAVE_MS (a restart cuts the answer anyway, and recovery asks the model again).
//
// Keys, in the store's Keyv under a `web:` prefix nothing else uses:
//   web:threads            the channel: thread ids, oldest first
//   web:thread:<id>        one thread's document (parsed with zod when read back)
import { randomBytes } from 'node:crypto';
import type Keyv from 'keyv';
import { z } from 'zod';
import type { EngineLogger } from '../../src/engine/index.js';
import type { WorkStatus } from '../shared/thread-surface.js';
import { CardModelSchema } from './card-model.js';

const INDEX_KEY = 'web:threads';
const threadKey = (id: string): string => `web:thread:${id}`;
/** How often a growing answer's text is written while it streams. */
const ANSWER_SAVE_MS = 300;

const PersonSchema = z.object({ id: z.string(), name: z.string() });
export type Person = z.infer<typeof PersonSchema>;

const base = { id: z.string(), at: z.number() };
/** A file as a message shows it: its name (untrusted, shown as text), size and type. */
const ShownFileSchema = z.object({
  id: z.string(),
  name: z.string(),
  size: z.number(),
  mimeType: z.string().optional(),
});
/**
 * 👍 / 👎 under a turn's final answer (its presence offers them): how the person at the page
 * voted, and whether they gave a reason with a 👎. What counts is core's feedback book; this
 * is only what the page shows.
 */
const FeedbackMarkSchema = z.object({ vote: z.enum(['up', 'down']).optional(), reason: z.boolean().optional() });
export type FeedbackMark = z.infer<typeof FeedbackMarkSchema>;
/** One tool call as a step of a compact reply (shared/thread-surface.ts ProgressStep). */
const ProgressStepSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(['pending', 'in_progress', 'complete', 'error']),
  details: z.string().optional(),
  output: z.string().optional(),
});
const PageMessageSchema = z.discriminatedUnion('kind', [
  /** What a person wrote (the thread's root is one), with the marks the bot put on it. */
  z.object({
    ...base,
    kind: z.literal('input'),
    author: PersonSchema,
    text: z.string(),
    marks: z.array(z.enum(['received', 'taken', 'dropped'])),
    /** The files attached to it (uploads: shown by name, not downloadable again). */
    files: z.array(ShownFileSchema).optional(),
  }),
  /** One answer segment; `streaming` while it grows. */
  z.object({
    ...base,
    kind: z.literal('answer'),
    text: z.string(),
    footer: z.string().optional(),
    streaming: z.boolean(),
    feedback: FeedbackMarkSchema.optional(),
  }),
  /**
   * Compact mode (TOOL_DISPLAY=compact): the tool calls of one reply as a checklist, updated
   * in place (web-surface.ts). It carries the footer and the feedback when the reply ends with it.
   */
  z.object({
    ...base,
    kind: z.literal('progress'),
    steps: z.array(ProgressStepSchema),
    footer: z.string().optional(),
    feedback: FeedbackMarkSchema.optional(),
  }),
  /** One tool call's card, drawn (card-model.ts). */
  z.object({ ...base, kind: z.literal('card'), toolCallId: z.string(), card: CardModelSchema }),
  /** A note that says how a turn went; `action` is its Retry / Continue button until `done` says who used it. */
  z.object({
    ...base,
    kind: z.literal('note'),
    text: z.string(),
    action: z.object({ kind: z.enum(['retry', 'continue', 'continue_past_limit']), label: z.string() }).optional(),
    done: z.string().optional(),
  }),
  /** A file the bot posted (attach_file), downloaded by its id (posted-files.ts), with the bot's comment. */
  z.object({ ...base, kind: z.literal('file'), file: ShownFileSchema, comment: z.string().optional() }),
  /** Something the bot says in the thread that is not an answer (a model switch). */
  z.object({ ...base, kind: z.literal('bot'), text: z.string() }),
]);
export type PageMessage = z.infer<typeof PageMessageSchema>;
export type MessageOf<K extends PageMessage['kind']> = Extract<PageMessage, { kind: K }>;

/** @internal */
export const PageThreadSchema = z.object({
  /** The root message's id. */
  id: z.string(),
  /** The bot's session, once the root (or a reply) mentioned the bot. */
  sessionId: z.string().optional(),
  createdAt: z.number(),
  status: z.enum(['thinking', 'idle']),
  /** Model calls ahead of this thread's, while it waits for a slot. */
  waiting: z.number().nullable(),
  messages: z.array(PageMessageSchema),
});
export type PageThread = z.infer<typeof PageThreadSchema>;

/** What changed, as the live stream tells the page (live-updates.ts). */
export type PageUpdate =
  | { type: 'thread'; thread: PageThread }
  | { type: 'message'; threadId: string; message: PageMessage }
  | { type: 'append'; threadId: string; messageId: string; text: string }
  | { type: 'status'; threadId: string; status: WorkStatus; waiting: number | null }
  | { type: 'removed'; threadId: string };

/** A message id: sortable by time, unguessable enough to never collide. */
export function newMessageId(): string {
  return `${Date.now().toString(36)}${randomBytes(5).toString('hex')}`;
}

export class PageThreads {
  private readonly threads = new Map<string, PageThread>();
  /** Each thread's writes, one at a time, in order. */
  private readonly writing = new Map<string, Promise<void>>();
  /** Threads whose answer text changed since it was last written, and the timer that will write it. */
  private readonly answerSaves = new Map<string, NodeJS.Timeout>();
  private listener: (update: PageUpdate) => void = () => undefined;

  private constructor(
    private readonly keyv: Keyv,
    private readonly logger: EngineLogger,
  ) {}

  /**
   * Read the channel back. A thread that says it was working, or an answer that says it was
   * streaming, was cut by the end of the last process: it is shown as it was left, idle.
   */
  static async load(keyv: Keyv, logger: EngineLogger): Promise<PageThreads> {
    const threads = new PageThreads(keyv, logger);
    const ids = z
      .array(z.string())
      .catch([])
      .parse(await keyv.get<unknown>(INDEX_KEY));
    for (const id of ids) {
      const parsed = PageThreadSchema.safeParse(await keyv.get<unknown>(threadKey(id)));
      if (!parsed.success) {
        logger.warn({ threadId: id }, 'playground: a stored thread could not be read; it is left out');
        continue;
      }
      const thread = parsed.data;
      thread.status = 'idle';
      thread.waiting = null;
      for (const message of thread.messages) if (message.kind === 'answer') message.streaming = false;
      threads.threads.set(id, thread);
    }
    return threads;
  }

  /** Where each change is announced (one listener: the live stream). */
  onUpdate(listener: (update: PageUpdate) => void): void {
    this.listener = listener;
  }

  all(): PageThread[] {
    return [...this.threads.values()];
  }

  get(id: string): PageThread | undefined {
    return this.threads.get(id);
  }

  /** A new thread: its root message, as a person posted it in the channel. */
  async create(root: MessageOf<'input'>): Promise<PageThread> {
    const thread: PageThread = { id: root.id, createdAt: root.at, status: 'idle', waiting: null, messages: [root] };
    this.threads.set(thread.id, thread);
    this.listener({ type: 'thread', thread });
    await this.write(thread.id, async () => {
      await this.keyv.set(threadKey(thread.id), thread);
      await this.keyv.set(INDEX_KEY, [...this.threads.keys()]);
    });
    return thread;
  }

  /** The thread became a conversation with the bot. */
  async attachSession(threadId: string, sessionId: string): Promise<void> {
    const thread = this.require(threadId);
    if (thread.sessionId === sessionId) return;
    thread.sessionId = sessionId;
    this.listener({ type: 'thread', thread });
    await this.save(threadId);
  }

  /** Add a message at the end of the thread. */
  async add(threadId: string, message: PageMessage): Promise<void> {
    this.require(threadId).messages.push(message);
    this.listener({ type: 'message', threadId, message });
    await this.save(threadId);
  }

  /** Change one message (a card's new state, a mark, a note's button used); unknown ids are ignored. */
  async change(threadId: string, messageId: string, edit: (message: PageMessage) => PageMessage): Promise<void> {
    const thread = this.require(threadId);
    const index = thread.messages.findIndex((message) => message.id === messageId);
    const current = thread.messages[index];
    if (!current) return;
    const next = edit(current);
    thread.messages[index] = next;
    this.listener({ type: 'message', threadId, message: next });
    await this.save(threadId);
  }

  /** Take one mark off every message of the thread that has it (one write for them all). */
  async clearMark(threadId: string, mark: MessageOf<'input'>['marks'][number]): Promise<void> {
    const thread = this.require(threadId);
    let changed = false;
    thread.messages = thread.messages.map((message) => {
      if (message.kind !== 'input' || !message.marks.includes(mark)) return message;
      const next = { ...message, marks: message.marks.filter((other) => other !== mark) };
      this.listener({ type: 'message', threadId, message: next });
      changed = true;
      return next;
    });
    if (changed) await this.save(threadId);
  }

  /** More text for a streaming answer: announced at once, written a moment later. */
  appendAnswer(threadId: string, messageId: string, text: string): void {
    const message = this.require(threadId).messages.find((candidate) => candidate.id === messageId);
    if (message?.kind !== 'answer') return;
    message.text += text;
    this.listener({ type: 'append', threadId, messageId, text });
    if (this.answerSaves.has(threadId)) return;
    const timer = setTimeout(() => {
      this.answerSaves.delete(threadId);
      void this.save(threadId);
    }, ANSWER_SAVE_MS);
    timer.unref();
    this.answerSaves.set(threadId, timer);
  }

  /** The card of one tool call, if the thread has one (also one posted by a process before this one). */
  cardOf(threadId: string, toolCallId: string): MessageOf<'card'> | undefined {
    return this.threads
      .get(threadId)
      ?.messages.find(
        (message): message is MessageOf<'card'> => message.kind === 'card' && message.toolCallId === toolCallId,
      );
  }

  /** The compact progress message that shows a step (a tool call id), if the thread has one. */
  progressOf(threadId: string, stepId: string): MessageOf<'progress'> | undefined {
    return this.threads
      .get(threadId)
      ?.messages.find(
        (message): message is MessageOf<'progress'> =>
          message.kind === 'progress' && message.steps.some((step) => step.id === stepId),
      );
  }

  /** A message of any thread, by its id, with its thread's id (a feedback click names only the message). */
  findMessage(messageId: string): { threadId: string; message: PageMessage } | undefined {
    for (const thread of this.threads.values()) {
      const message = thread.messages.find((candidate) => candidate.id === messageId);
      if (message) return { threadId: thread.id, message };
    }
    return undefined;
  }

  /** Working or idle, and the wait for a model slot: shown live, not worth a write. */
  setStatus(threadId: string, status: 'thinking' | 'idle', waiting: number | null): void {
    const thread = this.require(threadId);
    thread.status = status;
    thread.waiting = waiting;
    this.listener({ type: 'status', threadId, status, waiting });
  }

  /** Delete a thread (after /forget: the conversation is gone, so is its drawing). */
  async remove(threadId: string): Promise<void> {
    if (!this.threads.delete(threadId)) return;
    this.listener({ type: 'removed', threadId });
    await this.write(threadId, async () => {
      await this.keyv.delete(threadKey(threadId));
      await this.keyv.set(INDEX_KEY, [...this.threads.keys()]);
    });
  }

  /** Write every thread whose answer text waits for its timer (before a shutdown fences the store). */
  async flush(): Promise<void> {
    const waiting = [...this.answerSaves.entries()];
    this.answerSaves.clear();
    for (const [threadId, timer] of waiting) {
      clearTimeout(timer);
      await this.save(threadId);
    }
    await Promise.all(this.writing.values());
  }

  private require(threadId: string): PageThread {
    const thread = this.threads.get(threadId);
    if (!thread) throw new Error(`playground: no thread ${threadId}`);
    return thread;
  }

  /** Write the thread as it is now (after the writes before it). A failure is logged: the page still shows it. */
  private save(threadId: string): Promise<void> {
    return this.write(threadId, async () => {
      const thread = this.threads.get(threadId);
      if (thread) await this.keyv.set(threadKey(threadId), thread);
    });
  }

  private write(threadId: string, work: () => Promise<void>): Promise<void> {
    const next = (this.writing.get(threadId) ?? Promise.resolve())
      .then(work)
      .catch((error: unknown) => this.logger.warn({ err: error, threadId }, 'playground: could not store a thread'));
    this.writing.set(threadId, next);
    return next;
  }
}
