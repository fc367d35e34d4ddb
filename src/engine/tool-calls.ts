// One assistant turn's tool calls, in two passes.
//
// Pass one authorizes every call, sequentially and in call order: approvals are
// interactive, so the user sees the whole batch of asks before anything runs. Pass two
// executes what was cleared: runs of adjacent low-risk calls that need no approval go
// concurrently, everything else one at a time in call order. (Adjacent, not all: a read
// the model asked for after a write must see that write.) This file runs the round; how
// one call is judged and approved is tool-approval.ts, how one runs is tool-invocation.ts.
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
import type { EngineEvent, ToolStatus } from './events.js';
import {
  INTERRUPTED_BY_RESTART,
  INTERRUPTED_BY_USER,
  toolErrorContent,
  type ToolCall,
  type ToolMessage,
} from './messages.js';
import type { FinishReason } from './provider.js';
import { capResultContent, DEFAULT_MAX_RESULT_CHARS } from './result-cap.js';
import { askPerson, answerInteractive, judge, type FinishExtra, type Recorder } from './tool-approval.js';
import { invoke, previewOf, type ClearedCall } from './tool-invocation.js';
import type { OutputMask } from './output-masks.js';
import type { PendingToolCall, ToolPassContext } from './tool-pass.js';
import { isParallelSafe, type RecordedResult } from './tools.js';

export { INTERRUPTED_BY_RESTART, INTERRUPTED_BY_USER } from './messages.js';
export { shownArgumentsOf } from './tool-approval.js';
export { previewOf } from './tool-invocation.js';

const LEDGER_FAILED = 'the bot could not record that this call was starting, so it did not run it';

const NONE_STARTED: ReadonlySet<string> = new Set();

/**
 * Answer one round of tool calls (`round`: its name in the ledger). `startedBefore` names the
 * calls the ledger says started before a restart (resume): those are never authorized or run
 * again, unless idempotent.
 */
export async function* runToolCalls(
  ctx: ToolPassContext,
  round: string,
  calls: PendingToolCall[],
  finishReason: FinishReason | undefined,
  startedBefore: ReadonlySet<string> = NONE_STARTED,
): AsyncGenerator<EngineEvent, void, undefined> {
  const pass = new ToolPass(ctx);

  // A response with more calls than may run: the rest are answered first (so a restart never
  // finds them unanswered and runs them) with an error the model can act on, and no card each:
  // the thread gets one note instead of a message per call.
  const limit = ctx.maxCallsPerResponse;
  if (limit !== undefined && calls.length > limit) {
    yield { type: 'tool_calls_limited', requested: calls.length, allowed: limit };
    for (const { call } of calls.slice(limit)) {
      if (pass.answered.has(call.id)) continue;
      pass.answered.add(call.id);
      const content = toolErrorContent(
        `not run: this response held ${calls.length} tool calls and at most ${limit} run per response; send fewer at a time`,
      );
      await ctx.append({ role: 'tool', tool_call_id: call.id, content, ts: Date.now() });
    }
  }

  const cleared: ClearedCall[] = [];
  for (const pending of limit !== undefined && calls.length > limit ? calls.slice(0, limit) : calls) {
    const { call } = pending;
    const rerun = startedBefore.has(call.id);
    // Answered from the ledger alone, even after a stop: nothing waits, nothing runs.
    if (rerun && !ctx.tools.get(call.function.name)?.metadata?.idempotent) {
      yield proposedEvent(pending);
      yield await pass.record(
        call,
        'interrupted',
        { content: toolErrorContent(INTERRUPTED_BY_RESTART) },
        { restart: 'not_rerun' },
      );
      continue;
    }
    if (ctx.stop.signal.aborted) break;
    yield proposedEvent(pending);
    const verdict = await judge(ctx, pending, finishReason);
    switch (verdict.kind) {
      case 'cleared':
        cleared.push({ call, tool: verdict.tool, args: verdict.args, approval: verdict.approval, rerun });
        break;
      case 'refused':
        yield await pass.record(call, verdict.status, { content: toolErrorContent(verdict.reason, verdict.detail) });
        break;
      case 'interactive':
        yield* answerInteractive(ctx, call, verdict.args, pass);
        break;
      case 'ask': {
        const approval = yield* askPerson(ctx, pending, verdict, pass);
        if (approval) cleared.push({ call, tool: verdict.tool, args: verdict.args, approval, rerun });
        break;
      }
    }
  }

  for (const segment of segmentsOf(cleared)) {
    if (ctx.stop.signal.aborted) break;
    yield* executeSegment(ctx, round, segment, pass);
  }

  // Whatever did not get an answer above (the user stopped the turn) is answered now.
  for (const { call } of calls) {
    if (pass.answered.has(call.id)) continue;
    yield await pass.record(call, 'interrupted', { content: toolErrorContent(INTERRUPTED_BY_USER) });
  }
}

function proposedEvent({ call, args }: PendingToolCall): EngineEvent {
  return {
    type: 'tool_proposed',
    toolCallId: call.id,
    name: call.function.name,
    arguments: args.ok ? args.value : args.raw,
  };
}

/** One round's results: which calls are answered, and the one way a result is recorded. */
class ToolPass implements Recorder {
  readonly answered = new Set<string>();

  constructor(private readonly ctx: ToolPassContext) {}

  /**
   * Every path (a result, a thrown error, an MCP result, an answer to ask_user, a denial) goes
   * through here: masked once, the history and the event carry the same text.
   */
  async record(
    call: ToolCall,
    status: ToolStatus,
    unmasked: RecordedResult,
    extra?: FinishExtra,
  ): Promise<EngineEvent> {
    this.answered.add(call.id);
    const result = maskResult(unmasked, this.ctx.mask);
    result.content = capResultContent(result.content, this.ctx.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS);
    const message: ToolMessage = { role: 'tool', tool_call_id: call.id, content: result.content, ts: Date.now() };
    if (result.display !== undefined) message._display = result.display;
    await this.ctx.append(message);
    return finishedEvent(call, status, result, extra);
  }
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
async function* executeSegment(
  ctx: ToolPassContext,
  round: string,
  segment: ClearedCall[],
  pass: ToolPass,
): AsyncGenerator<EngineEvent, void, undefined> {
  for (const entry of segment) {
    const started: EngineEvent = { type: 'tool_started', toolCallId: entry.call.id, name: entry.tool.name };
    if (entry.rerun) started.restart = 'rerun';
    yield started;
  }
  // A stop that arrived while the consumer rendered `tool_started`: never start the tools.
  if (ctx.stop.signal.aborted) {
    for (const entry of segment)
      yield await pass.record(entry.call, 'interrupted', { content: toolErrorContent(INTERRUPTED_BY_USER) });
    return;
  }
  try {
    await ctx.ledger.markStarted(
      ctx.sessionId,
      round,
      segment.map((entry) => entry.call.id),
    );
  } catch (error) {
    ctx.logger.error({ err: error, round }, 'could not record tool starts; not running them');
    for (const entry of segment)
      yield await pass.record(entry.call, 'error', { content: toolErrorContent(LEDGER_FAILED) });
    return;
  }
  const startedAt = performance.now();
  if (segment.length === 1) {
    const outcome = await invoke(ctx, segment[0]!);
    yield await pass.record(segment[0]!.call, outcome.status, outcome.result, {
      durationMs: performance.now() - startedAt,
    });
    return;
  }
  const running = new Map(
    segment.map((entry, index) => [
      index,
      invoke(ctx, entry).then((outcome) => ({ index, outcome, at: performance.now() })),
    ]),
  );
  // Report each call as it finishes, so a card turns "done" when its tool is done.
  while (running.size > 0) {
    const { index, outcome, at } = await Promise.race(running.values());
    running.delete(index);
    yield await pass.record(segment[index]!.call, outcome.status, outcome.result, { durationMs: at - startedAt });
  }
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

function finishedEvent(
  call: ToolCall,
  status: ToolStatus,
  result: RecordedResult,
  extra: FinishExtra | undefined,
): EngineEvent {
  const event: EngineEvent = {
    type: 'tool_finished',
    toolCallId: call.id,
    name: call.function.name,
    status,
    resultPreview: previewOf(result.content),
  };
  if (result.display !== undefined) event.display = result.display;
  if (extra?.durationMs !== undefined) event.durationMs = Math.round(extra.durationMs);
  if (extra?.restart) event.restart = extra.restart;
  return event;
}
