// The state of one tool call's card (its own threaded message, edited in place), derived from
// the engine's events and nothing else.
//
// The idea to hold: a card is a pure fold over the events that name its `toolCallId`. The
// connector keeps one state per call, folds each event in, and re-renders only when the fold
// returns a new object; an event that changes nothing returns the same object, so no edit is
// spent on it (Slack `chat.update` is Tier 3, about 50 a minute; Discord edits share a
// per-route rate-limit bucket).
// Once a call has finished, its card is final: a late or replayed event cannot reopen it.
import type { EngineEvent, EventOf, InteractionKind } from '../../src/engine/index.js';
import { callArguments, type ArgumentPart } from './call-arguments.js';
import { ellipsize } from './truncate.js';

export type ToolPhase =
  'proposed' | 'awaiting_approval' | 'awaiting_answer' | 'running' | 'done' | 'failed' | 'denied' | 'interrupted';

export interface ToolCardState {
  toolCallId: string;
  name: string;
  /** One line: the arguments as a person skims them (see `summarizeArguments`). */
  argsSummary: string;
  phase: ToolPhase;
  /** Epoch milliseconds when the tool started running. */
  startedAt?: number;
  durationMs?: number;
  /** At most ~300 characters of what the model got back, newlines escaped (from the engine). */
  resultPreview?: string;
  /** The tool's `_display` sidecar: for the user, never seen by the model. */
  display?: unknown;
  /** Who answered the approval or question, and how: the card shows "Approved by @x". */
  decision?: { by: string; choice: string };
  /** Why the policy asks for approval (from `permission_required`). */
  approvalReason?: string;
  /** Where the tool runs and what it can reach (the tool's metadata), for the approver. */
  confinement?: string;
  /** What an "always allow this command" grant would remember, for shell-like tools. */
  command?: string;
  /**
   * Every character of what an approval (or a directory grant) covers, from the event that
   * asked for it: the approver must be able to see all of it before clicking (an approval of
   * what one could not see is no consent).
   * `argsSummary` is a one-line glimpse; this is the whole.
   */
  fullArguments?: ArgumentPart[];
  /** What the tool asks the user (from `interaction_required`). */
  interactionKind?: InteractionKind;
  /**
   * The bot restarted while this call ran: `not_rerun` (it may have run partly and was not
   * run again) or `rerun` (its tool is safe to repeat, so it ran again).
   */
  restart?: 'rerun' | 'not_rerun';
}

const FINISHED: ReadonlySet<ToolPhase> = new Set(['done', 'failed', 'denied', 'interrupted']);

/** A card for a call the model just proposed. */
export function newToolCard(event: EventOf<'tool_proposed'>): ToolCardState {
  return {
    toolCallId: event.toolCallId,
    name: event.name,
    argsSummary: summarizeArguments(event.arguments),
    phase: 'proposed',
  };
}

/**
 * Whether the card will change no more.
 * @internal
 */
export function isFinished(phase: ToolPhase): boolean {
  return FINISHED.has(phase);
}

/**
 * The card after one engine event. Pure: never mutates `card`; returns `card` itself when the
 * event is about another call, is not about tool calls, or arrives after the call finished.
 * `now` stamps `startedAt` on `tool_started` (the event carries no time of its own).
 */
export function applyToolEvent(card: ToolCardState, event: EngineEvent, now: number = Date.now()): ToolCardState {
  if (isFinished(card.phase)) return card;
  switch (event.type) {
    case 'tool_proposed':
      return card;
    case 'permission_required': {
      if (event.toolCallId !== card.toolCallId) return card;
      const next: ToolCardState = {
        ...card,
        phase: 'awaiting_approval',
        approvalReason: event.reason,
        fullArguments: callArguments(event.name, event.arguments),
      };
      if (event.command !== undefined) next.command = event.command;
      if (event.metadata?.confinement !== undefined) next.confinement = event.metadata.confinement;
      return next;
    }
    case 'interaction_required': {
      if (event.toolCallId !== card.toolCallId) return card;
      const next: ToolCardState = { ...card, phase: 'awaiting_answer', interactionKind: event.kind };
      // A directory grant is a consent like an approval: the folder is shown in full. A question
      // or a plan shows its own text on the card.
      // A directory grant and a plan are consents like an approval: shown in full, or in a modal.
      if (event.kind === 'directory') next.fullArguments = callArguments('request_directory', event.arguments);
      if (event.kind === 'plan') next.fullArguments = callArguments('propose_plan', event.arguments);
      return next;
    }
    case 'tool_started': {
      if (event.toolCallId !== card.toolCallId) return card;
      const next: ToolCardState = { ...card, phase: 'running', startedAt: now };
      if (event.restart) next.restart = event.restart;
      return next;
    }
    case 'tool_finished': {
      if (event.toolCallId !== card.toolCallId) return card;
      const next: ToolCardState = { ...card, phase: finishedPhase(event.status), resultPreview: event.resultPreview };
      if (event.restart) next.restart = event.restart;
      if (event.display !== undefined) next.display = event.display;
      const durationMs =
        event.durationMs ?? (card.startedAt !== undefined ? Math.max(0, now - card.startedAt) : undefined);
      if (durationMs !== undefined) next.durationMs = durationMs;
      return next;
    }
    case 'tool_calls_limited':
    case 'turn_start':
    case 'reasoning_delta':
    case 'assistant_delta':
    case 'assistant_message':
    case 'iteration_end':
    case 'compacting':
    case 'compacted':
    case 'steering_injected':
    case 'input_files':
    case 'error':
    case 'interrupted':
    case 'turn_end':
      return card;
    default:
      return assertNever(event);
  }
}

/**
 * Record who answered the card's approval or question. The engine's events do not carry this
 * (the answer arrives as a button click in the connector), so the connector adds it.
 */
export function recordDecision(card: ToolCardState, by: string, choice: string): ToolCardState {
  return { ...card, decision: { by, choice } };
}

/** Words for the card's status line. */
export function phaseLabel(phase: ToolPhase): string {
  switch (phase) {
    case 'proposed':
      return 'Pending';
    case 'awaiting_approval':
      return 'Awaiting approval';
    case 'awaiting_answer':
      return 'Awaiting answer';
    case 'running':
      return 'Running';
    case 'done':
      return 'Done';
    case 'failed':
      return 'Failed';
    case 'denied':
      return 'Denied';
    case 'interrupted':
      return 'Stopped';
    default:
      return assertNever(phase);
  }
}

/** What the card says about a restart that cut this call, if one did. */
export function restartNote(card: Pick<ToolCardState, 'restart'>): string | undefined {
  switch (card.restart) {
    case 'not_rerun':
      return 'Interrupted by a restart: it may have run partly; it was not run again';
    case 'rerun':
      return 'The bot restarted while this ran; it ran again (this tool is safe to repeat)';
    case undefined:
      return undefined;
    default:
      return assertNever(card.restart);
  }
}

/** A status icon both platforms render the same (plain Unicode, not workspace emoji). */
export function phaseIcon(phase: ToolPhase): string {
  switch (phase) {
    case 'proposed':
      return '⏳';
    case 'awaiting_approval':
    case 'awaiting_answer':
      return '✋';
    case 'running':
      return '⚙️';
    case 'done':
      return '✅';
    case 'failed':
      return '❌';
    case 'denied':
      return '🚫';
    case 'interrupted':
      return '⏹️';
    default:
      return assertNever(phase);
  }
}

/** The argument fields a person recognises a call by, shown first. */
const LEADING_FIELDS = ['command', 'path', 'url', 'query'] as const;

/**
 * The arguments on one line of at most `max` characters: a `command`, `path`, `url` or `query`
 * field first (`git status`, then the other fields as JSON), otherwise compact JSON; newlines
 * shown as "\n"; cut with "…". Raw text (arguments the model mangled) is shown as it came.
 * @internal
 */
export function summarizeArguments(args: unknown, max = 120): string {
  if (args === undefined || args === null) return '';
  if (typeof args === 'string') return ellipsize(args, max);
  if (typeof args === 'object' && !Array.isArray(args)) {
    const record = args as Record<string, unknown>;
    const lead = LEADING_FIELDS.find((key) => typeof record[key] === 'string' || typeof record[key] === 'number');
    if (lead !== undefined) {
      const { [lead]: leading, ...rest } = record;
      const tail = Object.keys(rest).length > 0 ? ` ${safeJson(rest)}` : '';
      return ellipsize(`${String(leading)}${tail}`, max);
    }
  }
  return ellipsize(safeJson(args), max);
}

/** "850 ms", "2.4 s", "12 s", "1 min 5 s", "1 h 2 min". */
export function formatDuration(ms: number): string {
  const value = Number.isFinite(ms) ? Math.max(0, ms) : 0;
  const millis = Math.round(value);
  if (millis < 1000) return `${millis} ms`;
  const tenths = Math.round(value / 100) / 10;
  if (tenths < 10) return `${tenths.toFixed(1)} s`;
  const seconds = Math.round(value / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * The `_display` sidecar as a short note for the card, or undefined when it says nothing:
 * a string as is, `{hiddenByPrivacyFilter: 3}` → "hiddenByPrivacyFilter: 3", several fields
 * joined with " · ", nested values as compact JSON. Cut with "…" at `max` characters.
 */
export function displayNote(display: unknown, max = 200): string | undefined {
  const note = describe(display);
  return note === undefined || note === '' ? undefined : ellipsize(note, max);
}

function describe(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) {
    const parts = value.map(describe).filter((part): part is string => part !== undefined && part !== '');
    return parts.join(', ');
  }
  if (typeof value === 'object') {
    const parts = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined && field !== null)
      .map(([key, field]) => `${key}: ${typeof field === 'object' ? safeJson(field) : describe(field)}`);
    return parts.join(' · ');
  }
  return undefined;
}

function finishedPhase(status: EventOf<'tool_finished'>['status']): ToolPhase {
  switch (status) {
    case 'ok':
      return 'done';
    case 'error':
      return 'failed';
    case 'denied':
      return 'denied';
    case 'interrupted':
      return 'interrupted';
    default:
      return assertNever(status);
  }
}

/** JSON for display; a value JSON cannot hold (a cycle, a BigInt) is shown as text rather than thrown. */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
