// What `npm run audit` asks for, and reading it back: the command's arguments parsed (a
// clear error for anything else), and the records of a time range, one channel or one person,
// oldest first.
//
// Dates are UTC. `--since 2026-12-01` starts at that day's first moment; `--until 2026-12-03`
// takes in the whole of that day. A moment needs its zone (`2026-12-01T09:30Z`,
// `…+01:00`): a bare local time would mean something else on every server.
import { AuditRecordSchema, type AuditRecord } from './audit-record.js';
import { dayOf, type AuditStore } from './audit-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export const AUDIT_USAGE =
  'usage: npm run audit -- [--since DATE] [--until DATE] [--channel ID] [--user ID]   (DATE: 2026-12-01 or 2026-12-01T09:30Z, UTC)';

export interface AuditQuery {
  /** First moment included (ms). */
  since?: number;
  /** First moment no longer included (ms). */
  until?: number;
  channel?: string;
  /** Who acted: started, decided, stopped, switched, granted, revoked, continued, forgot. */
  user?: string;
}

export type ParsedArgs = { ok: true; query: AuditQuery; help: boolean } | { ok: false; error: string };

const FLAGS = ['--since', '--until', '--channel', '--user'] as const;
type Flag = (typeof FLAGS)[number];

export function parseAuditArgs(argv: readonly string[]): ParsedArgs {
  const values = new Map<Flag, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { ok: true, query: {}, help: true };
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    if (!(FLAGS as readonly string[]).includes(name))
      return { ok: false, error: `unknown argument ${JSON.stringify(arg)}` };
    const flag = name as Flag;
    if (values.has(flag)) return { ok: false, error: `${flag} is given twice` };
    const value = inline ?? argv[++i];
    if (value === undefined || value.trim() === '' || (inline === undefined && value.startsWith('--')))
      return { ok: false, error: `${flag} needs a value` };
    values.set(flag, value.trim());
  }
  const query: AuditQuery = {};
  for (const [flag, value] of values) {
    if (flag === '--channel') query.channel = value;
    else if (flag === '--user') query.user = value;
    else {
      const moment = parseMoment(value, flag === '--until' ? 'end' : 'start');
      if (typeof moment === 'string') return { ok: false, error: `${flag} ${JSON.stringify(value)}: ${moment}` };
      if (flag === '--since') query.since = moment;
      else query.until = moment;
    }
  }
  if (query.since !== undefined && query.until !== undefined && query.since >= query.until)
    return { ok: false, error: '--since must come before --until' };
  return { ok: true, query, help: false };
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const MOMENT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * A day (its first moment; with `end`, the first moment after it) or a moment with its zone
 * (with `end`, just after it: `--until` includes what it names). A string: why not.
 */
function parseMoment(text: string, edge: 'start' | 'end'): number | string {
  const day = DAY.exec(text);
  if (day) {
    const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const start = Date.UTC(year, month - 1, date);
    if (dayOf(start) !== text) return 'no such day';
    return edge === 'start' ? start : start + DAY_MS;
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(text) && !MOMENT.test(text))
    return 'a moment needs a zone, e.g. 2026-12-01T09:30Z or 2026-12-01T09:30+01:00';
  const at = MOMENT.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) return 'not a date: use 2026-12-01 or 2026-12-01T09:30Z';
  return edge === 'start' ? at : at + 1;
}

function matches(record: AuditRecord, query: AuditQuery): boolean {
  if (query.since !== undefined && record.at < query.since) return false;
  if (query.until !== undefined && record.at >= query.until) return false;
  if (query.channel !== undefined && record.channel !== query.channel) return false;
  if (query.user !== undefined && record.by !== query.user) return false;
  return true;
}

/**
 * The records that match, day by day, oldest first (`each` is called per day with that
 * day's matches, so a long export never holds the whole trail). Resolves with how many
 * stored entries were not records (a damaged entry is skipped, not fatal).
 */
export async function readAudit(
  store: AuditStore,
  query: AuditQuery,
  each: (records: AuditRecord[]) => Promise<void>,
): Promise<{ unreadable: number }> {
  const first = query.since === undefined ? undefined : dayOf(query.since);
  const last = query.until === undefined ? undefined : dayOf(query.until - 1);
  let unreadable = 0;
  for (const day of await store.days()) {
    if ((first !== undefined && day < first) || (last !== undefined && day > last)) continue;
    const records: AuditRecord[] = [];
    for (const entry of await store.read(day)) {
      const parsed = AuditRecordSchema.safeParse(entry);
      if (!parsed.success) unreadable++;
      else if (matches(parsed.data, query)) records.push(parsed.data);
    }
    // Instances append to one day in the order their writes land; the moment orders them (a stable sort keeps ties as written).
    records.sort((a, b) => a.at - b.at);
    if (records.length > 0) await each(records);
  }
  return { unreadable };
}
