// The turn loop: call the model, run the tool round it asks for, take steering at the
// checkpoint, and again, until the model answers without tools, a rail trips (the iteration
// limit, a failed call) or the user stops it. `driveTurn` wraps every turn, whatever opened
// it: exactly one `turn_end`, and no tool call left unanswered even if the consumer walks
// away mid-turn or something throws. How a turn ends otherwise is turn-endings.ts.
import { setMaxListeners } from 'node:events';
import { StopScope } from './abort.js';
import type { ModelCallSetting } from './compaction-runner.js';
import type { EngineEvent, TurnEndStatus, TurnKind } from './events.js';
import { recordableAnswer, streamModel } from './model-call.js';
import { isContextOverflow, type CallMeta, type ToolSchema } from './provider.js';
import { runToolCalls } from './tool-calls.js';
import type { ToolPassContext } from './tool-pass.js';
import type { ActiveTurn, EngineParts } from './engine-parts.js';
import { abandon, endFailed, endInterrupted, failInternally } from './turn-endings.js';

/** What a turn does before the loop: record the user's message, or finish a resumed tool round. */
export type Opening = (turn: ActiveTurn) => AsyncGenerator<EngineEvent, 'tools_done' | void, undefined>;

/** A turn with a fresh stop signal of its own. */
export function newTurn(kind: TurnKind): ActiveTurn {
  const controller = new AbortController();
  // Each running tool, approval wait and stream race holds one listener on the turn
  // signal while it waits, so a wide batch of concurrent tools legitimately exceeds
  // Node's default warning threshold of 10. Leaks are still caught: every race releases
  // its listener (test/engine/stream-bridge.test.ts counts them).
  setMaxListeners(64, controller.signal);
  return {
    kind,
    controller,
    signal: controller.signal,
    stop: new StopScope(controller.signal),
    iterations: 0,
    ended: false,
  };
}

/** Runs a reserved turn to its one `turn_end`; `release` frees the engine once the turn is closed, however it ends. */
export async function* driveTurn(
  parts: EngineParts,
  turn: ActiveTurn,
  opening: Opening,
  release: () => void,
): AsyncGenerator<EngineEvent, void, undefined> {
  try {
    let status: TurnEndStatus;
    try {
      const opened = yield* opening(turn);
      const next = opened === 'tools_done' ? yield* afterToolRound(parts, turn) : 'continue';
      status = next === 'continue' ? yield* loop(parts, turn) : next;
    } catch (error) {
      status = yield* failInternally(parts, turn, error);
    }
    turn.ended = true;
    yield { type: 'turn_end', status, iterations: turn.iterations, pendingSteering: parts.steering.size };
  } finally {
    if (!turn.ended) await abandon(parts, turn);
    release();
  }
}

async function* loop(parts: EngineParts, turn: ActiveTurn): AsyncGenerator<EngineEvent, TurnEndStatus, undefined> {
  const { history, steering } = parts;
  for (;;) {
    if (turn.signal.aborted) return yield* endInterrupted(parts, turn);
    if (turn.iterations >= parts.maxIterations) {
      await history.appendNotice(
        'max_iterations',
        `Stopped after ${turn.iterations} model calls in this turn (the limit is ${parts.maxIterations}). Continue to let it go on.`,
      );
      return 'max_iterations_exceeded';
    }

    let setting: ModelCallSetting;
    try {
      const provider = parts.resolveProvider(parts.model);
      setting = { provider, capabilities: provider.capabilities(parts.model), model: parts.model, signal: turn.signal };
    } catch (error) {
      return yield* endFailed(parts, turn, error, '', '');
    }

    const compaction = parts.compacting.due(setting);
    if (compaction) yield* parts.compacting.checkpoint(compaction);
    if (turn.signal.aborted) return yield* endInterrupted(parts, turn);

    turn.iterations++;
    const outcome = yield* callModel(parts, setting, turn.stop);
    if (outcome.kind === 'interrupted') {
      await history.appendPartial(outcome.text, outcome.reasoning);
      return yield* endInterrupted(parts, turn);
    }
    if (outcome.kind === 'failed') {
      if (isContextOverflow(outcome.error) && !turn.signal.aborted) {
        if (yield* parts.compacting.afterOverflow(setting)) continue;
      }
      return yield* endFailed(parts, turn, outcome.error, outcome.text, outcome.reasoning);
    }

    // The answer, recorded: its tool calls are the round to run.
    const answer = outcome.turn;
    const recorded = recordableAnswer(answer, parts.model, history);
    if (answer.usage) parts.compacting.noteUsage(answer.usage);
    await history.append(recorded.message);
    yield recorded.event;
    const pending = recorded.pending;
    if (pending.length === 0) {
      // The answer is whole even if a stop arrived as it finished: it stands.
      if (!turn.signal.aborted && steering.size > 0) {
        yield* steering.inject(history, parts.prepareInput, turn.signal);
        continue;
      }
      return 'completed';
    }
    yield* runToolCalls(toolPassContext(parts, turn), pending[0]!.call.id, pending, answer.finishReason);
    yield { type: 'iteration_end', iteration: turn.iterations };
    if (turn.signal.aborted) return yield* endInterrupted(parts, turn);
    if (steering.size > 0) yield* steering.inject(history, parts.prepareInput, turn.signal);
  }
}

/** The checkpoint after a tool round (a resumed one): stop, or take steering and go on. */
async function* afterToolRound(
  parts: EngineParts,
  turn: ActiveTurn,
): AsyncGenerator<EngineEvent, TurnEndStatus | 'continue', undefined> {
  if (turn.signal.aborted) return yield* endInterrupted(parts, turn);
  yield* parts.steering.inject(parts.history, parts.prepareInput, turn.signal);
  return 'continue';
}

function callModel(parts: EngineParts, setting: ModelCallSetting, stop: StopScope) {
  const requester = parts.history.turnRequester();
  return streamModel({
    provider: setting.provider,
    capabilities: setting.capabilities,
    model: setting.model,
    messages: parts.history.messages,
    compactionState: parts.compacting.state,
    contextProvider: parts.contextProvider,
    sessionId: parts.sessionId,
    pdfAdapter: parts.pdfAdapter,
    attachmentView: parts.attachmentView,
    tools: toolSchemas(parts),
    settings: parts.modelSettings,
    stop,
    mask: parts.maskOutput,
    maskStream: parts.maskStream,
    meta: requester !== undefined ? { purpose: 'turn', requester } : TURN_META,
  });
}

function toolSchemas(parts: EngineParts): ToolSchema[] {
  const registered = parts.registry.schemas();
  return parts.interactiveSchemas.length > 0 ? [...registered, ...parts.interactiveSchemas] : registered;
}

/** What this turn's tool rounds share, made once a turn; who asked is read again each round (steering adds people). */
export function toolPassContext(parts: EngineParts, turn: ActiveTurn): ToolPassContext {
  const requesters = parts.history.turnRequesters();
  if (turn.pass) {
    turn.pass.requesters = requesters;
    return turn.pass;
  }
  turn.pass = {
    sessionId: parts.sessionId,
    stop: turn.stop,
    tools: parts.registry,
    policy: parts.policy,
    approver: parts.approver,
    grants: parts.grants,
    requesters,
    maxCallsPerResponse: parts.maxToolCallsPerResponse,
    interactive: parts.interactive,
    inbox: parts.inbox,
    ledger: parts.ledger,
    logger: parts.logger,
    toolStopGraceMs: parts.toolStopGraceMs,
    append: (message) => parts.history.append(message),
    grantsChanged: () => parts.onGrantsChanged?.(parts.grants.snapshot()),
    mask: parts.maskOutput,
    maxResultChars: parts.maxResultChars,
  };
  return turn.pass;
}

/** A turn's model call for no one in particular (no message named a person). */
const TURN_META: CallMeta = { purpose: 'turn' };
