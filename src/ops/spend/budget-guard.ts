// Spend limits that hold before the call. One object is the metered provider's SpendGuard
// (admit each model call, settle what it used), the session layer's BudgetGate (refuse a new
// request past a limit; an admin's Continue), and an operations sink (it hears turns start
// and end, which is what BUDGET_TURN and an admin's allowance are measured by).
//
// The ideas to hold:
// - Every settled call is recorded in the ledger, limits or none, allowance or none.
// - A call is admitted only if, for every limit it spends against (the requester's day, the
//   channel's day, the workspace's day, the turn), spent + reserved + its estimate stays
//   within the limit; the estimate is then reserved until the call settles (spend-counters.ts).
// - A USD amount holds priced calls; a token amount holds every call.
// - A turn's spend is counted under a turn id kept in the store: a new turn (kind `run`)
//   takes a new id; a retry or a resume after a restart goes on with the same one.
// - An allowance (an admin's Continue) lets the session's calls past every limit until the
//   turn ends (unless it ends paused by a limit again, as the paused turn itself does).
// - A place may have limits of its own (a profile's `budgets`, via `limitsAt`); they are read
//   at each decision, so a reloaded profiles file holds from the next call. With no limit
//   anywhere (neither the environment nor the place's), nothing goes to the store.
// - Nothing here throws into a turn from `settle`: it runs in the provider's `finally`.
import { randomUUID } from 'node:crypto';
import type { EngineLogger } from '../../engine/index.js';
import { isWritesFenced } from '../../engine/fenced.js';
import type { BudgetGate, BudgetVerdict } from '../../sessions/session-ops.js';
import type { Admission, CallEstimate, SpendGuard } from '../metered-provider.js';
import type { BudgetLimitName, OpsBus, OpsEvent, OpsSink, Place, TokenCounts } from '../ops-events.js';
import { hasLimits, type BudgetLimits, type LimitAmount } from './budget-limits.js';
import { pausedWords, refusedWords, warningWords, type LimitReading } from './budget-words.js';
import type { PeriodKeys } from './periods.js';
import { dayCounter, NANO, scopeId, tokensOf, type SpendLedger } from './spend-ledger.js';
import type { LimitCheck } from './spend-counters.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long a turn's id and its spend are kept (a paused turn may be continued days later). */
const TURN_TTL_MS = 7 * DAY_MS;
/** How long an admin's allowance lasts if the turn's end is never heard (a crash). */
const ALLOWANCE_TTL_MS = DAY_MS;
/** A reservation lapses after this (a process that died mid-call holds nothing for long). */
const DEFAULT_HOLD_MS = 10 * 60 * 1000;
/** The share of a limit at which the thread is told, once. */
const WARN_AT = 0.8;

export interface BudgetGuardOptions {
  ledger: SpendLedger;
  limits: BudgetLimits;
  /**
   * The limits of one place when they differ from `limits` (a profile's budgets); undefined:
   * `limits`. Called at each decision, so it must be cheap (no I/O).
   */
  limitsAt?: (place: Place) => BudgetLimits | undefined;
  /** Where `spend` and `budget_refused` (new requests) events go. */
  ops?: OpsBus;
  /** Tell a thread something (the 80 % note); core.ts renders it through observers.onNotice. */
  notify?: (place: Place, text: string) => Promise<void> | void;
  holdMs?: number;
  logger?: EngineLogger;
}

interface Ticket {
  id: string;
  place: Place;
  requester?: string;
  model: string;
  /** Counters the estimate was reserved on. */
  reserved: string[];
  /** The turn's counter, when BUDGET_TURN is set. */
  turnCounter?: string;
}

/** A limit that applies to a call or a request, with the counter it reads. */
interface Applied {
  limit: BudgetLimitName;
  amount: LimitAmount;
  counter: string;
  resetsAt?: number;
}

export class BudgetGuard implements SpendGuard, BudgetGate, OpsSink {
  private readonly limits: BudgetLimits;
  /** Whether the environment sets a limit (a place may still set its own: `limitsOf`). */
  private readonly limited: boolean;
  private readonly holdMs: number;
  /** This process's view of each working session's turn id (the store has it too). */
  private readonly turnIds = new Map<string, string>();
  /** Writes each session's turn events queued, so a later admit waits for them. */
  private readonly writes = new Map<string, Promise<void>>();
  /** 80 % notes this process already claimed (saves a round trip per call). */
  private readonly warned = new Set<string>();

  constructor(private readonly options: BudgetGuardOptions) {
    this.limits = options.limits;
    this.limited = hasLimits(options.limits);
    this.holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
  }

  private get ledger(): SpendLedger {
    return this.options.ledger;
  }

  // ---- SpendGuard -------------------------------------------------------------------------

  async admit(estimate: CallEstimate): Promise<Admission> {
    const { place, requester, model } = estimate;
    const ticket: Ticket = { id: randomUUID(), place, ...(requester ? { requester } : {}), model, reserved: [] };
    const limits = this.limitsOf(place);
    if (!limits) return { ok: true, ticket };
    await this.writes.get(place.sessionId);
    if (limits.turn) ticket.turnCounter = turnCounter(place.sessionId, await this.turnIdOf(place.sessionId));
    if ((await this.ledger.counters.getValue(allowanceKey(place.sessionId))) !== undefined) return { ok: true, ticket };

    const now = this.ledger.now();
    const at = this.ledger.periods.at(now);
    const price = this.ledger.prices.priceOf(model);
    const addNusd = price
      ? Math.round((estimate.inputTokens * price.input + estimate.maxOutputTokens * price.output) * 1_000)
      : 0;
    const addTokens = estimate.inputTokens + estimate.maxOutputTokens;
    const applied = this.applied(limits, place, requester, at, ticket.turnCounter);
    const checks: LimitCheck[] = [];
    const behind: Applied[] = [];
    for (const limit of applied) {
      // A USD amount does not hold a call with no price; a token amount holds every call.
      const capNusd = price && limit.amount.usd !== undefined ? Math.round(limit.amount.usd * NANO) : undefined;
      const capTokens = limit.amount.tokens;
      if (capNusd === undefined && capTokens === undefined) continue;
      checks.push({
        counter: limit.counter,
        ...(capNusd !== undefined ? { capNusd } : {}),
        ...(capTokens !== undefined ? { capTokens } : {}),
        addNusd,
        addTokens,
      });
      behind.push(limit);
    }
    const result = await this.ledger.counters.reserve(ticket.id, checks, this.holdMs);
    if (result.ok) {
      ticket.reserved = checks.map((check) => check.counter);
      return { ok: true, ticket };
    }
    const refused = behind[result.index]!;
    const usd = result.unit === 'usd';
    const reading: LimitReading = {
      limit: refused.limit,
      unit: result.unit,
      cap: usd ? refused.amount.usd! : refused.amount.tokens!,
      spent: usd ? result.spentNusd / NANO : result.spentTokens,
      estimate: usd ? addNusd / NANO : addTokens,
      ...(refused.resetsAt !== undefined ? { resetsAt: refused.resetsAt } : {}),
    };
    return { ok: false, limit: refused.limit, message: pausedWords(reading, now, this.ledger.periods.zone) };
  }

  async settle(ticket: unknown, usage: TokenCounts | undefined): Promise<void> {
    if (!isTicket(ticket)) return;
    try {
      const now = this.ledger.now();
      const at = this.ledger.periods.at(now);
      if (!usage) {
        // The call failed or was stopped before it reported usage: only the reservation goes.
        if (ticket.reserved.length > 0)
          await this.ledger.counters.settle(ticket.id, ticket.reserved, [], this.ledger.addOf(ticket.model, ZERO));
        return;
      }
      const add = this.ledger.addOf(ticket.model, usage);
      this.options.ops?.emit({
        type: 'spend',
        at: now,
        place: ticket.place,
        ...(ticket.requester ? { requester: ticket.requester } : {}),
        model: ticket.model,
        ...(add.unpriced === undefined ? { usd: add.nusd / NANO } : {}),
        tokens: usage,
      });
      const targets = this.ledger.targetsOf(ticket.place, ticket.requester, ticket.model, at);
      if (ticket.turnCounter) targets.push({ counter: ticket.turnCounter, ttlMs: TURN_TTL_MS });
      const after = await this.ledger.counters.settle(ticket.id, ticket.reserved, targets, add);
      const limits = this.limitsOf(ticket.place);
      if (limits)
        await this.warnPast80(
          limits,
          ticket,
          at,
          now,
          new Map(targets.map((target, index) => [target.counter, after[index]!])),
        );
    } catch (error) {
      // A shutdown fenced the store: this call's spend is lost with the turn it ended, quietly.
      if (isWritesFenced(error)) return;
      this.options.logger?.warn(
        { err: error, sessionId: ticket.place.sessionId },
        'could not record what a model call spent',
      );
    }
  }

  // ---- BudgetGate -------------------------------------------------------------------------

  async mayStart(place: Place, userId: string): Promise<BudgetVerdict> {
    const limits = this.limitsOf(place);
    if (!limits) return { ok: true };
    const now = this.ledger.now();
    const at = this.ledger.periods.at(now);
    for (const limit of this.applied(limits, place, userId, at, undefined)) {
      const spent = await this.ledger.counters.read(limit.counter);
      const reading = reached(limit, spent.nusd, tokensOf(spent));
      if (!reading) continue;
      this.options.ops?.emit({ type: 'budget_refused', at: now, place, limit: limit.limit, what: 'new_request' });
      return { ok: false, reason: refusedWords(reading, now, this.ledger.periods.zone) };
    }
    return { ok: true };
  }

  async allowTurn(place: Place, by: string): Promise<void> {
    await this.writes.get(place.sessionId);
    await this.ledger.counters.setValue(allowanceKey(place.sessionId), by, ALLOWANCE_TTL_MS);
  }

  // ---- OpsSink ----------------------------------------------------------------------------

  handle(event: OpsEvent): void {
    if (!('place' in event) || !event.place.sessionId || !this.limitsOf(event.place)) return;
    const sessionId = event.place.sessionId;
    if (event.type === 'turn_started' && event.kind === 'run') {
      // A new turn: its own spend, and no allowance left over from an earlier one.
      const id = `${event.at.toString(36)}-${randomUUID().slice(0, 8)}`;
      this.turnIds.set(sessionId, id);
      this.queue(sessionId, async () => {
        await this.ledger.counters.setValue(turnKey(sessionId), id, TURN_TTL_MS);
        await this.ledger.counters.deleteValue(allowanceKey(sessionId));
      });
    } else if (event.type === 'turn_ended') {
      // The turn id stays in the store (a retry continues it); memory holds working sessions only.
      this.turnIds.delete(sessionId);
      if (event.errorKind !== 'budget')
        this.queue(sessionId, () => this.ledger.counters.deleteValue(allowanceKey(sessionId)));
    }
  }

  async flush(): Promise<void> {
    await Promise.all([...this.writes.values()]);
  }

  // ---- inside -----------------------------------------------------------------------------

  /** The limits that hold in `place` (its own, else the environment's); undefined when none does. */
  private limitsOf(place: Place): BudgetLimits | undefined {
    const own = this.options.limitsAt?.(place);
    if (own) return hasLimits(own) ? own : undefined;
    return this.limited ? this.limits : undefined;
  }

  /** The limits a call or request in `place` for `requester` spends against. */
  private applied(
    limits: BudgetLimits,
    place: Place,
    requester: string | undefined,
    at: PeriodKeys,
    turn: string | undefined,
  ): Applied[] {
    const applied: Applied[] = [];
    const { user_daily: user, channel_daily: channel, workspace_daily: workspace } = limits;
    if (user && requester)
      applied.push({
        limit: 'user_daily',
        amount: user,
        counter: dayCounter('user', scopeId('user', place, requester), at),
        resetsAt: at.dayEndsAt,
      });
    if (channel)
      applied.push({
        limit: 'channel_daily',
        amount: channel,
        counter: dayCounter('channel', scopeId('channel', place), at),
        resetsAt: at.dayEndsAt,
      });
    if (workspace)
      applied.push({
        limit: 'workspace_daily',
        amount: workspace,
        counter: dayCounter('workspace', scopeId('workspace', place), at),
        resetsAt: at.dayEndsAt,
      });
    if (limits.turn && turn) applied.push({ limit: 'turn', amount: limits.turn, counter: turn });
    return applied;
  }

  /** Tell the thread once per limit, scope and period that a limit passed 80 %. */
  private async warnPast80(
    limits: BudgetLimits,
    ticket: Ticket,
    at: PeriodKeys,
    now: number,
    after: Map<string, { nusd: number; tokens: number }>,
  ): Promise<void> {
    if (!this.options.notify) return;
    for (const limit of this.applied(limits, ticket.place, ticket.requester, at, ticket.turnCounter)) {
      const spent = after.get(limit.counter);
      if (!spent) continue;
      const reading = reached(limit, spent.nusd, spent.tokens, WARN_AT);
      if (!reading) continue;
      const key = `${limit.limit}|${limit.counter}`;
      if (this.warned.has(key)) continue;
      if (this.warned.size > 10_000) this.warned.clear();
      this.warned.add(key);
      const ttl = limit.resetsAt !== undefined ? Math.max(limit.resetsAt - now, 0) + DAY_MS : TURN_TTL_MS;
      if (!(await this.ledger.counters.claim(`warned:${key}`, ttl))) continue;
      try {
        await this.options.notify(ticket.place, warningWords(reading, now, this.ledger.periods.zone));
      } catch (error) {
        this.options.logger?.warn(
          { err: error, sessionId: ticket.place.sessionId },
          'could not tell the thread that a spend limit is near',
        );
      }
    }
  }

  private async turnIdOf(sessionId: string): Promise<string> {
    const known = this.turnIds.get(sessionId) ?? (await this.ledger.counters.getValue(turnKey(sessionId)));
    if (known) {
      this.turnIds.set(sessionId, known);
      return known;
    }
    // No turn heard yet (a call outside a turn's events): one starts now.
    const id = `${this.ledger.now().toString(36)}-${randomUUID().slice(0, 8)}`;
    this.turnIds.set(sessionId, id);
    await this.ledger.counters.setValue(turnKey(sessionId), id, TURN_TTL_MS);
    return id;
  }

  private queue(sessionId: string, work: () => Promise<void>): void {
    const previous = this.writes.get(sessionId) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((error: unknown) =>
        this.options.logger?.warn({ err: error, sessionId }, 'could not record a turn for the spend limits'),
      );
    this.writes.set(sessionId, next);
    void next.then(() => {
      if (this.writes.get(sessionId) === next) this.writes.delete(sessionId);
    });
  }
}

const ZERO: TokenCounts = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 };

/** The limit's reading when `share` of it is reached (USD first), else undefined. */
function reached(limit: Applied, nusd: number, tokens: number, share = 1): LimitReading | undefined {
  const base = { limit: limit.limit, ...(limit.resetsAt !== undefined ? { resetsAt: limit.resetsAt } : {}) };
  if (limit.amount.usd !== undefined && nusd >= limit.amount.usd * NANO * share)
    return { ...base, unit: 'usd', cap: limit.amount.usd, spent: nusd / NANO };
  if (limit.amount.tokens !== undefined && tokens >= limit.amount.tokens * share)
    return { ...base, unit: 'tokens', cap: limit.amount.tokens, spent: tokens };
  return undefined;
}

function turnKey(sessionId: string): string {
  return `turn:${sessionId}`;
}

function allowanceKey(sessionId: string): string {
  return `allow:${sessionId}`;
}

function turnCounter(sessionId: string, turnId: string): string {
  return `t:${turnId}|turn|${sessionId}`;
}

function isTicket(value: unknown): value is Ticket {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Ticket).id === 'string' &&
    Array.isArray((value as Ticket).reserved)
  );
}
