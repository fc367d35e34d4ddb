// Pass two of a tool round (tool-calls.ts), for one cleared call: the tool runs, raced against
// the turn's stop. A tool that honours its signal and stops within a short grace has its output
// kept; one that does not is not waited for (its late outcome is only logged). The tool is
// told about its call (ToolContext): its own signal, who allowed it, whose request it serves.
import { ABORTED, sleep, type StopScope } from './abort.js';
import { INTERRUPTED_BY_USER, toolErrorContent, type ToolCall } from './messages.js';
import type { Requesters } from './permissions.js';
import type { ToolPassContext } from './tool-pass.js';
import {
  recordResult,
  type CallApproval,
  type RecordedResult,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from './tools.js';

/** A call pass one cleared to run. */
export interface ClearedCall {
  call: ToolCall;
  tool: ToolDefinition;
  args: unknown;
  /** Who or what allowed it: the tool is told (run_shell hardens git for the allow-list). */
  approval: CallApproval;
  /** It started before a restart and runs again: its tool is idempotent. */
  rerun: boolean;
}

export type Invocation =
  | { status: 'ok'; result: RecordedResult }
  | { status: 'error'; result: RecordedResult }
  | { status: 'interrupted'; result: RecordedResult };

/**
 * What a tool is told about its call. Its signal is made when the tool first asks for it: most
 * calls never do, and a signal of its own per call (so a tool that leaves a listener on it
 * leaks nothing into the turn) is the dearest thing a call would otherwise make. It follows the
 * turn's stop until the engine stops waiting for the tool; asked for later, it stays as the
 * turn was then.
 */
class CallContext implements ToolContext {
  declare readonly requester?: string;
  private controller: AbortController | undefined;
  private released = false;
  private stoppedWhileRunning = false;

  constructor(
    private readonly stop: StopScope,
    readonly toolCallId: string,
    readonly sessionId: string,
    readonly approval: CallApproval,
    requester: string | undefined,
  ) {
    if (requester !== undefined) this.requester = requester;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      if (this.released) {
        this.controller = new AbortController();
        if (this.stoppedWhileRunning) this.controller.abort(this.stop.signal.reason);
      } else {
        this.controller = this.stop.link();
      }
    }
    return this.controller.signal;
  }

  /** The engine no longer waits for the tool: its signal stops following the turn. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.stoppedWhileRunning = this.stop.signal.aborted;
    if (this.controller) this.stop.unlink(this.controller);
  }
}

/** Run one tool, raced against the stop. Never throws. */
export async function invoke(ctx: ToolPassContext, entry: ClearedCall): Promise<Invocation> {
  const context = new CallContext(ctx.stop, entry.call.id, ctx.sessionId, entry.approval, firstNamed(ctx.requesters));
  let execution: Promise<ToolResult>;
  try {
    execution = Promise.resolve(entry.tool.execute(entry.args, context));
  } catch (error) {
    context.release();
    return { status: 'error', result: { content: thrownContent(error) } };
  }
  try {
    const first = await ctx.stop.race(execution);
    if (first !== ABORTED) return { status: 'ok', result: recordResult(first) };
  } catch (error) {
    if (!ctx.stop.signal.aborted) return { status: 'error', result: { content: thrownContent(error) } };
  } finally {
    context.release();
  }
  return stoppedInvocation(ctx, entry, execution);
}

function firstNamed(requesters: Requesters): string | undefined {
  for (const id of requesters) if (id !== undefined) return id;
  return undefined;
}

/**
 * The user stopped the turn while this tool ran. A tool that honours its signal usually
 * settles within a few milliseconds (a killed command, an aborted fetch): its output is
 * worth keeping. One that does not is not waited for.
 */
async function stoppedInvocation(
  ctx: ToolPassContext,
  entry: ClearedCall,
  execution: Promise<ToolResult>,
): Promise<Invocation> {
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
      result: {
        content: JSON.stringify({ interrupted: INTERRUPTED_BY_USER, output: result.content }),
        display: result.display,
      },
    };
  }
  if (settled) return { status: 'interrupted', result: { content: toolErrorContent(INTERRUPTED_BY_USER) } };
  execution.then(
    (value) =>
      ctx.logger.info(
        { toolCallId: entry.call.id, tool: entry.tool.name, preview: previewOf(ctx.mask(recordResult(value).content)) },
        'a stopped tool finished late; its result was not recorded',
      ),
    (error: unknown) =>
      ctx.logger.info({ toolCallId: entry.call.id, tool: entry.tool.name, err: error }, 'a stopped tool failed late'),
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

function thrownContent(error: unknown): string {
  return JSON.stringify({
    error: errorText(error),
    error_type: error instanceof Error ? error.name : typeof error,
  });
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function previewOf(content: string, limit = 300): string {
  const flat = content.replace(/\r?\n/g, '\\n');
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}
