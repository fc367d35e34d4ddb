// The engine's events as the operations side hears them: registered on the observer hub for
// every platform, it turns what a turn reports (start and end, tool calls, waits on a person,
// steering, a stop) into ops events. What only the session layer knows (who clicked, who
// stopped, who switched the model) it emits itself (session-manager.ts, thread-controls.ts).
//
// Per session it remembers only what a later event needs: the error that will end the turn,
// the tool names and short argument summaries of the round, when a stop was asked. A turn's
// end forgets them, so memory stays bounded by the sessions that are working.
import type { EngineEvent, InboxItem } from '../engine/index.js';
import type { SessionObserver } from '../sessions/session-observer.js';
import type { SessionRecord } from '../store/session-store.js';
import { placeOf, type OpsBus, type WaitKind } from './ops-events.js';

/**
 * The longest argument summary the audit trail keeps.
 * @internal
 */
export const ARGS_SUMMARY_CHARS = 200;

interface ToolMemory {
  tool: string;
  args: string;
  /** It waited on a person: what for, and since when. */
  kind?: WaitKind;
  waitingSince?: number;
  /** The wait's end was reported (a click, or a prompt closed by the session layer). */
  waitEnded?: boolean;
  started?: boolean;
}

interface TurnMemory {
  errorKind?: string;
  tools: Map<string, ToolMemory>;
}

export interface OpsObserverOptions {
  /** Masks configured secrets in the argument summaries. */
  mask: (text: string) => string;
  now?: () => number;
}

export class OpsObserver implements SessionObserver {
  private readonly turns = new Map<string, TurnMemory>();
  private readonly stopAsked = new Map<string, { by: string; at: number }>();
  private readonly now: () => number;

  constructor(
    private readonly bus: OpsBus,
    private readonly options: OpsObserverOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** A stop was asked here (session-manager.ts): the `stopped` event measures from it. */
  stopRequested(session: SessionRecord, by: string): void {
    const at = this.now();
    this.stopAsked.set(session.id, { by, at });
    this.bus.emit({ type: 'stop_requested', at, place: placeOf(session), by });
  }

  onEvent(session: SessionRecord, event: EngineEvent): void {
    // Deltas are most of the events and none of them is a fact worth reporting.
    if (!this.bus.listening || event.type === 'assistant_delta' || event.type === 'reasoning_delta') return;
    const place = placeOf(session);
    const at = this.now();
    const memory = this.memoryOf(session.id);
    switch (event.type) {
      case 'turn_start': {
        const by = event.source?.userId ?? session.startedBy;
        this.bus.emit({
          type: 'turn_started',
          at,
          place,
          kind: event.kind,
          ...(by ? { by } : {}),
          model: session.model,
        });
        return;
      }
      case 'tool_proposed':
        memory.tools.set(event.toolCallId, { tool: event.name, args: this.summary(event.arguments) });
        return;
      case 'permission_required':
      case 'interaction_required': {
        const kind: WaitKind = event.type === 'permission_required' ? 'approval' : event.kind;
        const known = memory.tools.get(event.toolCallId);
        const tool = event.type === 'permission_required' ? event.name : (known?.tool ?? event.kind);
        memory.tools.set(event.toolCallId, {
          tool,
          args: known?.args ?? this.summary(event.arguments),
          kind,
          waitingSince: at,
        });
        this.bus.emit({ type: 'wait_started', at, place, toolCallId: event.toolCallId, tool, kind });
        return;
      }
      case 'tool_started': {
        const known = memory.tools.get(event.toolCallId);
        if (known) known.started = true;
        this.bus.emit({ type: 'tool_started', at, place, toolCallId: event.toolCallId, tool: event.name });
        return;
      }
      case 'tool_finished': {
        const known = memory.tools.get(event.toolCallId);
        // A stop while the call waited on a person: the engine closed the prompt itself (no
        // click, no prompt closed by the session layer), so its wait ends here.
        if (known?.kind && !known.waitEnded && !known.started && event.status === 'interrupted') {
          known.waitEnded = true;
          this.bus.emit({
            type: 'wait_ended',
            at,
            place,
            toolCallId: event.toolCallId,
            tool: known.tool,
            kind: known.kind,
            decision: 'interrupted',
            ...(known.waitingSince !== undefined ? { waitedMs: at - known.waitingSince } : {}),
          });
        }
        this.bus.emit({
          type: 'tool_ended',
          at,
          place,
          toolCallId: event.toolCallId,
          tool: event.name,
          outcome: event.status,
          ...(event.durationMs !== undefined ? { durationMs: event.durationMs } : {}),
          ...(known ? { args: known.args } : {}),
        });
        return;
      }
      case 'steering_injected':
        this.bus.emit({ type: 'steered', at, place });
        return;
      case 'error':
        memory.errorKind = event.errorKind;
        return;
      case 'interrupted': {
        const asked = this.stopAsked.get(session.id);
        this.stopAsked.delete(session.id);
        this.bus.emit({ type: 'stopped', at, place, ...(asked ? { by: asked.by, latencyMs: at - asked.at } : {}) });
        return;
      }
      case 'turn_end':
        this.bus.emit({
          type: 'turn_ended',
          at,
          place,
          status: event.status,
          ...(memory.errorKind ? { errorKind: memory.errorKind } : {}),
          iterations: event.iterations,
        });
        this.turns.delete(session.id);
        this.stopAsked.delete(session.id);
        return;
      default:
        return;
    }
  }

  /** A prompt closed without a click (a stop, a reply, a restart). */
  onPromptClosed(session: SessionRecord, item: InboxItem): void {
    const known = this.turns.get(session.id)?.tools.get(item.toolCallId);
    if (known) known.waitEnded = true;
    this.bus.emit({
      type: 'wait_ended',
      at: this.now(),
      place: placeOf(session),
      toolCallId: item.toolCallId,
      tool: known?.tool ?? item.kind,
      kind: item.kind,
      decision: item.resolution?.kind === 'interrupted' ? 'interrupted' : 'closed',
      waitedMs: this.now() - item.createdAt,
    });
  }

  /** A click decided a waiting call (session-ops.ts reports it): its wait has ended. */
  decided(sessionId: string, toolCallId: string): void {
    const known = this.turns.get(sessionId)?.tools.get(toolCallId);
    if (known) known.waitEnded = true;
  }

  /** The tool a waiting call is for, when this process saw it proposed. */
  toolOf(sessionId: string, toolCallId: string): string | undefined {
    return this.turns.get(sessionId)?.tools.get(toolCallId)?.tool;
  }

  private memoryOf(sessionId: string): TurnMemory {
    let memory = this.turns.get(sessionId);
    if (!memory) {
      memory = { tools: new Map() };
      this.turns.set(sessionId, memory);
    }
    return memory;
  }

  private summary(args: unknown): string {
    let text: string;
    try {
      text = typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
    } catch {
      text = String(args);
    }
    const masked = this.options.mask(text).replace(/\s+/g, ' ');
    return masked.length > ARGS_SUMMARY_CHARS ? `${masked.slice(0, ARGS_SUMMARY_CHARS - 1)}…` : masked;
  }
}
