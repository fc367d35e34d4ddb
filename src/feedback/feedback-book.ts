// Feedback on answers: the 👍 / 👎 under a turn's final answer, on every platform. The thread
// presenter records each final answer that offers the buttons (`answered`: its session, the
// model that wrote it, the request it answered) on the answer message's reference in the
// store, so it goes when the thread is forgotten or expires; a click is found by the message
// clicked, never by what the button carries, so a forged button value cannot vote on another
// answer.
//
// One vote per person per answer: a second click replaces the first (changing one's mind
// counts once), and the same click twice changes nothing. Each vote is a key of its own, so
// two people voting at once on two instances never overwrite each other; an index of vote ids
// (a Redis set in cluster mode) lets `/feedback` total them and `/forget` remove a thread's.
// What a person writes as the reason for a 👎 is kept (masked, capped) for the admins' totals.
import type Keyv from 'keyv';
import { z } from 'zod';
import type { MessageRef, SessionStore, SharedIdSet } from '../store/session-store.js';

/** A turn's final answer, as the feedback on it is recorded against. */
export interface AnsweredTurn {
  sessionId: string;
  /** The store key of the answer's last message (the one that carries the buttons). */
  messageKey: string;
  /** The model that wrote it (its last call), as `provider:model`. */
  model?: string;
  /** The platform id of the message that asked for it, when the turn answered one. */
  requestId?: string;
  /** When the turn began (epoch ms). */
  turnStartedAt: number;
}

/** What the thread presenter needs of the book. */
export interface AnswerRecorder {
  answered(turn: AnsweredTurn): Promise<void>;
}

export type FeedbackValue = 'up' | 'down';

export type VoteResult =
  | { status: 'recorded' | 'changed' | 'unchanged'; answer: AnsweredTurn; value: FeedbackValue }
  /** Not an answer the bot recorded (forgotten, expired, or not one of its answers). */
  | { status: 'unknown_answer' };

export interface FeedbackTotals {
  up: number;
  down: number;
  byModel: { model: string; up: number; down: number }[];
  /** The latest reasons given with a 👎, newest first. */
  reasons: { at: number; model: string; reason: string }[];
}

/** The longest reason kept, in characters. */
export const REASON_MAX = 500;
const REASONS_SHOWN = 10;

const VoteSchema = z.object({
  value: z.enum(['up', 'down']),
  userId: z.string(),
  sessionId: z.string(),
  messageKey: z.string(),
  model: z.string().optional(),
  at: z.number(),
  reason: z.string().optional(),
});
type Vote = z.infer<typeof VoteSchema>;

export interface FeedbackBookOptions {
  /** Masks secrets in a written reason (src/secrets). */
  mask?: (text: string) => string;
  now?: () => number;
  /**
   * Resolves once the turns winding down now have ended (SessionManager.afterTurnsWindDown):
   * the buttons show with the answer's last message, and its turn records the answer a moment
   * later, as it winds down. A vote that finds no answer waits for that, then looks once more.
   */
  turnsWoundDown?: () => Promise<void>;
}

export class FeedbackBook implements AnswerRecorder {
  private readonly mask: (text: string) => string;
  private readonly now: () => number;
  private readonly turnsWoundDown: (() => Promise<void>) | undefined;

  private readonly keyv: Keyv;

  constructor(
    private readonly store: Pick<SessionStore, 'keyv' | 'getMessageRef' | 'updateMessageRef'>,
    /** The ids of every vote (voteId), for totals and forgetting. */
    private readonly index: SharedIdSet,
    options: FeedbackBookOptions = {},
  ) {
    this.keyv = store.keyv;
    this.mask = options.mask ?? ((text) => text);
    this.now = options.now ?? Date.now;
    this.turnsWoundDown = options.turnsWoundDown;
  }

  /** Recorded on the message's reference (the presenter remembered the message just before). */
  async answered(turn: AnsweredTurn): Promise<void> {
    const ref = await this.store.getMessageRef(turn.messageKey);
    const answer: NonNullable<MessageRef['answer']> = { turnStartedAt: turn.turnStartedAt };
    if (turn.model) answer.model = turn.model;
    if (turn.requestId) answer.requestId = turn.requestId;
    await this.store.updateMessageRef(turn.messageKey, {
      ...(ref ?? { kind: 'answer' }),
      sessionId: turn.sessionId,
      answer,
    });
  }

  /** The answer a message is, if the bot recorded it as a final answer (and the thread was not forgotten). */
  async answerOf(messageKey: string): Promise<AnsweredTurn | undefined> {
    const ref = await this.store.getMessageRef(messageKey);
    if (!ref?.answer) return undefined;
    return {
      sessionId: ref.sessionId,
      messageKey,
      turnStartedAt: ref.answer.turnStartedAt,
      ...(ref.answer.model ? { model: ref.answer.model } : {}),
      ...(ref.answer.requestId ? { requestId: ref.answer.requestId } : {}),
    };
  }

  /** A person's 👍 or 👎 on an answer: counted once per person, the latest click wins. */
  async vote(messageKey: string, userId: string, value: FeedbackValue): Promise<VoteResult> {
    let answer = await this.answerOf(messageKey);
    // Clicked the moment the buttons showed: the answer is recorded as its turn winds down.
    if (!answer && this.turnsWoundDown) {
      await this.turnsWoundDown();
      answer = await this.answerOf(messageKey);
    }
    if (!answer) return { status: 'unknown_answer' };
    const id = voteId(answer.sessionId, messageKey, userId);
    const earlier = await this.read(id);
    if (earlier?.value === value) return { status: 'unchanged', answer, value };
    const vote: Vote = {
      value,
      userId,
      sessionId: answer.sessionId,
      messageKey,
      at: this.now(),
      ...(answer.model ? { model: answer.model } : {}),
    };
    await this.keyv.set(voteKey(id), vote);
    await this.index.add(id);
    return { status: earlier ? 'changed' : 'recorded', answer, value };
  }

  /**
   * The reason a person gives for their 👎 (optional; from a modal or a field). Kept only
   * with a 👎 of theirs on that answer: false when there is none (they changed it meanwhile).
   */
  async giveReason(messageKey: string, userId: string, reason: string): Promise<boolean> {
    const answer = await this.answerOf(messageKey);
    if (!answer) return false;
    const id = voteId(answer.sessionId, messageKey, userId);
    const vote = await this.read(id);
    if (vote?.value !== 'down') return false;
    const text = Array.from(this.mask(reason.trim())).slice(0, REASON_MAX).join('');
    const { reason: _earlier, ...rest } = vote;
    await this.keyv.set(voteKey(id), text ? { ...rest, reason: text } : rest);
    return true;
  }

  /** Every vote, totalled: overall, by model, and the latest reasons. */
  async totals(): Promise<FeedbackTotals> {
    const ids = await this.index.all();
    const votes = (await Promise.all(ids.map((id) => this.read(id)))).filter(
      (vote): vote is Vote => vote !== undefined,
    );
    const byModel = new Map<string, { up: number; down: number }>();
    let up = 0;
    let down = 0;
    for (const vote of votes) {
      const model = vote.model ?? 'unknown';
      const row = byModel.get(model) ?? { up: 0, down: 0 };
      row[vote.value] += 1;
      byModel.set(model, row);
      if (vote.value === 'up') up += 1;
      else down += 1;
    }
    const reasons = votes
      .filter((vote) => vote.value === 'down' && vote.reason)
      .sort((a, b) => b.at - a.at)
      .slice(0, REASONS_SHOWN)
      .map((vote) => ({ at: vote.at, model: vote.model ?? 'unknown', reason: vote.reason! }));
    return {
      up,
      down,
      byModel: [...byModel]
        .map(([model, row]) => ({ model, ...row }))
        .sort((a, b) => b.up + b.down - (a.up + a.down) || a.model.localeCompare(b.model)),
      reasons,
    };
  }

  /** A thread was forgotten (or expired): the votes on its answers go with it (the answers went with its references). */
  async forgetSession(sessionId: string): Promise<void> {
    for (const id of await this.index.all()) {
      if (sessionOfVote(id) !== sessionId) continue;
      await this.keyv.delete(voteKey(id));
      await this.index.remove(id);
    }
  }

  private async read(id: string): Promise<Vote | undefined> {
    const parsed = VoteSchema.safeParse(await this.keyv.get<unknown>(voteKey(id)));
    return parsed.success ? parsed.data : undefined;
  }
}

function voteId(sessionId: string, messageKey: string, userId: string): string {
  return JSON.stringify([sessionId, messageKey, userId]);
}

function sessionOfVote(id: string): string | undefined {
  try {
    const parts: unknown = JSON.parse(id);
    return Array.isArray(parts) && typeof parts[0] === 'string' ? parts[0] : undefined;
  } catch {
    return undefined;
  }
}

function voteKey(id: string): string {
  return `feedback-vote:${id}`;
}
