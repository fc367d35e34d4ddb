// Drives a session's turns: starts one (a new message, a resume, a retry), pulls its engine
// events, persists what must survive a crash before the view shows it (a prompt is opened
// in the inbox before its card exists, a consumed input leaves the pending list), reports
// everything to the observer, and when the turn ends starts the next one with replies that
// arrived as it finished.
//
// Two rules hold every start together. The session is marked open in the store before the
// turn records anything (so start-up recovery finds it whatever the crash), and the turn's
// lease and the engine's reservation are taken in one synchronous step, so a stop that
// finds the lease held always finds a turn to stop.
import type { EngineEvent, EngineLogger, InboxItem, MessageSource } from '../engine/index.js';
import { approvalChoices, interactionChoices, isWritesFenced } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { PendingInput, SessionStore } from '../store/session-store.js';
import { OwnedElsewhereError, type Coordinator } from './coordination.js';
import type { LiveSession } from './live-session.js';
import type { InputDisposition, Reporter } from './session-observer.js';

export interface TurnDriverOptions {
  store: SessionStore;
  inbox: PersistentInbox;
  coordinator: Coordinator;
  reporter: Reporter;
  logger: EngineLogger;
  /** Approvals also offer "always allow … for everyone" (admins approve, so an admin will answer). */
  everyoneGrants?: boolean;
  /** A session's turns are over and no next one started: it is idle (fair use stops counting it as working). */
  onIdle?: (live: LiveSession) => void;
}

export class TurnDriver {
  constructor(private readonly options: TurnDriverOptions) {}

  /** A new turn from recorded inputs: the first is the user message, the rest steer it. */
  async startWithInputs(live: LiveSession, inputs: PendingInput[]): Promise<void> {
    const [first, ...rest] = inputs;
    if (!first) return;
    await this.begin(live, () => {
      live.startedWith = first.id;
      const events = live.engine.run(first.text, {
        ...(first.source ? { source: first.source } : {}),
        ...(first.attachments ? { attachments: first.attachments } : {}),
      });
      for (const input of rest) live.engine.queueSteering(input.text, input.source, input.id, input.attachments);
      return events;
    });
  }

  /**
   * Continue at the unanswered tool calls (after a restart, or a click that answered a
   * prompt no engine waited for). Inputs recorded but not yet taken steer the resumed turn.
   */
  async startResume(live: LiveSession): Promise<void> {
    const stored = await this.options.store.getPendingInputs(live.record.id);
    await this.begin(live, () => {
      for (const input of stored)
        if (!live.engine.hasQueuedSteering(input.id))
          live.engine.queueSteering(input.text, input.source, input.id, input.attachments);
      return live.engine.resume();
    });
  }

  async startRetry(live: LiveSession): Promise<void> {
    await this.begin(live, () => live.engine.retry());
  }

  /** Note what became of an inbound message (a reaction in the thread). */
  notifyInput(
    live: LiveSession,
    inputId: string,
    disposition: InputDisposition,
    source?: MessageSource,
  ): Promise<void> {
    return this.options.reporter.input(live.record, inputId, disposition, source);
  }

  /** Mark the session settled in the store if nothing is in flight any more. */
  async settleIfQuiet(live: LiveSession): Promise<void> {
    if (live.turn || live.engine.isRunning || live.engine.unansweredToolCalls().length > 0) return;
    if ((await this.options.store.getPendingInputs(live.record.id)).length > 0) return;
    await this.options.store.markSettled(live.record.id);
  }

  private async begin(live: LiveSession, open: () => AsyncIterable<EngineEvent>): Promise<void> {
    const sessionId = live.record.id;
    await this.options.store.markOpen(sessionId);
    // From here to the driver's start, nothing awaits: lease, reservation and `live.turn`
    // appear together.
    const lease = this.options.coordinator.acquireTurn(sessionId);
    if (!lease) throw new Error(`session ${sessionId} already has a running turn`);
    let events: AsyncIterable<EngineEvent>;
    try {
      events = open();
    } catch (error) {
      lease.release();
      throw error;
    }
    live.stoppedWith = undefined;
    live.stoppedBy = undefined;
    live.windingDown = false;
    live.turn = (async () => {
      try {
        for await (const event of events) await this.handleEvent(live, event);
      } catch (error) {
        if (!isWritesFenced(error)) this.options.logger.error({ err: error, sessionId }, 'turn failed');
      } finally {
        lease.release();
        live.lastUsed = Date.now();
      }
      try {
        await this.afterTurn(live);
      } catch (error) {
        // afterTurn clears it under the session's lock; it could not run (another instance
        // owns the session now, or the store refused): the turn is over all the same.
        live.turn = null;
        this.options.onIdle?.(live);
        // Nobody awaits this promise to the end: a rejection here would be unhandled.
        if (!isWritesFenced(error) && !(error instanceof OwnedElsewhereError))
          this.options.logger.error({ err: error, sessionId }, 'could not start what followed the turn');
      }
    })();
  }

  /**
   * Replies that arrived as the turn finished start the next turn. After a stop, those that
   * were queued when it landed are dropped (running them would undo the stop) and the thread
   * says so; one sent after the stop (the person saw "Stopped" and wrote again) starts the
   * next turn, however quickly it followed.
   */
  private async afterTurn(live: LiveSession): Promise<void> {
    const { store, coordinator } = this.options;
    await coordinator.exclusive(live.record.id, async () => {
      live.turn = null;
      const leftover = live.engine.takePendingSteering();
      if (leftover.length > 0) {
        const stored = await store.getPendingInputs(live.record.id);
        const inputs = leftover.map(
          (steer): PendingInput =>
            stored.find((input) => input.id === steer.id) ?? {
              id: steer.id,
              text: steer.text,
              receivedAt: Date.now(),
              ...(steer.attachments ? { attachments: steer.attachments } : {}),
            },
        );
        const cut = live.stoppedWith ?? new Set<string>();
        const dropped = inputs.filter((input) => cut.has(input.id));
        const next = inputs.filter((input) => !cut.has(input.id));
        if (dropped.length > 0) {
          await store.removePendingInputs(
            live.record.id,
            dropped.map((input) => input.id),
          );
          for (const input of dropped) await this.notifyInput(live, input.id, 'dropped', input.source);
        }
        if (next.length > 0) return this.startWithInputs(live, next);
      }
      this.options.onIdle?.(live);
      try {
        await this.settleIfQuiet(live);
      } catch (error) {
        if (!isWritesFenced(error))
          this.options.logger.warn({ err: error, sessionId: live.record.id }, 'could not mark the session settled');
      }
    });
  }

  private async handleEvent(live: LiveSession, event: EngineEvent): Promise<void> {
    // Another instance owns the session now: nothing of this turn may be recorded or shown.
    if (live.fenced) return;
    // Marked before the view shows it: the note it posts can carry a button (Retry, Continue),
    // and a click on it as soon as it shows must find the turn winding down, not working.
    if (endsTheWork(event)) live.windingDown = true;
    const { inbox } = this.options;
    let prompt: InboxItem | undefined;
    switch (event.type) {
      case 'turn_start':
        if (event.kind === 'run' && live.startedWith) await this.removePending(live, live.startedWith);
        live.startedWith = undefined;
        break;
      case 'steering_injected':
        await this.removePending(live, event.id);
        await this.notifyInput(live, event.id, 'injected', event.source);
        break;
      case 'permission_required':
        // Opened (persisted) before the card is shown, so a click always finds its item.
        prompt = await inbox.open({
          sessionId: live.record.id,
          toolCallId: event.toolCallId,
          kind: 'approval',
          choices: approvalChoices(event.command, { everyone: this.options.everyoneGrants }),
          reason: event.reason,
          ...(event.command !== undefined ? { command: event.command } : {}),
        });
        break;
      case 'interaction_required': {
        const options = event.kind === 'question' ? ((event.arguments as { options?: string[] }).options ?? []) : [];
        prompt = await inbox.open({
          sessionId: live.record.id,
          toolCallId: event.toolCallId,
          kind: event.kind,
          choices: interactionChoices(event.kind, options),
        });
        break;
      }
      case 'turn_end':
        live.lastUsed = Date.now();
        // The turn ended on its own: restarts that resumed it no longer count as a loop.
        if (live.record.restartResumes) live.record = { ...live.record, restartResumes: 0 };
        await this.options.store.saveSession(live.record);
        break;
      default:
        break;
    }
    await this.options.reporter.event(live.record, event, prompt);
  }

  private async removePending(live: LiveSession, inputId: string): Promise<void> {
    await this.options.store.removePendingInputs(live.record.id, [inputId]);
  }
}

/** An event after which the turn does no more work: what is left is recording and showing its end. */
function endsTheWork(event: EngineEvent): boolean {
  return event.type === 'error' || event.type === 'interrupted' || event.type === 'turn_end';
}
