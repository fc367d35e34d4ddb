// What the session layer asks of profiles (src/profiles/): which one a new thread starts
// under, and the parts of one that the session layer itself applies: who may start and
// approve, the model a thread starts with, what /model offers. The rest of a profile
// (instructions, tools, permission mode, workspace) shapes the engine (core.ts engineSetup).
import type { SessionKey } from '../store/session-store.js';

/** The models /model may choose (MODELS), and the canonical name of a choice, or why not. */
export interface ModelMenu {
  available: readonly string[];
  choose(name: string): { ok: true; model: string } | { ok: false; reason: string };
}

export interface ProfileAccess {
  /** Approve and manage this profile's threads, besides ADMINS (each must be a member under ALLOWED_USERS). */
  admins: ReadonlySet<string>;
  /** Who may start or steer here: narrows ALLOWED_USERS; undefined: no narrowing. */
  allowedUsers?: ReadonlySet<string>;
}

export interface SessionProfile extends ProfileAccess {
  /** Shown by /status: `default` for the environment's own. */
  name: string;
  /** The model a new thread starts with (undefined: MODEL). */
  model?: string;
  /** What /model may choose (undefined: MODELS). */
  models?: ModelMenu;
}

export interface SessionProfiles {
  /** The profile a new thread at `key` starts under. */
  forPlace(key: SessionKey): SessionProfile;
  /** A thread's kept profile by name; the environment's own when the file no longer has it. */
  named(name: string | undefined): SessionProfile;
  /** Every profile's name, `default` first (an admin's /profile). */
  names(): string[];
  /** Bumped when the file changed: idle sessions are rebuilt with what it says now. */
  readonly version: number;
}
