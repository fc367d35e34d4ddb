// What a thread command runs with (thread-commands.ts, and the commands it hands on to:
// schedule-commands.ts, feedback-totals.ts): the platform's answers, the session layer and
// the optional desks, and how the platform marks up words.
import type { EngineLogger } from '../../src/engine/index.js';
import type { FeedbackBook } from '../../src/feedback/feedback-book.js';
import type { SpendReader } from '../../src/ops/spend-report.js';
import type { ScheduleDesk } from '../../src/schedules/schedule-types.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';

export interface CommandContext {
  connector: {
    /** A private answer to the person who ran the command. */
    whisper(channel: string, user: string, threadTs: string, text: string): Promise<void>;
    /** An answer everyone in the thread sees. */
    post(channel: string, threadTs: string, text: string): Promise<void>;
    /** The thread's conversation was forgotten: a platform that shows its state closes it (Slack: the agent session). */
    closed?(key: SessionKey): Promise<void>;
  };
  key: SessionKey;
  userId: string;
  /** The author belongs to another team than the installing workspace (Slack Connect). */
  external?: boolean;
  manager: SessionManager;
  logger: EngineLogger;
  /** The 👍 / 👎 on answers, for an admin's `/feedback` (core.feedback). */
  feedback?: Pick<FeedbackBook, 'totals'>;
  /**
   * The person runs the bot itself (the playground's one local user, who holds its data
   * anyway): an admin for `/feedback` whatever ADMINS lists (ADMINS holds platform ids only).
   */
  operator?: boolean;
  /** What was spent, for `/usage` (core.spend). */
  spend?: SpendReader;
  /** Scheduled work, for `/schedule`, `/schedules`, `/unschedule` and `/forget` (core.schedules). */
  schedules?: ScheduleDesk;
  /** The person's time zone when the platform tells it (Slack users.info `tz`). */
  timezone?: () => Promise<string | undefined>;
  /** SCHEDULE_TZ: the zone a schedule is read in when the person's is not known. */
  defaultTimezone: string;
}

/** How a platform marks up the commands' answers. */
export interface CommandMarkup {
  bold: (text: string) => string;
  /** Text the person typed or a model name, made inert for the platform's markup. */
  escape: (text: string) => string;
  /** The mark before "Model set to …". */
  switched: string;
  /** The answer to `/help` and to a command nobody knows. */
  help: string;
}
