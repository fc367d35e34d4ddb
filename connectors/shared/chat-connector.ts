// What the bot's start-up and shutdown (src/app/run-bot.ts) need from one chat platform's
// connector: Slack, Discord and the local playground all offer it. A connector is built
// before recovery (so it renders the sessions recovery resumes), takes events only after
// `start`, and is shut down in two steps so that nothing is lost: `stopTaking` first (no new
// event is accepted: Slack retries what it could not deliver), then, once every running turn
// has reached a safe point and said so in its thread, `close`.

/** The line the start-up logs for one connector: what runs where. */
export interface ConnectorStarted {
  message: string;
  fields: Record<string, unknown>;
}

export interface ChatConnector {
  /** The platform's name, for log lines. */
  readonly name: string;
  /** Start taking events. */
  start(): Promise<ConnectorStarted>;
  /** Take no new event; what the bot posts still goes out (the shutdown notes need it). */
  stopTaking(): Promise<void>;
  /** Release everything (sockets, servers, timers). After `stopTaking`. */
  close(): Promise<void>;
}
