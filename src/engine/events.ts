// What a running turn tells the outside world. Connectors render these and nothing else:
// they never reach into engine state. Every runner (run / retry / resume) that starts a
// turn ends it with exactly one `turn_end`, whatever path it took.
import type { MessageSource, Usage, UserContent } from './messages.js';
import type { ToolMetadata } from './tools.js';

export type ToolStatus = 'ok' | 'error' | 'denied' | 'interrupted';
export type TurnEndStatus = 'completed' | 'max_iterations_exceeded' | 'interrupted' | 'error';
export type TurnKind = 'run' | 'retry' | 'resume';
export type InteractionKind = 'question' | 'plan' | 'directory';

export type EngineEvent =
  | { type: 'turn_start'; kind: TurnKind; input: UserContent | null; source?: MessageSource; display?: unknown }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'assistant_delta'; text: string }
  | {
      type: 'assistant_message';
      text: string | null;
      toolCalls: { id: string; name: string }[];
      reasoning?: string;
      usage?: Usage;
    }
  | { type: 'tool_proposed'; toolCallId: string; name: string; arguments: unknown }
  /** The model asked for more calls in one response than may run: only the first `allowed` did. */
  | { type: 'tool_calls_limited'; requested: number; allowed: number }
  | {
      type: 'permission_required';
      toolCallId: string;
      name: string;
      arguments: unknown;
      reason: string;
      metadata?: ToolMetadata;
      /** What `always_command` would remember, when the tool has a command (shell). */
      command?: string;
    }
  | { type: 'interaction_required'; toolCallId: string; kind: InteractionKind; arguments: unknown }
  | {
      type: 'tool_started';
      toolCallId: string;
      name: string;
      /** `rerun`: the call had started before a restart and runs again (its tool is idempotent). */
      restart?: 'rerun';
    }
  | {
      type: 'tool_finished';
      toolCallId: string;
      name: string;
      status: ToolStatus;
      /** At most ~300 characters of what the model got back, newlines escaped. */
      resultPreview: string;
      display?: unknown;
      durationMs?: number;
      /** `not_rerun`: the call was running when the bot restarted; it may have run partly and was not run again. */
      restart?: 'not_rerun';
    }
  | { type: 'iteration_end'; iteration: number }
  | { type: 'compacting' }
  | { type: 'compacted'; text: string }
  | { type: 'steering_injected'; id: string; text: string; source?: MessageSource }
  /** Files shared with the message just taken that did not reach the model in full, one line each (for a note in the thread). */
  | { type: 'input_files'; problems: string[] }
  | { type: 'error'; message: string; errorKind: string }
  | { type: 'interrupted'; iterations: number }
  | { type: 'turn_end'; status: TurnEndStatus; iterations: number; pendingSteering: number };

/** @internal */
export type EngineEventType = EngineEvent['type'];
export type EventOf<T extends EngineEventType> = Extract<EngineEvent, { type: T }>;
