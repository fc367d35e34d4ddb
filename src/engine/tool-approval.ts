// Pass one of a tool round (tool-calls.ts): whether each call may run. The checks no person is
// needed for first (its arguments, its tool, the permission policy), then, when the policy
// leaves it to a person, the approval card and its answer (or the answer given before a
// restart); the interactive tools (ask_user and the like) are answered here too. Every call
// that will not run is answered through the round's Recorder, the one place results are made.
import { z } from 'zod';
import { ABORTED } from './abort.js';
import type { EngineEvent, ToolStatus } from './events.js';
import type { InboxResolution } from './inbox.js';
import { INTERACTIVE_TOOLS, isInteractiveTool } from './interactive.js';
import { INTERRUPTED_BY_USER, toolErrorContent, type ToolCall } from './messages.js';
import { normaliseApproval, type ApprovalDecision, type Approver } from './permissions.js';
import type { FinishReason } from './provider.js';
import { diagnoseMangledArguments } from './tool-arguments.js';
import type { PendingToolCall, ToolPassContext } from './tool-pass.js';
import { errorText } from './tool-invocation.js';
import { recordResult, type CallApproval, type RecordedResult, type ToolDefinition, type ToolResult } from './tools.js';

export type FinishExtra = { durationMs?: number; restart?: 'not_rerun' };

/** How a round turns a call's outcome into its result (history and event), masked once. */
export interface Recorder {
  record(call: ToolCall, status: ToolStatus, result: RecordedResult, extra?: FinishExtra): Promise<EngineEvent>;
}

/** What the checks made of one call, before anyone is asked. */
export type Verdict =
  | { kind: 'cleared'; tool: ToolDefinition; args: unknown; approval: CallApproval }
  | { kind: 'refused'; status: ToolStatus; reason: string; detail?: Record<string, unknown> }
  | { kind: 'interactive'; args: Record<string, unknown> }
  | {
      kind: 'ask';
      tool: ToolDefinition;
      args: unknown;
      raw: Record<string, unknown>;
      command: string | undefined;
      reason: string;
    };

/** Decide one call as far as no person is needed: its arguments, its tool, the policy. */
export async function judge(
  ctx: ToolPassContext,
  pending: PendingToolCall,
  finishReason: FinishReason | undefined,
): Promise<Verdict> {
  const { call, args } = pending;
  const name = call.function.name;
  if (!args.ok)
    return { kind: 'refused', status: 'error', reason: `${name}: ${diagnoseMangledArguments(finishReason)}` };
  if (isInteractiveTool(name)) return { kind: 'interactive', args: args.value };
  const tool = ctx.tools.get(name);
  if (!tool)
    return {
      kind: 'refused',
      status: 'error',
      reason: `unknown tool: ${name}`,
      detail: { available_tools: ctx.tools.names() },
    };
  const parsed = tool.schema.safeParse(args.value);
  if (!parsed.success)
    return {
      kind: 'refused',
      status: 'error',
      reason: `invalid arguments for ${name}: ${z.prettifyError(parsed.error)}`,
    };
  const command = tool.commandOf?.(parsed.data);
  const decision = await ctx.policy.evaluate({
    tool,
    arguments: args.value,
    command,
    grants: ctx.grants,
    requesters: ctx.requesters,
  });
  if (decision.decision === 'allow')
    return { kind: 'cleared', tool, args: parsed.data, approval: { via: decision.via ?? 'policy' } };
  if (decision.decision === 'deny') return { kind: 'refused', status: 'denied', reason: decision.reason };
  return { kind: 'ask', tool, args: parsed.data, raw: args.value, command, reason: decision.reason };
}

/** A call the policy leaves to a person: their answer (or one given before a restart); the approval when it may run. */
export async function* askPerson(
  ctx: ToolPassContext,
  pending: PendingToolCall,
  verdict: Extract<Verdict, { kind: 'ask' }>,
  pass: Recorder,
): AsyncGenerator<EngineEvent, CallApproval | null, undefined> {
  const { call } = pending;
  const name = call.function.name;
  const { tool, command } = verdict;
  const fail = async (status: ToolStatus, reason: string) =>
    pass.record(call, status, { content: toolErrorContent(reason) });

  // An answer given before a restart is used without asking again.
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
      arguments: shownArgumentsOf(tool, verdict.args) ?? verdict.raw,
      reason: verdict.reason,
      metadata: tool.metadata,
      command,
    };
    outcome = await askApprover(ctx, {
      toolName: name,
      arguments: verdict.raw,
      metadata: tool.metadata,
      reason: verdict.reason,
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
  } else if (
    (outcome.outcome === 'always_command' || outcome.outcome === 'always_command_all') &&
    command !== undefined
  ) {
    ctx.grants.allowCommand(name, command, owner);
    await ctx.grantsChanged();
  }
  return { via: 'human', ...(outcome.by !== undefined ? { by: outcome.by } : {}) };
}

async function askApprover(
  ctx: ToolPassContext,
  request: Omit<Parameters<Approver>[0], 'signal'>,
): Promise<ApprovalDecision | typeof ABORTED> {
  // A stop that arrived while the consumer rendered `permission_required`: post no card.
  if (ctx.stop.signal.aborted) return ABORTED;
  const controller = ctx.stop.link();
  try {
    const outcome = await ctx.stop.race(ctx.approver({ ...request, signal: controller.signal }));
    if (outcome === ABORTED) return ABORTED;
    // Fail closed: anything outside the closed vocabulary is a denial.
    return normaliseApproval(outcome);
  } catch (error) {
    if (ctx.stop.signal.aborted) return ABORTED;
    ctx.logger.warn({ err: error, toolCallId: request.toolCallId }, 'approver failed; denying the call');
    return { outcome: 'deny' };
  } finally {
    ctx.stop.unlink(controller);
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

export async function* answerInteractive(
  ctx: ToolPassContext,
  call: ToolCall,
  rawArgs: Record<string, unknown>,
  pass: Recorder,
): AsyncGenerator<EngineEvent, void, undefined> {
  const name = call.function.name;
  const spec = INTERACTIVE_TOOLS[name]!;
  if (!spec.available(ctx.interactive)) {
    yield await pass.record(call, 'error', {
      content: toolErrorContent(`${name} is not available here: nobody can answer it on this surface`),
    });
    return;
  }
  const parsed = spec.schema.safeParse(rawArgs);
  if (!parsed.success) {
    yield await pass.record(call, 'error', {
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
    if (spec.settle)
      answer = await spec.settle(ctx.interactive, spec.shown?.(ctx.interactive, parsed.data) ?? parsed.data, answer);
  } else if (spec.refuse?.(ctx.interactive, parsed.data) !== undefined) {
    // Refused before anyone is asked: no card with buttons for a request that cannot be granted.
    answer = spec.refuse(ctx.interactive, parsed.data);
  } else {
    const shown = spec.shown?.(ctx.interactive, parsed.data) ?? parsed.data;
    yield { type: 'interaction_required', toolCallId: call.id, kind: spec.kind, arguments: shown };
    const controller = ctx.stop.link();
    try {
      answer = ctx.stop.signal.aborted
        ? ABORTED
        : await ctx.stop.race(
            spec.ask(ctx.interactive, shown, {
              toolCallId: call.id,
              sessionId: ctx.sessionId,
              signal: controller.signal,
            }),
          );
    } catch (error) {
      if (!ctx.stop.signal.aborted) {
        yield await pass.record(call, 'error', { content: toolErrorContent(`${name} failed: ${errorText(error)}`) });
        return;
      }
      answer = ABORTED;
    } finally {
      ctx.stop.unlink(controller);
    }
  }
  if (answer === ABORTED) {
    yield await pass.record(call, 'interrupted', { content: toolErrorContent(INTERRUPTED_BY_USER) });
    return;
  }
  yield await pass.record(call, 'ok', recordResult(answer as ToolResult));
}

/** What a tool's approval card shows for a call (ToolDefinition.shownArguments), or undefined for its arguments as written. */
export function shownArgumentsOf(tool: ToolDefinition, args: unknown): Record<string, unknown> | undefined {
  try {
    return tool.shownArguments?.(args);
  } catch {
    return undefined;
  }
}
