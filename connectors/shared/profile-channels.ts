// At start, each channel a profile names is looked up on its platform: an id that does not
// exist, or a channel the bot cannot see (not invited, private), is a warning that names the
// profile and the id. Never fatal: the bot may be invited later, and a profile for a channel
// that is not there yet simply matches nothing until it is. The platforms' lookups are in
// connectors/slack/profile-channels.ts and connectors/discord/profile-channels.ts.
import type { EngineLogger } from '../../src/engine/index.js';
import type { Profile } from '../../src/profiles/profile-schema.js';

/** What one lookup found: the bot sees it (maybe with a note: not a member yet), or why not. */
export type ChannelSeen = { seen: true; note?: string } | { seen: false; reason: string };

/** Bounds the calls at start; more channels than this are left unchecked (and the log says so). */
const MAX_CHANNEL_LOOKUPS = 100;

export interface ProfileChannelCheck {
  platform: 'Slack' | 'Discord';
  key: 'slackChannel' | 'discordChannel';
  profiles: readonly Profile[];
  lookup: (id: string) => Promise<ChannelSeen>;
  logger: EngineLogger;
}

export interface ProfileChannelReport {
  checked: number;
  unseen: { profile: string; channel: string; reason: string }[];
}

export async function checkProfileChannels(check: ProfileChannelCheck): Promise<ProfileChannelReport> {
  // Each id once, with every profile that names it.
  const named = new Map<string, string[]>();
  for (const profile of check.profiles)
    for (const id of profile.match[check.key] ?? []) named.set(id, [...(named.get(id) ?? []), profile.name]);
  const ids = [...named.keys()];
  const report: ProfileChannelReport = { checked: 0, unseen: [] };
  // One at a time: a handful of calls at start, well inside the platforms' limits.
  for (const id of ids.slice(0, MAX_CHANNEL_LOOKUPS)) {
    let seen: ChannelSeen;
    try {
      seen = await check.lookup(id);
    } catch (error) {
      seen = { seen: false, reason: error instanceof Error ? error.message : String(error) };
    }
    report.checked++;
    for (const profile of named.get(id)!) {
      if (!seen.seen) {
        report.unseen.push({ profile, channel: id, reason: seen.reason });
        check.logger.warn(
          { profile, channel: id, reason: seen.reason },
          `profile "${profile}": ${check.platform} channel ${id} does not exist or the bot cannot see it (${seen.reason}); invite the bot there, or fix the id in PROFILES`,
        );
      } else if (seen.note) {
        check.logger.warn(
          { profile, channel: id },
          `profile "${profile}": ${check.platform} channel ${id}: ${seen.note}`,
        );
      }
    }
  }
  if (ids.length > MAX_CHANNEL_LOOKUPS)
    check.logger.warn(
      { channels: ids.length, checked: MAX_CHANNEL_LOOKUPS },
      `the profiles name ${ids.length} ${check.platform} channels; only the first ${MAX_CHANNEL_LOOKUPS} were looked up`,
    );
  check.logger.info(
    { platform: check.platform, checked: report.checked, unseen: report.unseen.length },
    'profile channels checked',
  );
  return report;
}
