// The session layer in cluster mode (a RoutingCoordinator runs): every inbound action on a
// session becomes a command on its durable list, and whichever instance owns the session
// applies it, through the same code as one process (the `...Here` paths, owner-commands.ts).
//
// Ingress: the command is pushed with the event's de-duplication claim in one step (before
// the connector acknowledges the platform); then the instance tries to own the session. If it
// can, it drains the list itself (its own command included, whose result it returns); if
// another instance owns it, that one is poked (and polls anyway). Commands are applied, then
// consumed: a crash in between applies one again on the next owner, so each is idempotent
// (a message's input id is the command's id).
//
// Takeover: a session whose lease ran out is taken by the sweep of any instance, which
// applies waiting stops first, then runs the restart recovery for it, then the rest.
import { randomUUID } from 'node:crypto';
import type { EngineLogger, IncomingFile } from '../engine/index.js';
import { sessionIdOf, type SessionKey } from '../store/session-store.js';
import { KeyedMutex } from '../store/keyed-mutex.js';
import { OwnedElsewhereError, type RoutingCoordinator } from './coordination.js';
import { decodeCommand, encodeCommand, type RoutedCommand } from './routed-commands.js';

/** What the routing needs from the session layer: the one-process paths, and its memory (owner-commands.ts). */
export interface LocalSessions {
  deliverHere(
    key: SessionKey,
    message: {
      text: string;
      userId: string;
      source?: RoutedDeliverSource;
      external?: boolean;
      attachments?: IncomingFile[];
    },
    inputId: string,
  ): Promise<unknown>;
  interruptHere(sessionId: string, userId: string): Promise<unknown>;
  resolvedHere(sessionId: string, itemId: string, toolCallId: string): Promise<void>;
  /** Restart recovery for one session. */
  recoverHere(sessionId: string): Promise<void>;
  /** Whether the session had something in flight (it is in the store's open index). */
  inFlight(sessionId: string): Promise<boolean>;
  /** Say in the thread that this instance picked the session up after another stopped. */
  announceTakeover(sessionId: string): Promise<void>;
  busy(sessionId: string): boolean;
  /** Drop what memory holds of the session (stale, or no longer ours); a turn still running there is silenced. */
  forget(sessionId: string, lost: boolean): void;
}

type RoutedDeliverSource = Extract<RoutedCommand, { kind: 'deliver' }>['message']['source'];

export class ClusterRouting {
  private readonly drains = new KeyedMutex();
  /** Results of commands this instance sent and is waiting for (by command id). */
  private readonly results = new Map<string, unknown>();
  private readonly wanted = new Set<string>();

  constructor(
    private readonly coordinator: RoutingCoordinator,
    private readonly local: LocalSessions,
    private readonly logger: EngineLogger,
  ) {
    coordinator.watch({
      commandsWaiting: (sessionId) =>
        void this.drain(sessionId).catch((error: unknown) => this.failed(error, sessionId, 'apply commands')),
      overdue: (sessionId) =>
        void this.takeover(sessionId).catch((error: unknown) => this.failed(error, sessionId, 'take a session over')),
      lost: (sessionId) => local.forget(sessionId, true),
      acquired: (sessionId) => local.forget(sessionId, false),
      busy: (sessionId) => local.busy(sessionId),
    });
  }

  /** A message for the session: queued with its claim; the result when this instance applied it. */
  async deliver(
    key: SessionKey,
    message: {
      text: string;
      userId: string;
      source?: RoutedDeliverSource;
      external?: boolean;
      eventId?: string;
      attachments?: IncomingFile[];
    },
  ): Promise<unknown> {
    const { eventId, ...rest } = message;
    const command: RoutedCommand = { kind: 'deliver', id: randomUUID(), key, message: rest };
    return this.send(sessionIdOf(key), command, eventId);
  }

  async stop(sessionId: string, userId: string): Promise<unknown> {
    return this.send(sessionId, { kind: 'stop', id: randomUUID(), userId });
  }

  /** A prompt answered here (recorded in the store): the owner's waiting turn goes on. */
  async resolved(sessionId: string, itemId: string, toolCallId: string): Promise<void> {
    await this.send(sessionId, { kind: 'resolved', id: randomUUID(), itemId, toolCallId });
  }

  /**
   * Push the command (with the event's claim), then own the session and drain, or wake its
   * owner. Resolves with the command's result when this instance applied it, `undefined` when
   * another instance will, and `'duplicate'` for an event already claimed.
   */
  private async send(sessionId: string, command: RoutedCommand, eventId?: string): Promise<unknown> {
    if (!(await this.coordinator.enqueue(sessionId, encodeCommand(command), eventId))) return DUPLICATE;
    this.wanted.add(command.id);
    try {
      if (!(await this.coordinator.own(sessionId))) {
        await this.coordinator.poke(sessionId);
        return undefined;
      }
      await this.drain(sessionId);
      return this.results.get(command.id);
    } finally {
      this.wanted.delete(command.id);
      this.results.delete(command.id);
    }
  }

  /** Apply every waiting command in order, while this instance owns the session; then release it if idle. */
  async drain(sessionId: string): Promise<void> {
    await this.drains.run(sessionId, async () => {
      for (;;) {
        if (!this.coordinator.owns(sessionId)) return;
        const waiting = await this.coordinator.commands(sessionId);
        if (waiting.length === 0) break;
        for (const raw of waiting) if (!(await this.applyOne(sessionId, raw))) return;
      }
    });
    this.coordinator.settle(sessionId);
  }

  /**
   * Sweep: the session's owner stopped renewing (or handed it over on a graceful stop). Stops
   * first; then, after a death, a note in the thread (before anything the resumed turn
   * posts); then the restart recovery; then the other commands.
   */
  async takeover(sessionId: string): Promise<void> {
    if (!(await this.coordinator.own(sessionId))) return;
    const handedOver = await this.coordinator.handedOver(sessionId);
    let inFlight = false;
    await this.drains.run(sessionId, async () => {
      for (const raw of await this.coordinator.commands(sessionId)) {
        if (decodeCommand(raw)?.kind === 'stop' && !(await this.applyOne(sessionId, raw))) return;
      }
      inFlight = await this.local.inFlight(sessionId);
      // A deploy's hand-over was announced by the instance that stopped ("restarting").
      if (inFlight && !handedOver) await this.local.announceTakeover(sessionId);
      await this.local.recoverHere(sessionId);
    });
    this.logger.info({ sessionId, inFlight, handedOver }, 'cluster: took a session over');
    await this.drain(sessionId);
  }

  /** Apply then consume one command. False: stop draining (the session is not ours any more). */
  private async applyOne(sessionId: string, raw: string): Promise<boolean> {
    const command = decodeCommand(raw);
    if (!command) {
      this.logger.warn({ sessionId }, 'cluster: dropped a command that is not one (wrong shape)');
      return this.coordinator.consume(sessionId, raw);
    }
    let result: unknown;
    try {
      result = await this.apply(sessionId, command);
    } catch (error) {
      if (error instanceof OwnedElsewhereError) return false;
      // A command that fails here would fail again: report it and go on with the next one.
      this.failed(error, sessionId, `apply a ${command.kind} command`);
    }
    if (this.wanted.has(command.id)) this.results.set(command.id, result);
    return this.coordinator.consume(sessionId, raw);
  }

  private apply(sessionId: string, command: RoutedCommand): Promise<unknown> {
    switch (command.kind) {
      case 'deliver':
        return this.local.deliverHere(command.key, command.message, command.id);
      case 'stop':
        return this.local.interruptHere(sessionId, command.userId);
      case 'resolved':
        return this.local.resolvedHere(sessionId, command.itemId, command.toolCallId);
    }
  }

  private failed(error: unknown, sessionId: string, what: string): void {
    this.logger.warn({ err: error, sessionId }, `cluster: could not ${what}`);
  }
}

/** `send`'s answer for an event another delivery already claimed. */
export const DUPLICATE = Symbol('duplicate');
