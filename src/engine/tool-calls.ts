// One assistant turn's tool calls, in two passes.
//
// Pass one authorizes every call, sequentially and in call order: approvals are
// interactive, so the user sees the whole batch of asks before anything runs. Pass two
// executes what was cleared: runs of adjacent low-risk calls that need no approval go
// concurrently, everything else one at a time in call order. (Adjacent, not all: a read
// the model asked for after a write must see that write.)
//
// Invariant: every call gets exactly one tool result, on every path. A call that will not
// run because the user stopped the turn gets "interrupted by user". A tool that ignores
// the stop is not waited for: its result says it may still finish, its late outcome is
// only logged.
//
// Write-ahead: before a tool's `execute` is invoked, the ledger durably records that the
// call started (one write per call, one per concurrent batch). A call the ledger says
// started before a restart, with no result, is never run again unless its tool is
// idempotent: it may have run partly, and the model and the user are told so.
//
// Masking: every result is passed through `mask` (the configured secrets become `[secret]`)
// in `record`, the one place a result is turned into history and an event, so the model,
// the transcript, the thread's cards and the logs all get the masked text and nothing else.
// Then its content is capped as the model will read it (result-cap.ts): after the mask, so a
// cut never leaves half a secret that the mask would no longer recognise.
import { z } from 'zod';
import { ABORTED, linkedAbortController, raceAbort, sleep } from './abort.js';
import type { EngineEvent, ToolStatus } from './events.js';
import type { InboxLookup, InboxResolution } from './inbox.js';
import { INTERACTIVE_TOOLS, isInteractiveTool, type InteractiveCallbacks } from './interactive.js';
import type { EngineLogger } from './logger.js';
import type { ToolCall, ToolMessage } from './messages.js';
import { toolErrorContent } from './messages.js';
import {
  normaliseApproval,
  type ApprovalDecision,
  type Approver,
  type CallApproval,
  type PermissionPolicy,
  type Requesters,
  type SessionGrants,
} from './permissions.js';
import type { FinishReason } from './provider.js';
import { capResultContent, DEFAULT_MAX_RESULT_CHARS } from './result-cap.js';
import { diagnoseMangledArguments, type ParsedArguments } from './tool-arguments.js';
import type { ToolLedger } from './tool-ledger.js';
import { isParallelSafe, recordResult, type RecordedResult, type ToolDefinition, type ToolResult } from './tools.js';

export const INTERRUPTED_BY_USER = 'interrupted by user';
export const INTERRUPTED_BY_RESTART = 'interrupted by a restart: it may have run partly; it was not run again';
const LEDGER_FAILED = 'the bot could not record that this call was starting, so it did not run it';

export interface ToolPassContext {
  sessionId: string;
  /** The turn's stop signal. */
  signal: AbortSignal;
  tools: { get(name: string): ToolDefinition | undefined; names(): string[] };
  policy: PermissionPolicy;
  approver: Approver;
  grants: SessionGrants;
  /** Who asked for this turn (history.turnRequesters): whose grants may cover its calls. */
  requesters: Requesters;
  /** At most this many calls of one model response run; the rest are answered with an error. */
  maxCallsPerResponse?: number;
  interactive: InteractiveCallbacks;
  inbox: InboxLookup | undefined;
  logger: EngineLogger;
  /** How long a stopped tool may take to wind down before the turn stops waiting. */
  toolStopGraceMs: number;
  /** Where starts are recorded before tools run, and which round (assistant message) this is. */
  ledger: ToolLedger;
  round: string;
  append(message: ToolMessage): Promise<void>;
  grantsChanged(): void | Promise<void>;
  /** Applied to every result (content and display) before anything else sees it. */
  mask: OutputMask;
  /** The most characters a tool message's content may have, as sent (default 24,000). */
  maxResultChars?: number;
}

/** Rewrites tool output before it leaves the engine (the app masks its secrets' values). */
export type OutputMask = (text: string) => string;

export interface PendingToolCall {
  call: ToolCall;
  args: ParsedArguments;
}

interface ClearedCall {
  call: ToolCall;
  tool: ToolDefinition;
  args: unknown;
  /** Who or what allowed it: the tool is told (run_shell hardens git for the allow-list). */
  approval: CallApproval;
  /** It started before a restart and runs again: its tool is idempotent. */
  rerun: boolean;
}

type Invocation =
  | { status: 'ok'; result: RecordedResult }
  | { status: 'error'; result: RecordedResult }
  | { status: 'interrupted'; result: RecordedResult };

/**
 * Answer one round of tool calls. `startedBefore` names the calls the ledger says started
 * before a restart (resume): those are never authorized or run again, unless idempotent.
 */
export async function* runToolCalls(
  ctx: ToolPassContext,
  calls: PendingToolCall[],
  finishReason: FinishReason | undefined,
  startedBefore: ReadonlySet<string> = new Set(),
): AsyncGenerator<EngineEvent, void, undefined> {
  const answered = new Set<string>();
  const record: Recorder = async (call, status, unmasked, extra = {}) => {
    answered.add(call.id);
    // Every path (a result, a thrown error, an MCP result, an answer to ask_user, a denial)
    // goes through here: masked once, the history and the event carry the same text.
    const result = maskResult(unmasked, ctx.mask);
    result.content = capResultContent(result.content, ctx.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS);
    const message: ToolMessage = { role: 'tool', tool_call_id: call.id, content: result.content, ts: Date.now() };
    if (result.display !== undefined) message._display = result.display;
    await ctx.append(message);
    return finishedEvent(call, status, result, extra);
  };

  // A response with more calls than may run: the rest are answered first (so a restart never
  // finds them unanswered and runs them) with an error the model can act on, and no card each:
  // the thread gets one note instead of a message per call.
  const limit = ctx.maxCallsPerResponse;
  if (limit !== undefined && calls.length > limit) {
    yield { type: 'tool_calls_limited', requested: calls.length, allowed: limit };
    for (const { call } of calls.slice(limit)) {
      if (answered.has(call.id)) continue;
      answered.add(call.id);
      const content = toolErrorContent(`not run: this response held ${calls.length} tool calls and at most ${limit} run per response; send fewer at a time`);
      await ctx.append({ role: 'tool', tool_call_id: call.id, content, ts: Date.now() });
    }
  }

  const cleared: ClearedCall[] = [];
  for (const pending of limit !== undefined ? calls.slice(0, limit) : calls) {
    const { call } = pending;
    const rerun = startedBefore.has(call.id);
    // Answered from the ledger alone, even after a stop: nothing waits, nothing runs.
    if (rerun && !ctx.tools.get(call.function.name)?.metadata?.idempotent) {
      yield proposedEvent(pending);
      yield await record(call, 'interrupted', { content: toolErrorContent(INTERRUPTED_BY_RESTART) }, { restart: 'not_rerun' });
      continue;
    }
    if (ctx.signal.aborted) break;
    yield proposedEvent(pending);
    const verdict = yield* authorize(ctx, pending, finishReason, record);
    if (verdict) cleared.push({ ...verdict, rerun });
  }

  for (const segment of segmentsOf(cleared)) {
    if (ctx.signal.aborted) break;
    yield* executeSegment(ctx, segment, record);
  }

  // Whatever did not get an answer above (the user stopped the turn) is answered now.
  for (const { call } of calls) {
    if (answered.has(call.id)) continue;
    yield await record(call, 'interrupted', { content: toolErrorContent(INTERRUPTED_BY_USER) });
  }
}

function proposedEvent({ call, args }: PendingToolCall): EngineEvent {
  return { type: 'tool_proposed', toolCallId: call.id, name: call.function.name, arguments: args.ok ? args.value : args.raw };
}

type FinishExtra = { durationMs?: number; restart?: 'not_rerun' };
type Recorder = (call: ToolCall, status: ToolStatus, result: RecordedResult, extra?: FinishExtra) => Promise<EngineEvent>;

/** Decide one call. Returns it cleared to run, or records its answer and returns null. */
async function* authorize(
  ctx: ToolPassContext,
  pending: PendingToolCall,
  finishReason: FinishReason | undefined,
  record: Recorder,
): AsyncGenerator<EngineEvent, Omit<ClearedCall, 'rerun'> | null, undefined> {
  const { call, args } = pending;
  const name = call.function.name;
  const fail = async (status: ToolStatus, reason: string, detail?: Record<string, unknown>) =>
    record(call, status, { content: toolErrorContent(reason, detail) });

  if (!args.ok) {
    yield await fail('error', `${name}: ${diagnoseMangledArguments(finishReason)}`);
    return null;
  }
  if (isInteractiveTool(name)) {
    yield* answerInteractive(ctx, call, args.value, record);
    return null;
  }
  const tool = ctx.tools.get(name);
  if (!tool) {
    yield await fail('error', `unknown tool: ${name}`, { available_tools: ctx.tools.names() });
    return null;
  }
  const parsed = tool.schema.safeParse(args.value);
  if (!parsed.success) {
    yield await fail('error', `invalid arguments for ${name}: ${z.prettifyError(parsed.error)}`);
    return null;
  }
  const command = tool.commandOf?.(parsed.data);
  const decision = await ctx.policy.evaluate({ tool, arguments: args.value, command, grants: ctx.grants, requesters: ctx.requesters });
  if (decision.decision === 'allow') return { call, tool, args: parsed.data, approval: { via: decision.via ?? 'policy' } };
  if (decision.decision === 'deny') {
    yield await fail('denied', decision.reason);
    return null;
  }

  // needs_user: an answer given before a restart is used without asking again.
  const stored = await lookup(ctx, call.id);
  let outcome: ApprovalDecision | typeof ABORTED;
  if (stored?.kind === 'approval') {
    outcome = normaliseApproval(stored);
  } else if (stored?.kind === 'interrupted') {
    outcome = ABORTED;
  } else {
    yield {
      type: 'permission_required',
      toolCallId: call.id,
      name,
      arguments: shownArgumentsOf(tool, parsed.data) ?? args.value,
      reason: decision.reason,
      metadata: tool.metadata,
      command,
    };
    outcome = await askApprover(ctx, {
      toolName: name,
      arguments: args.value,
      metadata: tool.metadata,
      reason: decision.reason,
      toolCallId: call.id,
      sessionId: ctx.sessionId,
      command,
    });
  }
  if (outcome === ABORTED) {
    yield await fail('interrupted', INTERRUPTED_BY_USER);
    return null;
  }
  if (outcome.outcome === 'deny') {
    yield await fail('denied', outcome.note ?? 'denied by user');
    return null;
  }
  // The grant belongs to whoever answered; `…_all` makes it cover everyone's turns.
  const owner = { ...(outcome.by !== undefined ? { by: outcome.by } : {}), everyone: outcome.outcome.endsWith('_all') };
  if (outcome.outcome === 'always_tool' || outcome.outcome === 'always_tool_all') {
    ctx.grants.allowTool(name, owner);
    await ctx.grantsChanged();
  } else if ((outcome.outcome === 'always_command' || outcome.outcome === 'always_command_all') && command !== undefined) {
    ctx.grants.allowCommand(name, command, owner);
    await ctx.grantsChanged();
  }
  return { call, tool, args: parsed.data, approval: { via: 'human', ...(outcome.by !== undefined ? { by: outcome.by } : {}) } };
}

async function askApprover(
  ctx: ToolPassContext,
  request: Omit<Parameters<Approver>[0], 'signal'>,
): Promise<ApprovalDecision | typeof ABORTED> {
  // A stop that arrived while the consumer rendered `permission_required`: post no card.
  if (ctx.signal.aborted) return ABORTED;
  const { controller, release } = linkedAbortController(ctx.signal);
  try {
    const outcome = await raceAbort(ctx.approver({ ...request, signal: controller.signal }), controller.signal);
    if (outcome === ABORTED) return ABORTED;
    // Fail closed: anything outside the closed vocabulary is a denial.
    return normaliseApproval(outcome);
  } catch (error) {
    if (ctx.signal.aborted) return ABORTED;
    ctx.logger.warn({ err: error, toolCallId: request.toolCallId }, 'approver failed; denying the call');
    return { outcome: 'deny' };
  } finally {
    release();
  }
}

async function lookup(ctx: ToolPassContext, toolCallId: string): Promise<InboxResolution | undefined> {
  if (!ctx.inbox) return undefined;
  try {
    return await ctx.inbox.lookup(ctx.sessionId, toolCallId);
  } catch (error) {
    ctx.logger.warn({ err: error, toolCallId }, 'inbox lookup failed; asking again');
    return undefined;
  }
}

async function* answerInteractive(
  ctx: ToolPassContext,
  call: ToolCall,
  rawArgs: Record<string, unknown>,
  record: Recorder,
): AsyncGenerator<EngineEvent, void, undefined> {
  const name = call.function.name;
  const spec = INTERACTIVE_TOOLS[name]!;
  if (!spec.available(ctx.interactive)) {
    yield await record(call, 'error', { content: toolErrorContent(`${name} is not available here: nobody can answer it on this surface`) });
    return;
  }
  const parsed = spec.schema.safeParse(rawArgs);
  if (!parsed.success) {
    yield await record(call, 'error', {
      content: toolErrorContent(`invalid arguments for ${name}: ${z.prettifyError(parsed.error)}`),
    });
    return;
  }
  const stored = await lookup(ctx, call.id);
  let answer: unknown;
  if (stored?.kind === 'interrupted') {
    answer = ABORTED;
  } else if (stored && spec.fromResolution(stored) !== undefined) {
    answer = spec.fromResolution(stored);
    // Answered while nothing here waited (before a restart): what a live answer would have done is done now.
    if (spec.settle) answer = await spec.settle(ctx.interactive, spec.shown?.(ctx.interactive, parsed.data) ?? parsed.data, answer);
  } else if (spec.refuse?.(ctx.interactive, parsed.data) !== undefined) {
    // Refused before anyone is asked: no card with buttons for a request that cannot be granted.
    answer = spec.refuse(ctx.interactive, parsed.data);
  } else {
    const shown = spec.shown?.(ctx.interactive, parsed.data) ?? parsed.data;
    yield { type: 'interaction_required', toolCallId: call.id, kind: spec.kind, arguments: shown };
    const { controller, release } = linkedAbortController(ctx.signal);
    try {
      answer = ctx.signal.aborted
        ? ABORTED
        : await raceAbort(
            spec.ask(ctx.interactive, shown, { toolCallId: call.id, sessionId: ctx.sessionId, signal: controller.signal }),
            controller.signal,
          );
    } catch (error) {
      if (!ctx.signal.aborted) {
        yield await record(call, 'error', { content: toolErrorContent(`${name} failed: ${errorText(error)}`) });
        return;
      }
      answer = ABORTED;
    } finally {
      release();
    }
  }
  if (answer === ABORTED) {
    yield await record(call, 'interrupted', { content: toolErrorContent(INTERRUPTED_BY_USER) });
    return;
  }
  yield await record(call, 'ok', recordResult(answer as ToolResult));
}

/** Split cleared calls into runs: adjacent parallel-safe calls share a run. */
function segmentsOf(cleared: ClearedCall[]): ClearedCall[][] {
  const segments: ClearedCall[][] = [];
  for (const entry of cleared) {
    const last = segments.at(-1);
    if (last && isParallelSafe(entry.tool) && isParallelSafe(last[0]!.tool)) last.push(entry);
    else segments.push([entry]);
  }
  return segments;
}

/**
 * Run one segment: a single call, or a run of parallel-safe calls at once. The ledger
 * records the whole segment as started (one write) before any of its tools is invoked; if
 * that write fails, nothing in the segment runs.
 */
async function* executeSegment(ctx: ToolPassContext, segment: ClearedCall[], record: Recorder): AsyncGenerator<EngineEvent, void, undefined> {
  for (const entry of segment) {
    const started: EngineEvent = { type: 'tool_started', toolCallId: entry.call.id, name: entry.tool.name };
    if (entry.rerun) started.restart = 'rerun';
    yield started;
  }
  // A stop that arrived while the consumer rendered `tool_started`: never start the tools.
  if (ctx.signal.aborted) {
    for (const entry of segment) yield await record(entry.call, 'interrupted', { content: toolErrorContent(INTERRUPTED_BY_USER) });
    return;
  }
  try {
    await ctx.ledger.markStarted(ctx.sessionId, ctx.round, segment.map((entry) => entry.call.id));
  } catch (error) {
    ctx.logger.error({ err: error, round: ctx.round }, 'could not record tool starts; not running them');
    for (const entry of segment) yield await record(entry.call, 'error', { content: toolErrorContent(LEDGER_FAILED) });
    return;
  }
  const startedAt = performance.now();
  const running = new Map(
    segment.map((entry, index) => [index, invoke(ctx, entry).then((outcome) => ({ index, outcome, at: performance.now() }))]),
  );
  // Report each call as it finishes, so a card turns "done" when its tool is done.
  while (running.size > 0) {
    const { index, outcome, at } = await Promise.race(running.values());
    running.delete(index);
    yield await record(segment[index]!.call, outcome.status, outcome.result, { durationMs: at - startedAt });
  }
}

/** Run one tool, raced against the stop. Never throws. */
async function invoke(ctx: ToolPassContext, entry: ClearedCall): Promise<Invocation> {
  const { controller, release } = linkedAbortController(ctx.signal);
  let execution: Promise<ToolResult>;
  try {
    const requester = ctx.requesters.find((id) => id !== undefined);
    const context = { signal: controller.signal, toolCallId: entry.call.id, sessionId: ctx.sessionId, approval: entry.approval, ...(requester !== undefined ? { requester } : {}) };
    execution = Promise.resolve(entry.tool.execute(entry.args, context));
  } catch (error) {
    release();
    return { status: 'error', result: { content: thrownContent(error) } };
  }
  try {
    const first = await raceAbort(execution, controller.signal);
    if (first !== ABORTED) return { status: 'ok', result: recordResult(first) };
  } catch (error) {
    if (!ctx.signal.aborted) return { status: 'error', result: { content: thrownContent(error) } };
  } finally {
    release();
  }
  return stoppedInvocation(ctx, entry, execution);
}

/**
 * The user stopped the turn while this tool ran. A tool that honours its signal usually
 * settles within a few milliseconds (a killed command, an aborted fetch): its output is
 * worth keeping. One that does not is not waited for.
 */
async function stoppedInvocation(ctx: ToolPassContext, entry: ClearedCall, execution: Promise<ToolResult>): Promise<Invocation> {
  const settled = await Promise.race([
    execution.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    sleep(ctx.toolStopGraceMs).then(() => null),
  ]);
  if (settled && 'value' in settled) {
    const result = recordResult(settled.value);
    return {
      status: 'interrupted',
      result: { content: JSON.stringify({ interrupted: INTERRUPTED_BY_USER, output: result.content }), display: result.display },
    };
  }
  if (settled) return { status: 'interrupted', result: { content: toolErrorContent(INTERRUPTED_BY_USER) } };
  execution.then(
    (value) => ctx.logger.info({ toolCallId: entry.call.id, tool: entry.tool.name, preview: previewOf(ctx.mask(recordResult(value).content)) }, 'a stopped tool finished late; its result was not recorded'),
    (error: unknown) => ctx.logger.info({ toolCallId: entry.call.id, tool: entry.tool.name, err: error }, 'a stopped tool failed late'),
  );
  return {
    status: 'interrupted',
    result: {
      content: toolErrorContent(INTERRUPTED_BY_USER, {
        note: 'the tool did not stop in time and may still finish in the background; its outcome is unknown',
      }),
    },
  };
}

function maskResult(result: RecordedResult, mask: OutputMask): RecordedResult {
  const masked: RecordedResult = { content: mask(result.content) };
  if (result.display !== undefined) masked.display = maskStrings(result.display, mask);
  return masked;
}

/** The display sidecar with every string in it masked (it is rendered in the thread). */
function maskStrings(value: unknown, mask: OutputMask, depth = 0): unknown {
  if (typeof value === 'string') return mask(value);
  if (value === null || typeof value !== 'object' || depth > 20) return value;
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, mask, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskStrings(item, mask, depth + 1)]));
}

function finishedEvent(call: ToolCall, status: ToolStatus, result: RecordedResult, extra: FinishExtra): EngineEvent {
  const event: EngineEvent = {
    type: 'tool_finished',
    toolCallId: call.id,
    name: call.function.name,
    status,
    resultPreview: previewOf(result.content),
  };
  if (result.display !== undefined) event.display = result.display;
  if (extra.durationMs !== undefined) event.durationMs = Math.round(extra.durationMs);
  if (extra.restart) event.restart = extra.restart;
  return event;
}

export function previewOf(content: string, limit = 300): string {
  const flat = content.replace(/\r?\n/g, '\\n');
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}

function thrownContent(error: unknown): string {
  return JSON.stringify({
    error: errorText(error),
    error_type: error instanceof Error ? error.name : typeof error,
  });
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a tool's approval card shows for a call (ToolDefinition.shownArguments), or undefined for its arguments as written. */
export function shownArgumentsOf(tool: ToolDefinition, args: unknown): Record<string, unknown> | undefined {
  try {
    return tool.shownArguments?.(args);
  } catch {
    return undefined;
  }
}
