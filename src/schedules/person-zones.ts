// Whose time zone is what, per platform, for the schedule_task tool (src/ cannot ask a
// connector): a connector that knows its people's zones (Slack: users.info `tz`) registers a
// lookup; every other platform, or a lookup that fails or knows nothing, gives SCHEDULE_TZ.
import type { EngineLogger } from '../engine/index.js';

export type ZoneLookup = (userId: string) => Promise<string | undefined>;

export class PersonZones {
  private readonly lookups = new Map<string, ZoneLookup>();

  constructor(
    /** SCHEDULE_TZ. */
    private readonly fallback: string,
    private readonly logger?: EngineLogger,
  ) {}

  /** The connector of `platform` knows its people's zones. A later registration replaces it. */
  register(platform: string, lookup: ZoneLookup): void {
    this.lookups.set(platform, lookup);
  }

  /** The person's zone, else SCHEDULE_TZ. Never rejects. */
  async zoneOf(platform: string, userId: string): Promise<string> {
    const lookup = this.lookups.get(platform);
    if (!lookup) return this.fallback;
    try {
      return (await lookup(userId))?.trim() || this.fallback;
    } catch (error) {
      this.logger?.debug({ err: error, platform }, "could not read a person's time zone; using SCHEDULE_TZ");
      return this.fallback;
    }
  }
}
