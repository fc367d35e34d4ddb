// A click on a prompt's card (approve, deny, a question's choice): who may answer is checked,
// the answer is recorded once (the inbox's resolve is the claim, across instances in cluster
// mode), and the turn that asked learns it: a live engine waiting on the prompt is woken by
// the inbox; after a restart, with no engine waiting, the turn resumes.
import type { ResolveResult } from '../engine/index.js';
import type { PersistentInbox } from '../store/persistent-inbox.js';
import type { AccessPolicy } from './access-policy.js';
import type { ClusterRouting } from './cluster-routing.js';
import type { Coordinator } from './coordination.js';
import { isBusy, type LiveSessions } from './live-sessions.js';
import { resolutionOf, type PromptChoice } from './prompt-replies.js';
import type { Reporter } from './session-observer.js';
import type { SessionOps } from './session-ops.js';
import type { TurnDriver } from './turn-driver.js';

export type ResolveOutcome =
  ResolveResult | { ok: false; reason: 'refused'; message: string } | { ok: false; reason: 'invalid_choice' };

export interface PromptAnswersDeps {
  inbox: PersistentInbox;
  coordinator: Coordinator;
  access: AccessPolicy;
  sessions: LiveSessions;
  driver: TurnDriver;
  reporter: Reporter;
  /** Cluster mode only (made after this, from its `resolvedHere`): read at each click. */
  routing: () => ClusterRouting | undefined;
  ops?: SessionOps;
}

export class PromptAnswers {
  constructor(private readonly deps: PromptAnswersDeps) {}

  /** A click on a prompt card. Resumes the turn when no engine waits for the answer (after a restart). */
  async resolve(itemId: string, choice: PromptChoice, userId: string): Promise<ResolveOutcome> {
    const { inbox, access } = this.deps;
    const item = await inbox.get(itemId);
    if (!item) return { ok: false, reason: 'unknown_item' };
    const record = await this.deps.sessions.record(item.sessionId);
    if (!record) return { ok: false, reason: 'unknown_item' };
    const allowed = access.mayResolve(userId, record, item.kind);
    if (!allowed.allowed) return { ok: false, reason: 'refused', message: allowed.reason };
    const resolution = resolutionOf(item, choice);
    if (!resolution) return { ok: false, reason: 'invalid_choice' };
    if (resolution.kind === 'approval') {
      // A grant for everyone's turns is an admin's to give; any grant records its giver.
      if (resolution.outcome.endsWith('_all') && !access.isAdmin(userId)) {
        return {
          ok: false,
          reason: 'refused',
          message: 'Only an admin can allow this for everyone; choose "for me" instead.',
        };
      }
      resolution.by = userId;
    }
    const result = await inbox.resolve(itemId, resolution, userId);
    if (!result.ok) return result;
    // Recorded here, where the click won (once across instances: inbox.resolve is the claim).
    this.deps.ops?.decided(record, item, resolution, userId);
    // Cluster mode: recorded here (one click wins, across instances); the owner's turn is told.
    const routing = this.deps.routing();
    if (routing) await routing.resolved(item.sessionId, itemId, item.toolCallId);
    else
      await this.deps.coordinator.dispatch(item.sessionId, { kind: 'resolved', itemId, toolCallId: item.toolCallId });
    return result;
  }

  /** A prompt was answered: a live engine waiting on it is woken by the inbox; otherwise the turn resumes. */
  async resolvedHere(sessionId: string, itemId: string, toolCallId: string): Promise<void> {
    // Answered on another instance (cluster mode): this one's waiting engine learns it from
    // the store, and its card shows who decided (the next render would drop it otherwise).
    if (this.deps.routing()) {
      await this.deps.inbox.refresh(itemId);
      const item = await this.deps.inbox.get(itemId);
      const record = await this.deps.sessions.record(sessionId);
      if (item && record) await this.deps.reporter.decided(record, item);
    }
    await this.deps.coordinator.exclusive(sessionId, async () => {
      const resumable = await this.deps.sessions.get(sessionId);
      if (isBusy(resumable)) return;
      if (resumable.engine.unansweredToolCalls().some((call) => call.id === toolCallId))
        await this.deps.driver.startResume(resumable);
    });
  }
}
