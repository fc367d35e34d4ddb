// Clicks on the 👍 / 👎 under an answer, and the reason a 👎 may come with: the listeners
// the connector registers with one call (`listenForFeedback`).
//
// The answer is found from the message clicked (its store reference, written when the
// presenter finished the answer), never from the button's value, which says only which way
// the vote goes: a forged value cannot vote on another answer, and a click on a message that
// is no final answer (a card, a note, a forgotten thread's answer) counts nothing. Who may
// vote: anyone who may use the bot (the same door a message passes); the book counts one
// vote per person per answer. Every answer is private (ephemeral), to the person who clicked.
//
// A 👎 opens a modal for an optional reason; the trigger_id is good for 3 seconds, so the
// listener acknowledges first and nothing slow stands before views.open (one stored reference
// and the vote). The modal's submission carries the answer in its private metadata (the bot's
// own, handed back unchanged); the book keeps the reason only with that person's 👎 on it.
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { EngineLogger } from '../../src/engine/index.js';
import type { FeedbackBook } from '../../src/feedback/feedback-book.js';
import type { AccessDecision, ActorContext } from '../../src/sessions/access-policy.js';
import { FEEDBACK_ACTION } from './actions.js';
import {
  FEEDBACK_REASON_CALLBACK,
  REASON_ACTION_ID,
  REASON_BLOCK_ID,
  ReasonMetadataSchema,
  reasonModal,
  voteOf,
} from './feedback-blocks.js';
import { SlackId, SlackTs } from './inbound-events.js';
import { messageKey } from './slack-surface.js';

export interface FeedbackClickDeps {
  client: WebClient;
  feedback: Pick<FeedbackBook, 'vote' | 'giveReason'>;
  /** Whether this person may use the bot (SessionManager.admits). */
  admits(userId: string, actor: ActorContext): AccessDecision;
  logger: EngineLogger;
  /** The installing workspace (auth.test): a clicker from another team is external (Slack Connect). */
  teamId: string;
}

/** What a click on the feedback buttons carries that the handler reads. */
const FeedbackClickSchema = z.object({
  user: z.object({ id: SlackId, team_id: z.string().optional() }),
  trigger_id: z.string().min(1).optional(),
  container: z.object({ channel_id: SlackId, message_ts: SlackTs, thread_ts: SlackTs.optional() }),
  message: z.object({ thread_ts: SlackTs.optional() }).optional(),
  actions: z.tuple([z.object({ type: z.string(), value: z.string().optional() })], z.unknown()),
  response_url: z.string().min(1).optional(),
});

/** What a submission of the reason modal carries that the handler reads. */
const ReasonSubmissionSchema = z.object({
  user: z.object({ id: SlackId, team_id: z.string().optional() }),
  view: z.object({
    private_metadata: z.string(),
    state: z.object({
      values: z.record(z.string(), z.record(z.string(), z.object({ value: z.string().nullish() }).passthrough())),
    }),
  }),
});

const WORDS = {
  unknown: 'That answer is no longer kept (the thread may have been forgotten), so there is nothing to vote on.',
  notAButton: 'That button is not one I recognise.',
  up: 'Thanks for the :+1:: it is counted.',
  down: 'Thanks for the :-1:: it is counted.',
  changed: 'Thanks: your vote on this answer is changed.',
  unchanged: 'Your vote on this answer is already counted.',
  reasonKept: 'Thanks: your reason is recorded.',
  reasonLost: 'I did not keep that reason: you no longer have a :-1: on that answer.',
} as const;

export function listenForFeedback(app: App, deps: FeedbackClickDeps): void {
  const { logger } = deps;
  app.action({ type: 'block_actions', action_id: FEEDBACK_ACTION }, async ({ ack, body, respond }) => {
    await ack();
    const parsed = FeedbackClickSchema.safeParse(body);
    if (!parsed.success) {
      logger.warn(
        { problems: parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.')}: ${issue.message}`) },
        'dropped a malformed feedback click',
      );
      return;
    }
    const click = parsed.data;
    const { channel_id: channel, message_ts: ts } = click.container;
    const thread = click.container.thread_ts ?? click.message?.thread_ts ?? ts;
    const userId = click.user.id;
    const say = async (text: string): Promise<void> => {
      try {
        if (click.response_url) await respond({ response_type: 'ephemeral', replace_original: false, text });
        else await deps.client.chat.postEphemeral({ channel, user: userId, thread_ts: thread, text });
      } catch (error) {
        logger.warn({ err: error }, 'could not answer a feedback click privately');
      }
    };
    const [action] = click.actions;
    const value = action.type === 'feedback_buttons' ? voteOf(action.value) : undefined;
    if (!value) return say(WORDS.notAButton);
    const door = deps.admits(userId, { external: isExternal(click.user.team_id, deps.teamId) });
    if (!door.allowed) return say(door.reason);
    const result = await deps.feedback.vote(messageKey(channel, ts), userId, value);
    if (result.status === 'unknown_answer') return say(WORDS.unknown);
    // The modal first: the trigger_id is good for 3 seconds.
    if (value === 'down' && click.trigger_id) await openReasonModal(deps, click.trigger_id, { channel, ts, thread });
    if (result.status === 'unchanged') return say(WORDS.unchanged);
    if (result.status === 'changed') return say(WORDS.changed);
    return say(WORDS[value]);
  });

  app.view(FEEDBACK_REASON_CALLBACK, async ({ ack, body }) => {
    // The modal closes whatever becomes of the reason: what happened is said in the thread.
    await ack();
    const parsed = ReasonSubmissionSchema.safeParse(body);
    const where = parsed.success ? readMetadata(parsed.data.view.private_metadata) : undefined;
    if (!parsed.success || !where) {
      logger.warn({}, 'dropped a malformed feedback reason (acknowledged)');
      return;
    }
    const userId = parsed.data.user.id;
    const whisper = (text: string) =>
      deps.client.chat.postEphemeral({ channel: where.channel, user: userId, thread_ts: where.thread, text }).then(
        () => undefined,
        (error: unknown) => logger.warn({ err: error }, 'could not answer a feedback reason privately'),
      );
    const door = deps.admits(userId, { external: isExternal(parsed.data.user.team_id, deps.teamId) });
    if (!door.allowed) return whisper(door.reason);
    const reason = parsed.data.view.state.values[REASON_BLOCK_ID]?.[REASON_ACTION_ID]?.value?.trim() ?? '';
    // Sent empty: the 👎 stands without a reason, nothing more to say.
    if (!reason) return;
    const kept = await deps.feedback.giveReason(messageKey(where.channel, where.ts), userId, reason);
    return whisper(kept ? WORDS.reasonKept : WORDS.reasonLost);
  });
}

async function openReasonModal(
  deps: FeedbackClickDeps,
  triggerId: string,
  where: { channel: string; ts: string; thread: string },
): Promise<void> {
  try {
    await deps.client.views.open({ trigger_id: triggerId, view: reasonModal(where) });
  } catch (error) {
    // The 👎 is counted all the same; only the chance to say why is lost.
    deps.logger.warn({ err: error }, 'could not open the feedback reason modal');
  }
}

function readMetadata(raw: string): z.infer<typeof ReasonMetadataSchema> | undefined {
  try {
    const parsed = ReasonMetadataSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function isExternal(userTeam: string | undefined, teamId: string): boolean {
  return Boolean(userTeam && teamId && userTeam !== teamId);
}
