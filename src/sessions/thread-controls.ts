// The thread commands' side of the session layer: retry, switch model, list and revoke
// grants, forget, and what /status shows. Each is checked against the access policy here,
// the same for every platform, before anything is touched: changing or deleting a thread
// belongs to its starter and the admins, looking at it to its members.
import type { CommandGrant, EngineLogger, GrantsSnapshot, ToolGrant } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { SessionKey, SessionRecord, SessionStore } from '../store/session-store.js';
import type { AccessPolicy, ActorContext } from './access-policy.js';
import { OwnedElsewhereError, type Coordinator } from './coordination.js';
import type { LiveSession } from './live-session.js';
import { isBusy, type LiveSessions } from './live-sessions.js';
import type { TurnDriver } from './turn-driver.js';
import type { BudgetGate, SessionOps } from './session-ops.js';
import { placeOf } from '../ops/ops-events.js';
import type { ModelMenu, SessionProfiles } from './session-profiles.js';
import { afterWindDown } from './turn-wind-down.js';

/**
 * Why a member's Continue on a turn a spend limit paused is refused.
 * @internal
 */
export const CONTINUE_NEEDS_ADMIN = 'Only an admin can let a turn go on past a spending limit.';

export type { ModelMenu } from './session-profiles.js';

export type ControlResult =
  | { status: 'done'; sessionId: string }
  | { status: 'idle' | 'busy' | 'nothing_to_do' | 'unknown_session' }
  | { status: 'refused'; reason: string };

export type LookResult<T> =
  { status: 'done'; value: T } | { status: 'unknown_session' } | { status: 'refused'; reason: string };

export interface ThreadStatus {
  /** The profile the thread runs under (`default`: the environment's own). */
  profile: string;
  /** The thread kept a profile the file no longer has: it runs under the environment's settings. */
  profileGone?: boolean;
  model: string;
  running: boolean;
  pendingPrompts: number;
}

export interface ThreadControlsOptions {
  store: SessionStore;
  inbox: PersistentInbox;
  access: AccessPolicy;
  coordinator: Coordinator;
  sessions: LiveSessions;
  driver: TurnDriver;
  /** Default: any name (tests); the core passes the MODELS list. */
  models?: ModelMenu;
  /** Remove the files a thread keeps besides the store (its own workspace folder), once it is forgotten. */
  removeThreadFiles?: (key: SessionKey) => Promise<void>;
  logger?: EngineLogger;
  ops?: SessionOps;
  budget?: BudgetGate;
  profiles?: SessionProfiles;
  /** Fires when the bot shuts down: a control waiting for a turn to wind down stops waiting. */
  closing?: AbortSignal;
}

export class ThreadControls {
  constructor(private readonly options: ThreadControlsOptions) {}

  /**
   * The Retry button after a provider error, or Continue after the iteration limit or a spend
   * limit's pause. Past a spend limit only an admin may continue; the turn may then finish.
   */
  async retry(sessionId: string, userId: string, actor: { operator?: boolean } = {}): Promise<ControlResult> {
    return this.manage(sessionId, userId, async (live) => {
      if (!live.engine.canRetry()) return { status: 'nothing_to_do' };
      if (live.engine.pausedBySpendLimit()) {
        // `operator`: the person runs the bot itself (the playground's one local user).
        if (!actor.operator && !this.options.access.isAdmin(userId))
          return { status: 'refused', reason: CONTINUE_NEEDS_ADMIN };
        await this.options.budget?.allowTurn(placeOf(live.record), userId);
        this.options.ops?.budgetContinued(live.record, userId);
      }
      await this.options.driver.startRetry(live);
      return { status: 'done', sessionId };
    });
  }

  async switchModel(
    sessionId: string,
    model: string,
    userId: string,
  ): Promise<ControlResult & { notice?: string | null }> {
    const record = await this.recordOf(sessionId);
    const choice = (record ? this.menuOf(record) : this.options.models)?.choose(model) ?? { ok: true as const, model };
    if (!choice.ok) return { status: 'refused', reason: choice.reason };
    return this.manage(sessionId, userId, async (live) => {
      const from = live.engine.model;
      const notice = await live.engine.switchModel(choice.model);
      if (live.engine.model !== from) this.options.ops?.modelSwitched(live.record, userId, from, live.engine.model);
      live.record = { ...live.record, model: live.engine.model };
      await this.options.store.saveSession(live.record);
      return { status: 'done', sessionId, notice };
    });
  }

  /** What /model offers; empty when any name is accepted. */
  get availableModels(): readonly string[] {
    return this.options.models?.available ?? [];
  }

  /** What /model offers in this thread: its profile's list, else MODELS. */
  async modelsOffered(sessionId: string): Promise<readonly string[]> {
    const record = await this.recordOf(sessionId);
    return (record ? this.menuOf(record) : this.options.models)?.available ?? [];
  }

  /** The profiles an admin may switch a thread to (`default` first); empty without a PROFILES file. */
  profileNames(): string[] {
    return this.options.profiles?.names() ?? [];
  }

  /**
   * An admin moves a thread to another profile (its starting model with it, when the profile
   * names one); the next turn runs under it. Only ADMINS (or the playground's operator): a
   * profile decides who approves, so a thread's starter must not pick a laxer one.
   */
  async switchProfile(
    sessionId: string,
    name: string,
    userId: string,
    actor: { operator?: boolean } = {},
  ): Promise<ControlResult & { profile?: string }> {
    const profiles = this.options.profiles;
    if (!profiles) return { status: 'refused', reason: 'No profiles are set up (PROFILES).' };
    if (!actor.operator && !this.options.access.isAdmin(userId))
      return { status: 'refused', reason: 'Only the bot admins (ADMINS) can move a thread to another profile.' };
    if (!profiles.names().includes(name))
      return { status: 'refused', reason: `There is no profile "${name}". Profiles: ${profiles.names().join(', ')}.` };
    return this.manage(sessionId, userId, async (live) => {
      const profile = profiles.named(name);
      const model = profile.model ?? live.record.model;
      if (model !== live.engine.model) await live.engine.switchModel(model);
      live.record = { ...live.record, profile: profile.name, model: live.engine.model };
      await this.options.store.saveSession(live.record);
      // Rebuilt on next use, with the new profile's instructions, tools and folder.
      await this.options.sessions.evict(sessionId);
      return { status: 'done', sessionId, profile: profile.name };
    });
  }

  /**
   * Whether this person may set or end this thread's schedules (src/schedules/): its starter,
   * ADMINS and its profile's approvers; anyone who may start a thread, for one not started yet
   * (they start it).
   */
  async mayManageThread(
    sessionId: string,
    key: SessionKey,
    userId: string,
    actor: ActorContext = {},
  ): Promise<{ allowed: true } | { allowed: false; reason: string }> {
    const record = await this.recordOf(sessionId);
    if (record) return this.options.access.mayManage(userId, record);
    return this.options.access.mayStartOrSteer(userId, actor, this.options.profiles?.forPlace(key).name);
  }

  private menuOf(record: SessionRecord): ModelMenu | undefined {
    return this.options.profiles?.named(record.profile).models ?? this.options.models;
  }

  async listGrants(
    sessionId: string,
    userId: string,
    actor: ActorContext = {},
  ): Promise<LookResult<{ thread: GrantsSnapshot; channel: GrantsSnapshot }>> {
    return this.look(sessionId, userId, actor, async (record) => ({
      thread: record.grants,
      channel: await this.options.store.getChannelGrants(record.key),
    }));
  }

  /**
   * Revoke "always" grants of a tool (or of one command of it), in the thread and its
   * channel. The starter and admins may revoke any; anyone else only the grants they gave.
   * Takes effect from the next turn.
   */
  async revokeGrant(
    sessionId: string,
    target: { tool: string; command?: string },
    userId: string,
  ): Promise<ControlResult & { revoked?: number }> {
    const record = await this.recordOf(sessionId);
    if (!record) return { status: 'unknown_session' };
    const anyOfThem = this.options.access.mayManage(userId, record).allowed;
    const matches = (grant: ToolGrant | CommandGrant): boolean =>
      grant.tool === target.tool &&
      (target.command === undefined ? !('command' in grant) : 'command' in grant && grant.command === target.command);
    const mayRevoke = (grant: ToolGrant | CommandGrant): boolean => anyOfThem || grant.by === userId;
    await this.windDown(sessionId);
    return this.exclusiveOrBusy(sessionId, async () => {
      const { store, sessions } = this.options;
      const live = await sessions.get(sessionId);
      if (isBusy(live)) return { status: 'busy' };
      const channel = await store.getChannelGrants(live.record.key);
      const all = [...allGrants(live.record.grants), ...allGrants(channel)].filter(matches);
      if (all.length === 0) return { status: 'nothing_to_do' };
      const revocable = all.filter(mayRevoke);
      if (revocable.length === 0)
        return {
          status: 'refused',
          reason: 'Only the person who gave that grant, the person who started this thread or an admin can revoke it.',
        };
      const keep = (grants: GrantsSnapshot): GrantsSnapshot => ({
        tools: grants.tools.filter((grant) => !(matches(grant) && mayRevoke(grant))),
        commands: grants.commands.filter((grant) => !(matches(grant) && mayRevoke(grant))),
      });
      live.record = { ...live.record, grants: keep(live.record.grants) };
      await store.saveSession(live.record);
      await store.setChannelGrants(live.record.key, keep(channel));
      await sessions.evict(sessionId); // rebuilt with the remaining grants on next use
      this.options.ops?.grantsRevoked(
        live.record,
        userId,
        target.command === undefined ? target.tool : `${target.tool}: ${target.command}`,
        revocable.length,
      );
      return { status: 'done', sessionId, revoked: revocable.length };
    });
  }

  /** Delete everything stored for this thread. */
  async forget(sessionId: string, userId: string): Promise<ControlResult> {
    return this.manage(sessionId, userId, async (live) => {
      // Evicted first: the thread's shell stops before its folder is removed.
      await this.options.sessions.evict(sessionId);
      await this.options.store.deleteSession(sessionId);
      try {
        await this.options.removeThreadFiles?.(live.record.key);
      } catch (error) {
        this.options.logger?.warn({ err: error, sessionId }, "could not remove the forgotten thread's folder");
      }
      this.options.ops?.forgotten(live.record, userId);
      return { status: 'done', sessionId };
    });
  }

  /** What /status shows: the model, whether a turn runs, how many prompts wait. */
  async status(sessionId: string, userId: string, actor: ActorContext = {}): Promise<LookResult<ThreadStatus>> {
    return this.look(sessionId, userId, actor, async (record) => {
      const live = this.options.sessions.peek(sessionId);
      const pending = await this.options.inbox.pending(sessionId);
      const profile = this.options.profiles?.named(record.profile).name ?? 'default';
      const gone = record.profile !== undefined && record.profile !== profile;
      return {
        profile: record.profile ?? profile,
        ...(gone ? { profileGone: true } : {}),
        model: live?.engine.model ?? record.model,
        running: live ? isBusy(live) : false,
        pendingPrompts: pending.length,
      };
    });
  }

  /** The session's exclusive section; with several instances, one that another instance works on is busy. */
  private async exclusiveOrBusy<R>(sessionId: string, work: () => Promise<R>): Promise<R | { status: 'busy' }> {
    try {
      return await this.options.coordinator.exclusive(sessionId, work);
    } catch (error) {
      if (error instanceof OwnedElsewhereError) return { status: 'busy' };
      throw error;
    }
  }

  /**
   * A control (the Retry or Continue on the note a turn just posted, a command typed as it
   * ended) that comes while the turn winds down waits for its end, outside the session's lock
   * (which the turn's end takes), and then acts (turn-wind-down.ts).
   */
  private windDown(sessionId: string): Promise<void> {
    return afterWindDown(
      this.options.sessions.peek(sessionId),
      this.options.closing ? { signal: this.options.closing } : {},
    );
  }

  private async recordOf(sessionId: string): Promise<SessionRecord | undefined> {
    return this.options.sessions.peek(sessionId)?.record ?? (await this.options.store.getSession(sessionId));
  }

  private async look<T>(
    sessionId: string,
    userId: string,
    actor: ActorContext,
    read: (record: SessionRecord) => Promise<T>,
  ): Promise<LookResult<T>> {
    const access = this.options.access.mayLook(userId, actor);
    if (!access.allowed) return { status: 'refused', reason: access.reason };
    const record = await this.recordOf(sessionId);
    if (!record) return { status: 'unknown_session' };
    return { status: 'done', value: await read(record) };
  }

  private async manage<R extends ControlResult>(
    sessionId: string,
    userId: string,
    work: (live: LiveSession) => Promise<R>,
  ): Promise<R | ControlResult> {
    const record = await this.recordOf(sessionId);
    if (!record) return { status: 'unknown_session' };
    const access = this.options.access.mayManage(userId, record);
    if (!access.allowed) return { status: 'refused', reason: access.reason };
    await this.windDown(sessionId);
    return this.exclusiveOrBusy(sessionId, async () => {
      const live = await this.options.sessions.get(sessionId);
      if (isBusy(live)) return { status: 'busy' };
      return work(live);
    });
  }
}

function allGrants(grants: GrantsSnapshot): (ToolGrant | CommandGrant)[] {
  return [...grants.tools, ...grants.commands];
}
