// What a thread shows that no running turn reports: calls closed without a turn (a stop on
// a thread that waited through a restart, a turn given up after restarting in a loop, with
// its note), a prompt that waits since before a restart, and a call a restart cut. The
// process that last drew those cards may have died before it finished drawing (a card
// posted without its buttons, a cut call still shown as running), so the session layer
// reports them again as the engine would have. A view needs no second code path: it gets
// `tool_proposed`, then the event that says where the call stands.
import {
  INTERRUPTED_BY_RESTART,
  parseToolArguments,
  previewOf,
  toolErrorContent,
  type EngineEvent,
  type InboxItem,
  type ToolCall,
  type ToolMetadata,
} from '../engine/index.js';
import type { SessionRecord } from '../store/session-store.js';
import type { Reporter } from './session-observer.js';

export class ThreadReplay {
  constructor(private readonly reporter: Reporter) {}

  /** A call answered without running (its result text is `reason`). */
  async closed(record: SessionRecord, call: ToolCall, reason: string): Promise<void> {
    await this.proposed(record, call);
    const finished: EngineEvent = {
      type: 'tool_finished',
      toolCallId: call.id,
      name: call.function.name,
      status: 'interrupted',
      resultPreview: previewOf(toolErrorContent(reason)),
    };
    if (reason === INTERRUPTED_BY_RESTART) finished.restart = 'not_rerun';
    await this.reporter.event(record, finished);
  }

  /** A note that ends a turn (an error, with Retry on platforms that offer it). */
  async error(record: SessionRecord, message: string, errorKind: string): Promise<void> {
    await this.reporter.event(record, { type: 'error', message, errorKind });
  }

  /**
   * A prompt still waiting for a human: its card, with its buttons. `shown` gives an interactive
   * call's arguments as its card first showed them (a directory request's real path).
   */
  async waiting(
    record: SessionRecord,
    call: ToolCall,
    item: InboxItem,
    metadata: ToolMetadata | undefined,
    shown: (args: unknown) => unknown = (args) => args,
  ): Promise<void> {
    const args = await this.proposed(record, call);
    const event: EngineEvent =
      item.kind === 'approval'
        ? {
            type: 'permission_required',
            toolCallId: call.id,
            name: call.function.name,
            arguments: args,
            reason: item.reason ?? 'this call needs approval',
            ...(metadata ? { metadata } : {}),
            ...(item.command !== undefined ? { command: item.command } : {}),
          }
        : { type: 'interaction_required', toolCallId: call.id, kind: item.kind, arguments: shown(args) };
    await this.reporter.event(record, event, item);
  }

  private async proposed(record: SessionRecord, call: ToolCall): Promise<unknown> {
    const parsed = parseToolArguments(call.function.arguments);
    const args = parsed.ok ? parsed.value : parsed.raw;
    await this.reporter.event(record, {
      type: 'tool_proposed',
      toolCallId: call.id,
      name: call.function.name,
      arguments: args,
    });
    return args;
  }
}
