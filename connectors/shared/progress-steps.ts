// Compact progress (TOOL_DISPLAY=compact): a tool call as a step of the reply rather than a
// card of its own. The step is a fold over the same engine events as a card (tool-card.ts),
// drawn smaller: a title, a status among the four Slack's task cards know, the arguments once
// (details) and a short result (output).
import type { EventOf } from '../../src/engine/index.js';
import { ellipsize } from './truncate.js';
import { applyToolEvent, newToolCard, type ToolCardState, type ToolPhase } from './tool-card.js';
import type { ProgressStep } from './thread-surface.js';

/** Slack caps a task's title, details and output; the other surfaces show them on one line each. */
const TITLE_MAX = 120;
const DETAILS_MAX = 250;
const OUTPUT_MAX = 250;

const STATUS: Record<ToolPhase, ProgressStep['status']> = {
  proposed: 'pending',
  awaiting_approval: 'pending',
  awaiting_answer: 'pending',
  running: 'in_progress',
  done: 'complete',
  failed: 'error',
  denied: 'error',
  interrupted: 'error',
};

/** The steps of one turn, by tool call id, as the surface was last shown them. */
export class ProgressSteps {
  private readonly states = new Map<string, ToolCardState>();
  private readonly proposals = new Map<string, EventOf<'tool_proposed'>>();

  /** A call the model proposed: a pending step, its arguments as details. */
  proposed(event: EventOf<'tool_proposed'>): ProgressStep {
    const state = this.states.get(event.toolCallId) ?? newToolCard(event);
    this.states.set(event.toolCallId, state);
    this.proposals.set(event.toolCallId, event);
    return stepOf(state);
  }

  /** A call started or finished (or asked a person): its step as it now is. */
  changed(
    event:
      | EventOf<'tool_started'>
      | EventOf<'tool_finished'>
      | EventOf<'permission_required'>
      | EventOf<'interaction_required'>,
  ): ProgressStep {
    const name = 'name' in event ? event.name : event.kind;
    const known =
      this.states.get(event.toolCallId) ??
      newToolCard({ type: 'tool_proposed', toolCallId: event.toolCallId, name, arguments: {} });
    const state = applyToolEvent(known, event);
    this.states.set(event.toolCallId, state);
    return stepOf(state);
  }

  /** The model's proposal of a call shown as a step (a card that must be made for it starts from it). */
  proposal(toolCallId: string): EventOf<'tool_proposed'> | undefined {
    return this.proposals.get(toolCallId);
  }

  /** Whether this turn showed the call as a step. */
  has(toolCallId: string): boolean {
    return this.states.has(toolCallId);
  }

  clear(): void {
    this.states.clear();
    this.proposals.clear();
  }
}

/** A card's state as a step. */
function stepOf(state: ToolCardState): ProgressStep {
  const step: ProgressStep = {
    id: state.toolCallId,
    title: ellipsize(state.name, TITLE_MAX),
    status: STATUS[state.phase],
  };
  if (state.argsSummary) step.details = ellipsize(state.argsSummary, DETAILS_MAX);
  if (state.resultPreview && step.status !== 'pending' && step.status !== 'in_progress')
    step.output = ellipsize(state.resultPreview, OUTPUT_MAX);
  return step;
}
