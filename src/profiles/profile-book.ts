// The profiles in force, and which one a place gets. One rule: the most specific match wins
// (a channel over DMs or the playground, those over a workspace or server), the file's order
// breaks ties, and no match means the environment's own profile (`default`, undefined here).
// A reload replaces the list whole and bumps `version`: idle sessions are rebuilt with it,
// and each thread keeps the profile it started with, by name.
import type { SessionKey } from '../store/session-store.js';
import type { Profile, ProfileMatch } from './profile-schema.js';

/** The name /status shows for a thread no profile matched: the environment's settings. */
export const DEFAULT_PROFILE = 'default';

/** Where a thread is, as profiles read it (the session key says all of it). */
export interface ProfilePlace {
  platform: string;
  workspace: string;
  channel: string;
}

/**
 * Slack DMs are channels `D…`; Discord's connector files DMs under the workspace `dm`.
 * @internal
 */
export function isDirectMessage(place: ProfilePlace): boolean {
  return (
    (place.platform === 'slack' && place.channel.startsWith('D')) ||
    (place.platform === 'discord' && place.workspace === 'dm')
  );
}

/**
 * How specific a match is: 0 when it does not match; a channel 3, DMs and the playground 2, a workspace 1.
 * @internal
 */
export function matchRank(match: ProfileMatch, place: ProfilePlace): number {
  const checks: { given: boolean; holds: boolean; rank: number }[] = [
    {
      given: match.slackChannel !== undefined,
      holds: place.platform === 'slack' && (match.slackChannel ?? []).includes(place.channel),
      rank: 3,
    },
    {
      given: match.discordChannel !== undefined,
      holds: place.platform === 'discord' && (match.discordChannel ?? []).includes(place.channel),
      rank: 3,
    },
    { given: match.dm !== undefined, holds: isDirectMessage(place), rank: 2 },
    { given: match.playground !== undefined, holds: place.platform === 'web', rank: 2 },
    {
      given: match.slackTeam !== undefined,
      holds: place.platform === 'slack' && (match.slackTeam ?? []).includes(place.workspace),
      rank: 1,
    },
    {
      given: match.discordGuild !== undefined,
      holds: place.platform === 'discord' && (match.discordGuild ?? []).includes(place.workspace),
      rank: 1,
    },
  ];
  const given = checks.filter((check) => check.given);
  // Every key given must hold (slackTeam + dm: that team's DMs); the most specific one ranks it.
  if (given.length === 0 || !given.every((check) => check.holds)) return 0;
  return Math.max(...given.map((check) => check.rank));
}

export class ProfileBook {
  private profiles: readonly Profile[];
  private generation = 0;

  constructor(profiles: readonly Profile[] = []) {
    this.profiles = profiles;
  }

  /** Bumped by every replace: what was built from older profiles is out of date. */
  get version(): number {
    return this.generation;
  }

  all(): readonly Profile[] {
    return this.profiles;
  }

  /** The profile a new thread at this place starts under; undefined: the environment's own. */
  match(place: ProfilePlace | SessionKey): Profile | undefined {
    let best: Profile | undefined;
    let bestRank = 0;
    for (const profile of this.profiles) {
      const rank = matchRank(profile.match, place);
      if (rank > bestRank) {
        best = profile;
        bestRank = rank;
      }
    }
    return best;
  }

  /** A profile by name; undefined for `default`, an unset name, or a name the file no longer has. */
  named(name: string | undefined): Profile | undefined {
    if (name === undefined || name === DEFAULT_PROFILE) return undefined;
    return this.profiles.find((profile) => profile.name === name);
  }

  replace(profiles: readonly Profile[]): void {
    this.profiles = profiles;
    this.generation++;
  }
}
