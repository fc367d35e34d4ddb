// What Slack sends in, checked at the door. Every payload the connector reads is parsed here
// with zod; one that does not parse is acknowledged (HTTP 200, or the Socket Mode ack) so Slack
// does not send it again, logged once at warn with its type (never its content: it may hold a
// user's text), and starts nothing.
//
// Two layers, because Bolt reads some fields itself before any listener runs:
//   - CheckedApp.processEvent: the fields Bolt dereferences unchecked while it routes a body
//     (App.processEvent, getTypeAndConversation, buildSource; Bolt 5.1). Without this check a
//     `reaction_added` whose `item` is null, an `event` that is null, or a `block_actions`
//     without `user` throws inside Bolt (HTTP 500: Slack retries), and a `block_actions`
//     without a usable `actions[0].action_id` reaches no listener, so nothing acknowledges it
//     and Bolt answers 404 after 3 seconds.
//   - the readers below, in the listeners: the fields our code uses. A listener must return
//     normally on a bad payload: with `processBeforeResponse`, one that throws makes Bolt
//     answer 500 (and Slack retry) instead of 200.
import type { AppOptions, ReceiverEvent } from '@slack/bolt';
import { App } from './bolt-classes.js';
import { z } from 'zod';
import type { EngineLogger } from '../../src/engine/index.js';

/** Slack's ids (users, channels, teams) are upper-case letters and digits: `U0123ABC`. */
export const SlackId = z.string().regex(/^[A-Z0-9]+$/);
/** A message timestamp, which is also its id: `1712345678.000100`. */
export const SlackTs = z.string().regex(/^\d+\.\d+$/);

// ---- what Bolt reads before our listeners ------------------------------------------------

/** A record Bolt may look into with `in` or `.field` (null, a string or a number would throw). */
const Shape = z.object({});

const BoltEventsApiBody = z.object({
  event: z.object({
    type: z.string(),
    user: z.union([z.string(), Shape]).optional(),
    channel: z.union([z.string(), Shape]).optional(),
    item: Shape.optional(),
    subteam: Shape.optional(),
  }),
  authorizations: z.array(Shape).optional(),
});

const BoltBlockActionsBody = z.object({
  user: Shape,
  team: Shape.nullable().optional(),
  enterprise: Shape.nullable().optional(),
  channel: Shape.optional(),
  // Bolt routes on the first action's id; a body it cannot route is never acknowledged.
  actions: z.array(z.object({ action_id: z.string() })).min(1),
});

/** A modal's submission or closing: Bolt reads the view's callback id and team, and the user's. */
const BoltViewBody = z.object({
  user: Shape,
  team: Shape.nullable().optional(),
  enterprise: Shape.nullable().optional(),
  view: Shape,
});

/** The problems Bolt would trip on, or undefined when it can route this body safely. */
function boltProblems(body: Record<string, unknown>): z.core.$ZodIssue[] | undefined {
  if ('event' in body || body.type === 'event_callback') return issuesOf(BoltEventsApiBody.safeParse(body));
  if (body.type === 'block_actions') return issuesOf(BoltBlockActionsBody.safeParse(body));
  if (body.type === 'view_submission' || body.type === 'view_closed') return issuesOf(BoltViewBody.safeParse(body));
  return undefined;
}

/**
 * Bolt's App with the door in front: a body Bolt itself cannot route safely is acknowledged
 * and dropped here, for the HTTP receiver and the Socket Mode receiver alike (both hand every
 * body to processEvent).
 */
export class CheckedApp extends App {
  private readonly inboundLogger: EngineLogger;

  constructor(options: AppOptions, logger: EngineLogger) {
    super(options);
    this.inboundLogger = logger;
  }

  override async processEvent(event: ReceiverEvent): Promise<void> {
    const problems = boltProblems(event.body);
    if (!problems) return super.processEvent(event);
    reportMalformed(this.inboundLogger, payloadType(event.body), problems);
    await event.ack();
  }
}

// ---- what our listeners read -------------------------------------------------------------

/** The subtypes that are still a person's message; the others (edits, deletions, joins, …) are not for the bot. */
const READ_SUBTYPES = ['file_share', 'thread_broadcast'] as const;

// Optional fields of a message may come as null (Slack writes absent as null in places): that
// is absent, not malformed.

/** Enough of a `message` or `app_mention` to tell whether it is for the bot at all. */
const MessageKindSchema = z.object({
  subtype: z.string().nullish(),
  bot_id: z.string().nullish(),
  user: z.string().nullish(),
});

const HumanMessageSchema = z.object({
  user: SlackId,
  // A file shared without a comment comes without text.
  text: z
    .string()
    .nullish()
    .transform((text) => text ?? ''),
  ts: SlackTs,
  thread_ts: SlackTs.nullish(),
  channel: SlackId,
  channel_type: z.string().nullish(),
  /** Slack Connect: the author's own team, when it differs from the channel's. */
  user_team: SlackId.nullish(),
  subtype: z.enum(READ_SUBTYPES).nullish(),
  /** Files shared with it, each read on its own (inbound-files.ts): one bad object does not drop the message. */
  files: z.unknown().optional(),
});

export type HumanMessage = z.infer<typeof HumanMessageSchema>;

/** The team an Events API body was delivered for (absent in some test and legacy bodies). */
const TeamOfBody = z.object({ team_id: SlackId.optional() });

export interface MessageDelivery {
  teamId: string | undefined;
  message: HumanMessage;
}

/**
 * A person's message from an `app_mention` or `message` body. Undefined for what is not for the
 * bot (a bot's post, an edit, a join; quietly) and for what is malformed (reported).
 */
export function readHumanMessage(
  body: unknown,
  type: 'app_mention' | 'message',
  logger: EngineLogger,
): MessageDelivery | undefined {
  const event = (body as { event?: unknown } | undefined)?.event;
  const kind = MessageKindSchema.safeParse(event);
  if (!kind.success) {
    reportMalformed(logger, type, kind.error.issues);
    return undefined;
  }
  const { bot_id: botId, subtype, user } = kind.data;
  // Other bots (and our own echoes, which Bolt's ignoreSelf drops first) never start turns.
  if (botId || !user) return undefined;
  if (subtype && !(READ_SUBTYPES as readonly string[]).includes(subtype)) return undefined;
  const message = HumanMessageSchema.safeParse(event);
  const team = TeamOfBody.safeParse(body);
  if (!message.success || !team.success) {
    reportMalformed(logger, type, [...(message.error?.issues ?? []), ...(team.error?.issues ?? [])]);
    return undefined;
  }
  return { teamId: team.data.team_id, message: message.data };
}

const ReactionAddedBody = z.object({
  team_id: SlackId.optional(),
  event: z
    .object({
      user: SlackId,
      reaction: z.string(),
      item: z.object({ type: z.string(), channel: SlackId.optional(), ts: SlackTs.optional() }),
    })
    .transform(({ user, reaction, item }, context) => {
      if (item.type !== 'message') return { user, reaction, message: undefined };
      if (item.channel === undefined || item.ts === undefined) {
        context.addIssue({ code: 'custom', path: ['item'], message: 'a message item has a channel and a ts' });
        return z.NEVER;
      }
      return { user, reaction, message: { channel: item.channel, ts: item.ts } };
    }),
});

const ButtonAction = z.object({ action_id: z.string(), value: z.string().optional() });

const ButtonClickBody = z.object({
  user: z.object({ id: SlackId }),
  // At least one: Slack sends the clicked button first (and, for a block_actions, only it).
  actions: z.tuple([ButtonAction], ButtonAction),
  container: z
    .object({ type: z.string().optional(), channel_id: SlackId.optional(), message_ts: SlackTs.optional() })
    .optional(),
  message: z.object({ text: z.string().optional(), blocks: z.array(z.unknown()).optional() }).optional(),
  /** A click in a modal: the view it was made in, as the bot opened it (its callback id and private metadata). */
  view: z.object({ callback_id: z.string().optional(), private_metadata: z.string().optional() }).optional(),
  /** Where a private answer goes; Bolt's `respond` exists only when the body has one. */
  response_url: z.string().min(1).optional(),
});

export type ButtonClick = z.infer<typeof ButtonClickBody>;

/** `/agent` answers at the response_url Slack gives with the command. */
const SlashCommandBody = z.object({ response_url: z.string().min(1) });

/**
 * Slack's Stop button on an agent session (`agent_session_stopped`). `streaming_message_ts`
 * (the answers being written when it was clicked) is not needed: the thread names the session.
 */
const AgentSessionStoppedBody = z.object({
  team_id: SlackId.optional(),
  event: z.object({
    channel: SlackId,
    thread_ts: SlackTs,
    user: SlackId,
    streaming_message_ts: z.array(SlackTs).nullish(),
    event_ts: SlackTs,
  }),
});

const READERS = {
  reaction_added: ReactionAddedBody,
  agent_session_stopped: AgentSessionStoppedBody,
  block_actions: ButtonClickBody,
  slash_command: SlashCommandBody,
} as const;

type Readable = keyof typeof READERS;

/** The parsed payload, or undefined (reported once at warn) when it does not parse. */
export function readInbound<T extends Readable>(
  type: T,
  payload: unknown,
  logger: EngineLogger,
): z.output<(typeof READERS)[T]> | undefined {
  const parsed = READERS[type].safeParse(payload);
  if (parsed.success) return parsed.data as z.output<(typeof READERS)[T]>;
  reportMalformed(logger, type, parsed.error.issues);
  return undefined;
}

/** An event body read with the listener's own schema: parsed, or undefined (reported once at warn). */
export function readInboundEvent<S extends z.ZodType>(
  type: string,
  schema: S,
  payload: unknown,
  logger: EngineLogger,
): z.output<S> | undefined {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  reportMalformed(logger, type, parsed.error.issues);
  return undefined;
}

/** The first section's sentence of a clicked message (a note keeps it when its button goes). */
export function firstSectionText(click: ButtonClick): string | undefined {
  const section = click.message?.blocks?.find((block) => (block as { type?: unknown } | null)?.type === 'section');
  const parsed = z.object({ text: z.object({ text: z.string() }) }).safeParse(section);
  return parsed.success ? parsed.data.text.text : undefined;
}

// ---- reporting ---------------------------------------------------------------------------

/**
 * One warn line per dropped payload: its type and where it is wrong. Zod's messages name the
 * expected and received types, never the received value.
 */
function reportMalformed(logger: EngineLogger, type: string, issues: readonly z.core.$ZodIssue[]): void {
  const problems = issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(body)'}: ${issue.message}`);
  logger.warn({ type, problems }, 'dropped a malformed Slack payload (acknowledged, so Slack does not send it again)');
}

function issuesOf(result: { success: true } | { success: false; error: z.ZodError }): z.core.$ZodIssue[] | undefined {
  return result.success ? undefined : result.error.issues;
}

/** The kind of a body, for the log: Slack's own type names only, never free text. */
function payloadType(body: Record<string, unknown>): string {
  const event = body.event as { type?: unknown } | null | undefined;
  const type = typeof event === 'object' && event !== null ? event.type : body.type;
  return typeof type === 'string' && /^[a-z0-9_.]{1,64}$/.test(type) ? type : 'unknown';
}
