// Early stops: a 🛑 that arrives before the thread it stops exists, kept for the turn that thread starts.
/**
 * Stops for a thread the bot does not know yet. A reaction and the message it reacts to
 * reach the bot as separate events, in either order: a 🛑 on a mention can be processed
 * before the mention itself. Such a stop is kept for a minute and applied to the turn that
 * message starts, if the person may stop it then. Bounded: a flood of reactions on
 * unrelated messages cannot grow it past `MAX`.
 */
export class EarlyStops {
  private static readonly TTL_MS = 60_000;
  private static readonly MAX = 1_000;
  private readonly stops = new Map<string, { userId: string; at: number }>();

  remember(sessionId: string, userId: string): void {
    this.stops.delete(sessionId);
    this.stops.set(sessionId, { userId, at: Date.now() });
    if (this.stops.size > EarlyStops.MAX) this.stops.delete(this.stops.keys().next().value!);
  }

  /** Who stopped this thread before it existed, if it was within the last minute. */
  take(sessionId: string): string | undefined {
    const stop = this.stops.get(sessionId);
    if (!stop) return undefined;
    this.stops.delete(sessionId);
    return Date.now() - stop.at <= EarlyStops.TTL_MS ? stop.userId : undefined;
  }
}
