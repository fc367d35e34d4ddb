// What the audit trail keeps of an operations event, and the id that makes it once-only.
//
// Metadata only, never message text: who acted, where, on what, with what outcome and when.
// A record is worth keeping when it answers "who did what to this thread": a turn started
// (by whom, with which model), a tool call's end (the tool, the masked short summary of its
// arguments, outcome, duration), a prompt decided by a click or closed without one, a grant
// given or revoked, a stop asked and a turn stopped, a model switched, a spend-limit Continue
// or refusal, a /forget. Not records: model calls and spend (the metrics and the spend ledger
// hold them), tool_started and wait_started (the ending record carries the duration or the
// wait), turn_ended, steering and platform calls (counts, not acts of a person).
//
// The one idea: a record's id is made from its facts, so two instances that see one fact
// write one record (audit-store.ts claims the id). What may repeat and what may not:
// - a tool call's end: once per session, call id and outcome (an instance that takes a turn
//   over and re-answers the same call the same way writes nothing; a call that ended `ok` on
//   one instance and was answered `interrupted` on the next is two facts, two records);
// - a prompt's end: once per session, call id, kind, decision and decider;
// - every other record carries no id of its own: its id is made of all its facts, the moment
//   (ms) included, so a replay of the very event is once, while the same person stopping
//   twice, or a turn resumed after a takeover (kind `resume`), is a record of its own.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { OpsEvent } from '../ops-events.js';

/** The event types the trail records (see the header for why these). */
const AUDITED_TYPES = [
  'turn_started',
  'tool_ended',
  'wait_ended',
  'grant_changed',
  'stop_requested',
  'stopped',
  'model_switched',
  'budget_continued',
  'budget_refused',
  'forgotten',
] as const satisfies readonly OpsEvent['type'][];
type AuditedType = (typeof AUDITED_TYPES)[number];
type Audited = Extract<OpsEvent, { type: AuditedType }>;

/**
 * One line of the trail. `by`: the person who acted (started, decided, stopped, switched,
 * granted, revoked, continued, forgot); absent where no person acted (a tool call, a prompt
 * closed without a click, a refusal). Other fields by type, all optional here: a record is
 * read back from the store, where a newer version may have added fields.
 */
export const AuditRecordSchema = z.looseObject({
  time: z.string(),
  at: z.number(),
  type: z.enum(AUDITED_TYPES),
  by: z.string().optional(),
  platform: z.string(),
  workspace: z.string(),
  channel: z.string(),
  sessionId: z.string(),
  id: z.string(),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

function isAudited(event: OpsEvent): event is Audited {
  return (AUDITED_TYPES as readonly string[]).includes(event.type);
}

/**
 * The record of an event, or undefined when the trail does not keep it. `mask` hides the
 * configured secrets in what came from a tool call (its argument summary, a granted command):
 * the summary is masked where it is made, and masking again costs little.
 */
export function auditRecordOf(
  event: OpsEvent,
  mask: (text: string) => string = (text) => text,
): AuditRecord | undefined {
  if (!isAudited(event)) return undefined;
  const { place } = event;
  const head = { time: new Date(event.at).toISOString(), at: event.at, type: event.type };
  const where = {
    platform: place.platform,
    workspace: place.workspace,
    channel: place.channel,
    sessionId: place.sessionId,
  };
  const id = recordIdOf(event);
  switch (event.type) {
    case 'turn_started':
      return { ...head, ...by(event.by), ...where, kind: event.kind, model: event.model, id };
    case 'tool_ended':
      return {
        ...head,
        ...where,
        tool: event.tool,
        toolCallId: event.toolCallId,
        ...(event.args !== undefined ? { args: mask(event.args) } : {}),
        outcome: event.outcome,
        ...(event.durationMs !== undefined ? { durationMs: event.durationMs } : {}),
        id,
      };
    case 'wait_ended':
      return {
        ...head,
        ...by(event.by),
        ...where,
        tool: event.tool,
        toolCallId: event.toolCallId,
        kind: event.kind,
        decision: event.decision,
        // No click: a stop, a reply or a restart closed it.
        closed: event.by === undefined,
        ...(event.waitedMs !== undefined ? { waitedMs: event.waitedMs } : {}),
        id,
      };
    case 'grant_changed':
      return { ...head, by: event.by, ...where, change: event.change, what: mask(event.what), scope: event.scope, id };
    case 'stop_requested':
      return { ...head, by: event.by, ...where, id };
    case 'stopped':
      return {
        ...head,
        ...by(event.by),
        ...where,
        ...(event.latencyMs !== undefined ? { latencyMs: event.latencyMs } : {}),
        id,
      };
    case 'model_switched':
      return { ...head, by: event.by, ...where, from: event.from, to: event.to, id };
    case 'budget_continued':
      return { ...head, by: event.by, ...where, ...(event.limit ? { limit: event.limit } : {}), id };
    case 'budget_refused':
      return { ...head, ...where, limit: event.limit, what: event.what, id };
    case 'forgotten':
      return { ...head, by: event.by, ...where, id };
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
}

/** The record's id: a hash of the facts that make it one (see the header for the rule). */
function recordIdOf(event: Audited): string {
  const { sessionId } = event.place;
  let facts: unknown[];
  switch (event.type) {
    case 'tool_ended':
      facts = [event.type, sessionId, event.toolCallId, event.outcome];
      break;
    case 'wait_ended':
      facts = [event.type, sessionId, event.toolCallId, event.kind, event.decision, event.by ?? ''];
      break;
    default:
      facts = [event.type, canonical(event)];
  }
  return createHash('sha256').update(JSON.stringify(facts)).digest('hex').slice(0, 32);
}

function by(who: string | undefined): { by?: string } {
  return who === undefined ? {} : { by: who };
}

/** The same value with object keys sorted, so two equal events hash alike whatever their key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, inner]) => inner !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, inner]) => [key, canonical(inner)]),
    );
  }
  return value;
}
