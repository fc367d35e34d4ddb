// Display names of Slack users: `<@U123>` shown as `@ada` in the text the model reads, and the
// author's name in the `source` sidecar; and, from the same `users.info` answer and cache, the
// person's time zone (`tz`), which `/schedule` reads their "when" in. A name is a nicety, so nothing a message holds may make
// the bot call Slack without bound. The incident behind this file: a message from someone not
// allowed to use the bot, holding 400 made-up `<@U…>` ids, made 401 `users.info` calls before it
// was refused, and Slack's retry of the event 401 more (failures were not remembered).
//
//   who          the connector asks only after the access check: a refused message costs nothing
//   per message  at most LOOKUPS_PER_MESSAGE calls (names already known are free); the other
//                ids stay as they are (`@U0123ABC`)
//   failures     remembered for FAILURE_TTL_MS, so Slack's retry or a repeat asks nothing again
//   memory       at most MAX_ENTRIES names and failures; the least recently used go first
//   time         a message waits at most LOOKUP_WAIT_MS for its names: it is acknowledged only
//                once recorded, within Slack's 3 seconds. A late answer still fills the cache.
import { z } from 'zod';
import type { EngineLogger } from '../../src/engine/index.js';

export interface UserNameLimits {
  lookupsPerMessage: number;
  failureTtlMs: number;
  maxEntries: number;
  lookupWaitMs: number;
}

/** @internal */
export const USER_NAME_LIMITS: UserNameLimits = {
  lookupsPerMessage: 20,
  failureTtlMs: 10 * 60 * 1000,
  maxEntries: 10_000,
  lookupWaitMs: 1_500,
};

/** The one Web API method this needs (a WebClient is one). */
export interface UserDirectory {
  users: { info(args: { user: string }): Promise<unknown> };
}

/** The parts of a `users.info` answer a name comes from. */
const UsersInfoSchema = z.object({
  user: z.object({
    name: z.string().optional(),
    real_name: z.string().optional(),
    profile: z.object({ display_name: z.string().optional() }).optional(),
    /** The IANA zone the person set in Slack ("Europe/Paris"). */
    tz: z.string().optional(),
  }),
});

type Entry = { name: string; tz?: string } | { failedAt: number };

export class UserNames {
  /** Insertion order is recency order: a hit moves its entry to the end, eviction takes the front. */
  private readonly entries = new Map<string, Entry>();
  /** Lookups on their way: a second message (or Slack's retry) waits on these instead of asking again. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly directory: UserDirectory,
    private readonly logger: EngineLogger,
    private readonly limits: UserNameLimits = USER_NAME_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The names of these users that are known or can be learnt within this message's budget, by
   * id. Put the most wanted first (the author): ids past the budget are not looked up.
   */
  async namesOf(userIds: readonly string[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const waits: Promise<void>[] = [];
    const asked: string[] = [];
    let calls = 0;
    for (const id of new Set(userIds)) {
      const known = this.recall(id);
      if (known && 'failedAt' in known) continue;
      if (known) {
        names.set(id, known.name);
        continue;
      }
      const onItsWay = this.pending.get(id);
      if (!onItsWay && calls >= this.limits.lookupsPerMessage) continue;
      if (!onItsWay) calls++;
      waits.push(onItsWay ?? this.lookUp(id));
      asked.push(id);
    }
    if (waits.length > 0) await within(Promise.all(waits), this.limits.lookupWaitMs);
    for (const id of asked) {
      const known = this.recall(id);
      if (known && 'name' in known) names.set(id, known.name);
    }
    return names;
  }

  /**
   * The person's time zone as Slack knows it, or undefined (not set, or users.info failed: the
   * caller falls back to SCHEDULE_TZ). Asked once, then kept with the name.
   */
  async timezoneOf(userId: string): Promise<string | undefined> {
    let known = this.recall(userId);
    if (!known) {
      await within(this.pending.get(userId) ?? this.lookUp(userId), this.limits.lookupWaitMs);
      known = this.recall(userId);
    }
    return known && 'name' in known ? known.tz : undefined;
  }

  /** How many names and failures are held (tests). */
  get size(): number {
    return this.entries.size;
  }

  /** A known name or a recent failure; undefined when Slack may be asked. */
  private recall(userId: string): Entry | undefined {
    const entry = this.entries.get(userId);
    if (!entry) return undefined;
    if ('failedAt' in entry && this.now() - entry.failedAt >= this.limits.failureTtlMs) {
      this.entries.delete(userId);
      return undefined;
    }
    this.entries.delete(userId);
    this.entries.set(userId, entry);
    return entry;
  }

  private remember(userId: string, entry: Entry): void {
    this.entries.delete(userId);
    this.entries.set(userId, entry);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limits.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  /** Never rejects: a failure is remembered as one. */
  private lookUp(userId: string): Promise<void> {
    const lookup = this.directory.users
      .info({ user: userId })
      .then((answer) => {
        const parsed = UsersInfoSchema.safeParse(answer);
        if (!parsed.success) throw new Error('users.info answered without a user');
        const { user } = parsed.data;
        this.remember(userId, {
          name: user.profile?.display_name || user.real_name || user.name || userId,
          ...(user.tz ? { tz: user.tz } : {}),
        });
      })
      .catch((error: unknown) => {
        this.logger.debug({ err: error, userId }, 'users.info failed; showing the id');
        this.remember(userId, { failedAt: this.now() });
      })
      .finally(() => this.pending.delete(userId));
    this.pending.set(userId, lookup);
    return lookup;
  }
}

/** Wait for `work`, or for `ms` if that comes first (the work goes on). */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
