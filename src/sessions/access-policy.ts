// Who may do what, one policy for every transport: a message, a button, a reaction and a
// command are judged by the same rules, so no path is weaker than another.
//
//   member          ALLOWED_USERS: platform user ids, or `*` (the default), which means every
//                   member of the installing workspace and never someone from another team
//                   or organisation (a Slack Connect guest) unless listed by id; admins too
//   start or steer  members
//   approve         the admins if any are configured, else the user who started the thread
//   decline by a    whoever may approve; anyone else's reply waits as steering until the
//   reply           prompt is answered
//   answer          a question: the approvers and members who took part in the thread
//   stop            the user who started the thread and members who took part, while they
//                   are still members there; and the admins
//   manage          /model, /forget, /revoke, /retry, Retry and Continue: the starter and admins
//   look            /status, /grants: members
//
// A profile (src/profiles/) may add approvers for its threads (its `admins`, who must be
// members) and narrow who may start or steer there (`allowedUsers`); it never makes a
// non-member a member. ADMINS stay admins everywhere.
//
// A refusal carries a sentence for a private (ephemeral) reply; the prompt stays pending.
// Malformed configuration fails closed, at start-up, with a clear error.
import type { InboxKind } from '../engine/index.js';
import type { SessionRecord } from '../store/session-store.js';
import type { ProfileAccess } from './session-profiles.js';

export type AccessDecision = { allowed: true } | { allowed: false; reason: string };

export interface AccessConfig {
  allowedUsers: '*' | ReadonlySet<string>;
  admins: ReadonlySet<string>;
}

const USER_ID = /^[A-Za-z0-9._:@-]+$/;

/** Parse ALLOWED_USERS and ADMINS (comma- or space-separated ids). Throws on anything odd. */
export function parseAccessConfig(allowedUsers: string | undefined, admins: string | undefined): AccessConfig {
  const list = (name: string, raw: string): string[] => {
    const ids = raw.split(/[\s,]+/).filter(Boolean);
    const bad = ids.filter((id) => !USER_ID.test(id));
    if (bad.length > 0)
      throw new Error(`${name}: not user ids: ${bad.join(', ')} (use platform user ids, comma-separated)`);
    return ids;
  };
  const allowedRaw = (allowedUsers ?? '*').trim();
  let allowed: '*' | Set<string>;
  if (allowedRaw === '*') allowed = '*';
  else {
    const ids = list('ALLOWED_USERS', allowedRaw);
    if (ids.includes('*')) throw new Error('ALLOWED_USERS: `*` cannot be mixed with user ids');
    if (ids.length === 0) throw new Error('ALLOWED_USERS is empty: set `*` to allow everyone, or list user ids');
    allowed = new Set(ids);
  }
  return { allowedUsers: allowed, admins: new Set(list('ADMINS', admins ?? '')) };
}

type SessionPeople = Pick<SessionRecord, 'startedBy' | 'steerers'> & { profile?: string };

/** A profile's access, by the name a thread keeps (undefined: no profile, or the environment's own). */
export type ProfileAccessOf = (profile: string | undefined) => ProfileAccess | undefined;

/** What the platform says about who acts, beyond the user id. */
export interface ActorContext {
  /** The user belongs to another team or organisation than the installing workspace. */
  external?: boolean;
}

export class AccessPolicy {
  private profileAccess: ProfileAccessOf = () => undefined;

  constructor(private readonly config: AccessConfig) {}

  /** Profiles' approvers and narrowed members (src/profiles/), read at each decision: a reload applies at once. */
  useProfiles(access: ProfileAccessOf): void {
    this.profileAccess = access;
  }

  get hasAdmins(): boolean {
    return this.config.admins.size > 0;
  }

  isAdmin(userId: string): boolean {
    return this.config.admins.has(userId);
  }

  /** `external`: the platform says the user belongs to another team than the installing one. */
  isMember(userId: string, actor: ActorContext = {}): AccessDecision {
    const { allowedUsers } = this.config;
    if (this.isAdmin(userId) || (allowedUsers !== '*' && allowedUsers.has(userId))) return { allowed: true };
    if (allowedUsers === '*' && !actor.external) return { allowed: true };
    if (actor.external)
      return {
        allowed: false,
        reason:
          'You are not a member of the workspace this bot belongs to; ask an admin to add your user id to ALLOWED_USERS.',
      };
    return { allowed: false, reason: 'You are not on the list of people who may use this bot here.' };
  }

  /**
   * A member who may start or steer a thread under `profile`: its `allowedUsers` narrow the
   * members (ADMINS and the profile's own approvers pass), never widen them.
   */
  mayStartOrSteer(userId: string, actor: ActorContext = {}, profile?: string): AccessDecision {
    const member = this.isMember(userId, actor);
    if (!member.allowed) return member;
    const narrowed = this.profileAccess(profile)?.allowedUsers;
    if (!narrowed || narrowed.has(userId) || this.isAdmin(userId) || this.profileApprover(userId, profile, actor))
      return { allowed: true };
    return {
      allowed: false,
      reason: 'This channel is set up for a list of people, and you are not on it; ask an admin.',
    };
  }

  /** One of the approvers a profile adds for its threads, and a member (a profile cannot make anyone a member). */
  private profileApprover(userId: string, profile: string | undefined, actor: ActorContext = {}): boolean {
    const admins = this.profileAccess(profile)?.admins;
    return admins !== undefined && admins.has(userId) && this.isMember(userId, actor).allowed;
  }

  /** ADMINS, or an approver of this thread's profile. */
  private approver(userId: string, session: SessionPeople): boolean {
    return this.isAdmin(userId) || this.profileApprover(userId, session.profile);
  }

  /** Whether approval here belongs to named approvers (ADMINS or the profile's), not to the starter. */
  private hasApprovers(session: SessionPeople): boolean {
    return this.hasAdmins || (this.profileAccess(session.profile)?.admins.size ?? 0) > 0;
  }

  /**
   * Who approves in this thread, by id, as `mayApprove` decides: ADMINS and the profile's
   * approvers (those who are members), else its starter. Whom the bot tells when something in
   * the thread needs one of them (a schedule paused because its creator lost access).
   */
  approversOf(session: SessionPeople): string[] {
    if (!this.hasApprovers(session)) return session.startedBy !== undefined ? [session.startedBy] : [];
    const profileAdmins = [...(this.profileAccess(session.profile)?.admins ?? [])].filter(
      (id) => this.isMember(id).allowed,
    );
    return [...new Set([...this.config.admins, ...profileAdmins])];
  }

  /** /status and /grants: what a thread does is for members to see. */
  mayLook(userId: string, actor: ActorContext = {}): AccessDecision {
    return this.isMember(userId, actor);
  }

  /** /model, /forget, /revoke, /retry: they change or delete the starter's thread. */
  mayManage(userId: string, session: SessionPeople): AccessDecision {
    if (this.approver(userId, session) || (session.startedBy !== undefined && userId === session.startedBy))
      return { allowed: true };
    return { allowed: false, reason: 'Only the person who started this thread or an admin can do that.' };
  }

  mayApprove(userId: string, session: SessionPeople): AccessDecision {
    if (this.hasApprovers(session)) {
      return this.approver(userId, session)
        ? { allowed: true }
        : { allowed: false, reason: 'Only the bot admins can approve this.' };
    }
    if (session.startedBy !== undefined && userId === session.startedBy) return { allowed: true };
    return { allowed: false, reason: 'Only the person who started this thread can approve this.' };
  }

  /** Plans and directory grants are consents, like approvals; a question may be answered by steerers too. */
  mayResolve(userId: string, session: SessionPeople, kind: InboxKind): AccessDecision {
    const approve = this.mayApprove(userId, session);
    if (approve.allowed || kind !== 'question') return approve;
    if (session.steerers.includes(userId)) return { allowed: true };
    return { allowed: false, reason: 'Only the people working in this thread can answer this.' };
  }

  /**
   * The starter and the people who took part stop only while they may still start or steer
   * there (ALLOWED_USERS and the profile's `allowedUsers`, read now): someone removed from the
   * list keeps no say in the threads they once worked in, their own included (the admins and
   * the members still working there can stop it). Approvers pass as they always do.
   */
  mayStop(userId: string, session: SessionPeople, actor: ActorContext = {}): AccessDecision {
    if (this.approver(userId, session)) return { allowed: true };
    if (userId !== session.startedBy && !session.steerers.includes(userId)) {
      return {
        allowed: false,
        reason: 'Only the person who started this thread, people who took part in it, or an admin can stop it.',
      };
    }
    return this.mayStartOrSteer(userId, actor, session.profile);
  }
}

/** Start-up warnings about a risky but legal setup. */
export function accessWarnings(policy: AccessPolicy, riskyToolsEnabled: boolean): string[] {
  if (!policy.hasAdmins && riskyToolsEnabled) {
    return [
      'No ADMINS are set while shell or write tools are enabled: whoever starts a thread can approve its commands.',
    ];
  }
  return [];
}
