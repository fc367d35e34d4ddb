// How large a file the bot may post in a Discord thread. Discord refuses a larger one with 413
// (code 40005) after the whole upload, so the limit is judged before: the best source is the
// `attachment_size_limit` Discord sends with every interaction (it computes it for the server
// and the app), remembered per server (or DM channel) from the last one seen there; without
// one, the server's boost tier: 10 MiB up to tier 1, 50 MiB at tier 2, 100 MiB at tier 3
// (Discord's figures since its 2024 change from 25 MiB), and 10 MiB in a DM or when the tier
// cannot be read (the smallest, so a file it lets through is never refused for size).
import { Routes, type Guild, type REST } from 'discord.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';

const MIB = 1024 * 1024;
const DEFAULT_UPLOAD_LIMIT = 10 * MIB;
/** How long a server's tier, once read, is trusted (boosts change rarely). */
const TIER_TTL_MS = 10 * 60_000;

/** The upload limit of a server at a boost tier (`premium_tier`, 0–3). */
function uploadLimitForTier(tier: number): number {
  if (tier >= 3) return 100 * MIB;
  if (tier === 2) return 50 * MIB;
  return DEFAULT_UPLOAD_LIMIT;
}

export interface UploadLimitsOptions {
  /** A server's boost tier: from the gateway's cache or a REST lookup; throws when it cannot be read. */
  tierOf(guildId: string): Promise<number>;
  /** The key's workspace for a DM (no server). */
  dmWorkspace: string;
}

export class UploadLimits {
  /** `attachment_size_limit` of the last interaction per server id (or DM channel id). */
  private readonly reported = new Map<string, number>();
  private readonly tiers = new Map<string, { tier: number; at: number }>();

  constructor(private readonly options: UploadLimitsOptions) {}

  /** Remember what an interaction said the limit is where it was used. */
  remember(scopeId: string, limit: number | undefined): void {
    if (typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0) this.reported.set(scopeId, limit);
  }

  async forThread(key: SessionKey): Promise<number> {
    const dm = key.workspace === this.options.dmWorkspace;
    const reported = this.reported.get(dm ? key.channel : key.workspace);
    if (reported !== undefined) return reported;
    if (dm) return DEFAULT_UPLOAD_LIMIT;
    const known = this.tiers.get(key.workspace);
    if (known && Date.now() - known.at < TIER_TTL_MS) return uploadLimitForTier(known.tier);
    try {
      const tier = await this.options.tierOf(key.workspace);
      this.tiers.set(key.workspace, { tier, at: Date.now() });
      return uploadLimitForTier(tier);
    } catch {
      return DEFAULT_UPLOAD_LIMIT;
    }
  }
}

/** A server's boost tier: the gateway's copy (`cached`) where this instance holds it, else asked over REST. */
export async function premiumTier(rest: REST, cached: Guild | undefined, guildId: string): Promise<number> {
  if (cached) return cached.premiumTier;
  const guild = (await rest.get(Routes.guild(guildId))) as { premium_tier?: unknown };
  if (typeof guild.premium_tier !== 'number') throw new Error('Discord sent a server without its premium_tier');
  return guild.premium_tier;
}
