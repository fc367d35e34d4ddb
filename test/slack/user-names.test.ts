import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/engine/index.js';
import { UserNames, USER_NAME_LIMITS, type UserNameLimits } from '../../connectors/slack/user-names.js';

/** A users.info that knows `known`, records who was asked, and may hold its answers until `gate` opens. */
function directory(known: Record<string, string>, options: { gate?: Promise<void> } = {}) {
  const asked: string[] = [];
  return {
    asked,
    users: {
      async info({ user }: { user: string }): Promise<unknown> {
        asked.push(user);
        await options.gate;
        const name = known[user];
        if (!name) throw new Error('An API error occurred: user_not_found');
        return { ok: true, user: { id: user, name, real_name: name.toUpperCase(), profile: { display_name: name } } };
      },
    },
  };
}

const limits = (change: Partial<UserNameLimits>): UserNameLimits => ({ ...USER_NAME_LIMITS, ...change });

describe('user names', () => {
  it('keeps the time zone users.info gives with the name: one call serves both, either first', async () => {
    const asked: string[] = [];
    const zones: Record<string, string | undefined> = { U0ADA: 'Europe/Paris', U0BOB: undefined };
    const slack = {
      users: {
        info({ user }: { user: string }): Promise<unknown> {
          asked.push(user);
          if (!(user in zones)) return Promise.reject(new Error('An API error occurred: user_not_found'));
          return Promise.resolve({
            ok: true,
            user: { id: user, name: user.toLowerCase(), ...(zones[user] ? { tz: zones[user] } : {}) },
          });
        },
      },
    };
    const names = new UserNames(slack, silentLogger);
    expect(await names.timezoneOf('U0ADA')).toBe('Europe/Paris');
    expect(await names.namesOf(['U0ADA'])).toEqual(new Map([['U0ADA', 'u0ada']]));
    await names.namesOf(['U0BOB']);
    // No tz set in Slack, or no such person: not known (the caller uses SCHEDULE_TZ).
    expect(await names.timezoneOf('U0BOB')).toBeUndefined();
    expect(await names.timezoneOf('U0GHOST')).toBeUndefined();
    expect(await names.timezoneOf('U0GHOST')).toBeUndefined();
    expect(asked).toEqual(['U0ADA', 'U0BOB', 'U0GHOST']);
  });

  it('asks at most the per-message budget, most wanted first, and shows what it learnt', async () => {
    const slack = directory({ U0ADA: 'ada', U0BOB: 'bob' });
    const names = new UserNames(slack, silentLogger, limits({ lookupsPerMessage: 3 }));
    const ids = ['U0ADA', 'U0BOB', 'U0X1', 'U0X2', 'U0X3', 'U0ADA'];
    expect(await names.namesOf(ids)).toEqual(
      new Map([
        ['U0ADA', 'ada'],
        ['U0BOB', 'bob'],
      ]),
    );
    expect(slack.asked).toEqual(['U0ADA', 'U0BOB', 'U0X1']);
    // Known names are free: the next message spends its budget on the ids not yet asked about.
    await names.namesOf(ids);
    expect(slack.asked).toEqual(['U0ADA', 'U0BOB', 'U0X1', 'U0X2', 'U0X3']);
  });

  it('remembers a failure for the failure TTL, then asks again', async () => {
    let now = 1_000;
    const slack = directory({});
    const names = new UserNames(slack, silentLogger, limits({ failureTtlMs: 60_000 }), () => now);
    await names.namesOf(['U0GHOST']);
    now += 59_999;
    await names.namesOf(['U0GHOST']);
    expect(slack.asked).toEqual(['U0GHOST']);
    now += 1;
    await names.namesOf(['U0GHOST']);
    expect(slack.asked).toEqual(['U0GHOST', 'U0GHOST']);
  });

  it('holds at most maxEntries, dropping the least recently used', async () => {
    const slack = directory({ U0A: 'a', U0B: 'b', U0C: 'c' });
    const names = new UserNames(slack, silentLogger, limits({ maxEntries: 2 }));
    await names.namesOf(['U0A']);
    await names.namesOf(['U0B']);
    await names.namesOf(['U0A']); // A is used again: B is now the oldest
    await names.namesOf(['U0C']);
    expect(names.size).toBe(2);
    await names.namesOf(['U0A', 'U0C']);
    expect(slack.asked).toEqual(['U0A', 'U0B', 'U0C']);
    await names.namesOf(['U0B']);
    expect(slack.asked).toEqual(['U0A', 'U0B', 'U0C', 'U0B']);
  });

  it('a message waits at most lookupWaitMs; the late answer fills the cache, and a lookup on its way is shared', async () => {
    let answer!: () => void;
    const slack = directory({ U0SLOW: 'slow' }, { gate: new Promise<void>((resolve) => (answer = resolve)) });
    const names = new UserNames(slack, silentLogger, limits({ lookupWaitMs: 20 }));
    // Slack does not answer until the gate opens: the message goes on without the name (a
    // lookup that waited for the answer would never return here).
    expect(await names.namesOf(['U0SLOW'])).toEqual(new Map());
    // Slack's retry of the same message, while the first lookup is still out: no second call.
    expect(await names.namesOf(['U0SLOW'])).toEqual(new Map());
    expect(slack.asked).toEqual(['U0SLOW']);
    answer();
    let found = new Map<string, string>();
    for (let tries = 0; tries < 100 && !found.has('U0SLOW'); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      found = await names.namesOf(['U0SLOW']);
    }
    expect(found).toEqual(new Map([['U0SLOW', 'slow']]));
    expect(slack.asked).toEqual(['U0SLOW']);
  });

  it('an answer without a user counts as a failure, and an empty profile falls back to the real name, then the handle', async () => {
    const answers: Record<string, unknown> = {
      U0ODD: { ok: true },
      U0REAL: { ok: true, user: { name: 'handle', real_name: 'Real Name', profile: { display_name: '' } } },
      U0HANDLE: { ok: true, user: { name: 'handle', profile: {} } },
    };
    const names = new UserNames({ users: { info: async ({ user }) => answers[user] } }, silentLogger);
    expect(await names.namesOf(['U0ODD', 'U0REAL', 'U0HANDLE'])).toEqual(
      new Map([
        ['U0REAL', 'Real Name'],
        ['U0HANDLE', 'handle'],
      ]),
    );
  });
});
