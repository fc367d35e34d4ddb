// What the bot says about spend limits, in one place: the pause note of a turn a limit
// stopped, the private refusal of a new request, the 80 % warning, and the amounts and reset
// times /usage shows. Plain words, the bot's own (no user text), safe to show as they are.
import type { BudgetLimitName } from '../ops-events.js';
import { thousands } from '../../text/thousands.js';

/** A limit reached (or about to be): which, in which unit, its amount and what is spent. */
export interface LimitReading {
  limit: BudgetLimitName;
  unit: 'usd' | 'tokens';
  /** The limit's amount (USD or tokens). */
  cap: number;
  /** Spent so far in the period (settled calls only). */
  spent: number;
  /** What the refused call might have cost at most, when a call was refused. */
  estimate?: number;
  /** When the period ends (absent for the turn limit). */
  resetsAt?: number;
}

/** "$5.00"; a small amount keeps its first significant digits ("$0.0042"). */
export function formatUsd(usd: number): string {
  if (usd > 0 && usd < 0.01) return `$${usd.toPrecision(2).replace(/0+$/, '')}`;
  return `$${usd.toFixed(2)}`;
}

/** "2,000,000 tokens" */
function formatTokens(tokens: number): string {
  return `${thousands(Math.round(tokens))} tokens`;
}

function formatAmount(unit: 'usd' | 'tokens', amount: number): string {
  return unit === 'usd' ? formatUsd(amount) : formatTokens(amount);
}

/** "your daily budget", "this channel's daily budget", … */
function limitLabel(limit: BudgetLimitName): string {
  switch (limit) {
    case 'user_daily':
      return 'your daily budget';
    case 'channel_daily':
      return "this channel's daily budget";
    case 'workspace_daily':
      return "this workspace's daily budget";
    case 'turn':
      return "this turn's budget";
  }
}

/** "00:00 UTC" in the budget's zone. */
function clockTime(at: number, zone: string): string {
  const text = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(at));
  return `${text} ${zone.toUpperCase() === 'UTC' ? 'UTC' : zone}`;
}

/** "3 h 12 min", "45 min", "under a minute" */
export function durationWords(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'under a minute';
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours === 0) return `${rest} min`;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/** "it resets at 00:00 UTC, in 3 h 12 min" */
function resetWords(resetsAt: number, now: number, zone: string): string {
  return `it resets at ${clockTime(resetsAt, zone)}, in ${durationWords(resetsAt - now)}`;
}

function reachedWords(reading: LimitReading, now: number, zone: string): string {
  const { unit, cap, spent } = reading;
  const reset = reading.resetsAt !== undefined ? `; ${resetWords(reading.resetsAt, now, zone)}` : '';
  if (spent >= cap || reading.estimate === undefined)
    return `${limitLabel(reading.limit)} of ${formatAmount(unit, cap)} is spent (${formatAmount(unit, spent)} so far${reset})`;
  return `${limitLabel(reading.limit)} of ${formatAmount(unit, cap)} would be passed by the next model call (${formatAmount(unit, spent)} spent so far, and the call may use up to ${formatAmount(unit, reading.estimate)}${reset})`;
}

/** The note of a turn a limit paused before a model call. */
export function pausedWords(reading: LimitReading, now: number, zone = 'UTC'): string {
  return `Paused: ${reachedWords(reading, now, zone)}. An admin can press Continue to let this turn finish.`;
}

/** The private answer to a request that would start a turn past a limit. */
export function refusedWords(reading: LimitReading, now: number, zone = 'UTC'): string {
  return `Not started: ${reachedWords({ ...reading, estimate: undefined }, now, zone)}.`;
}

/** The thread's one note when a limit passes 80 %. */
export function warningWords(reading: LimitReading, now: number, zone = 'UTC'): string {
  const label = limitLabel(reading.limit);
  const reset = reading.resetsAt !== undefined ? `; ${resetWords(reading.resetsAt, now, zone)}` : '';
  const share = Math.min(100, Math.floor((reading.spent / reading.cap) * 100));
  return `${label[0]!.toUpperCase()}${label.slice(1)} is ${share} % spent (${formatAmount(reading.unit, reading.spent)} of ${formatAmount(reading.unit, reading.cap)}${reset}).`;
}
