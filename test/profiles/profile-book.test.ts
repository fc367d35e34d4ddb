// Which profile a place gets: the most specific match (a channel over DMs or the playground,
// those over a workspace or server), the file's order breaking ties, every key of a match
// holding at once, DMs as each platform files them; and a reload's version.
import { describe, expect, it } from 'vitest';
import { isDirectMessage, matchRank, ProfileBook, type ProfilePlace } from '../../src/profiles/profile-book.js';
import type { Profile } from '../../src/profiles/profile-schema.js';

const slack = (channel: string, workspace = 'T1'): ProfilePlace => ({ platform: 'slack', workspace, channel });
const discord = (channel: string, workspace = 'G1'): ProfilePlace => ({ platform: 'discord', workspace, channel });
const web: ProfilePlace = { platform: 'web', workspace: 'local', channel: 'playground' };

const profile = (name: string, match: Profile['match']): Profile => ({ name, match });

describe('ProfileBook', () => {
  const book = new ProfileBook([
    profile('team', { slackTeam: ['T1'] }),
    profile('guild', { discordGuild: ['G1'] }),
    profile('dms', { dm: true }),
    profile('play', { playground: true }),
    profile('ops', { slackChannel: ['C0OPS'] }),
    profile('dev', { discordChannel: ['111'] }),
    profile('team-dms', { slackTeam: ['T2'], dm: true }),
    profile('ops-again', { slackChannel: ['C0OPS', 'C0SRE'] }),
  ]);
  const at = (place: ProfilePlace): string | undefined => book.match(place)?.name;

  it("a channel over DMs and the playground, those over a workspace or server; no match: the environment's", () => {
    expect(at(slack('C0OPS'))).toBe('ops');
    expect(at(slack('C0OTHER'))).toBe('team');
    expect(at(slack('D0DM'))).toBe('dms');
    expect(at(discord('111'))).toBe('dev');
    expect(at(discord('222'))).toBe('guild');
    expect(at(discord('333', 'dm'))).toBe('dms');
    expect(at(web)).toBe('play');
    expect(at(slack('C0X', 'T9'))).toBeUndefined();
    expect(at(discord('444', 'G9'))).toBeUndefined();
  });

  it("the file's order breaks a tie between equally specific matches", () => {
    expect(at(slack('C0SRE'))).toBe('ops-again');
    // C0OPS: ops and ops-again both name it; ops comes first.
    expect(at(slack('C0OPS'))).toBe('ops');
    const swapped = new ProfileBook([profile('b', { dm: true }), profile('a', { dm: true })]);
    expect(swapped.match(slack('D1'))?.name).toBe('b');
  });

  it("every key of a match must hold: slackTeam + dm is that team's DMs only, ranked as DMs", () => {
    expect(matchRank({ slackTeam: ['T2'], dm: true }, slack('D0DM', 'T2'))).toBe(2);
    expect(matchRank({ slackTeam: ['T2'], dm: true }, slack('C0CHAN', 'T2'))).toBe(0);
    expect(matchRank({ slackTeam: ['T2'], dm: true }, slack('D0DM', 'T1'))).toBe(0);
    // In T2's DMs, `team-dms` and `dms` rank alike (2): `dms` is first in the file.
    expect(at(slack('D0DM', 'T2'))).toBe('dms');
    const narrow = new ProfileBook([
      profile('team-dms', { slackTeam: ['T2'], dm: true }),
      profile('dms', { dm: true }),
    ]);
    expect(narrow.match(slack('D0DM', 'T2'))?.name).toBe('team-dms');
    expect(narrow.match(slack('D0DM', 'T1'))?.name).toBe('dms');
  });

  it("ids of one platform never match the other's places", () => {
    const mixed = new ProfileBook([
      profile('s', { slackChannel: ['111'] }),
      profile('d', { discordChannel: ['C0OPS'] }),
    ]);
    expect(mixed.match(discord('111'))).toBeUndefined();
    expect(mixed.match(slack('C0OPS'))).toBeUndefined();
  });

  it("DMs: Slack channels D…, Discord's workspace `dm`; not a Slack workspace named dm, not the playground", () => {
    expect(isDirectMessage(slack('D0123'))).toBe(true);
    expect(isDirectMessage(slack('C0123'))).toBe(false);
    expect(isDirectMessage(discord('555', 'dm'))).toBe(true);
    expect(isDirectMessage(discord('555', 'G1'))).toBe(false);
    expect(isDirectMessage({ platform: 'slack', workspace: 'dm', channel: 'C1' })).toBe(false);
    expect(isDirectMessage(web)).toBe(false);
  });

  it('named: by name; `default`, unset or a name the file no longer has is undefined; replace bumps the version', () => {
    const own = new ProfileBook([profile('ops', { slackChannel: ['C0OPS'] })]);
    expect(own.version).toBe(0);
    expect(own.named('ops')?.name).toBe('ops');
    expect(own.named('default')).toBeUndefined();
    expect(own.named(undefined)).toBeUndefined();
    own.replace([profile('support', { slackChannel: ['C0SUP'] })]);
    expect(own.version).toBe(1);
    expect(own.named('ops')).toBeUndefined();
    expect(own.match(slack('C0OPS'))).toBeUndefined();
    expect(own.match(slack('C0SUP'))?.name).toBe('support');
  });
});
