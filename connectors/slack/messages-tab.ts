// The app's Messages tab greets people and knows where they are. When someone opens it (a new
// assistant thread, or the tab itself under the agent messaging experience) they get up to four
// suggested prompts (SUGGESTED_PROMPTS, else ours, which say what the bot can do); when Slack
// reports which channel they are viewing beside the conversation, that is kept as the
// conversation's context (src/context/viewing-contexts.ts) and the model is told so, as a fact,
// at its next call. The bot never reads that channel: the person may see what others may not.
//
// Four events, all checked with zod at the door like every other payload (a malformed one is
// acknowledged and dropped): `assistant_thread_started` and `assistant_thread_context_changed`
// (one thread: the assistant container), `app_home_opened` with `tab: "messages"` and
// `app_context_changed` (the agent messaging experience: the person's view, carried into a
// thread of their DM when they write there: `carryViewing`).
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { ViewingContexts } from '../../src/context/viewing-contexts.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionKey } from '../../src/sessions/thread-records.js';
import { readInboundEvent, SlackId, SlackTs } from './inbound-events.js';

/** @internal */
export interface SuggestedPrompt {
  title: string;
  message: string;
}

/**
 * What a click on each sends, standing alone (a prompt cannot carry a file or wait for more).
 * @internal
 */
export const DEFAULT_SUGGESTED_PROMPTS: readonly SuggestedPrompt[] = [
  { title: 'What can you do?', message: 'What can you do here, and how do I steer you or stop you while you work?' },
  { title: 'Tour your workspace', message: 'Look through your workspace folder and tell me what is in it.' },
  {
    title: 'Which tools need approval?',
    message: 'Which tools do you have, and which of them ask for my approval before they run?',
  },
  { title: 'Plan a task with me', message: 'Help me plan a task step by step. Ask me what the task is first.' },
];

/**
 * Above the prompts in the tab.
 * @internal
 */
export const PROMPTS_TITLE = 'Try one of these';

export interface MessagesTabDeps {
  client: WebClient;
  viewing: ViewingContexts;
  logger: EngineLogger;
  /** SUGGESTED_PROMPTS, or undefined for ours. */
  prompts: readonly SuggestedPrompt[] | undefined;
  /** The installing workspace, for an event body that names none. */
  teamId: () => string;
}

const AssistantThreadBody = z.object({
  team_id: SlackId.optional(),
  event: z.object({
    assistant_thread: z.object({
      user_id: SlackId,
      channel_id: SlackId,
      thread_ts: SlackTs,
      // Absent (or empty) when the person views nothing we could name.
      context: z.object({ channel_id: SlackId.optional(), team_id: SlackId.optional() }).partial().nullish(),
    }),
  }),
});

const AppHomeOpenedBody = z.object({
  team_id: SlackId.optional(),
  event: z.object({ user: SlackId, channel: SlackId, tab: z.string().optional() }),
});

/** Entities ordered by relevance; only the kinds we can name are read, the rest ignored. */
const ContextEntity = z.union([
  z.object({ type: z.literal('slack#/types/channel_id'), value: SlackId }),
  z.object({
    type: z.literal('slack#/types/message_context'),
    value: z.object({ channel_id: SlackId, message_ts: SlackTs }),
  }),
  z.object({ type: z.literal('slack#/types/canvas_id'), value: SlackId }),
  z.object({ type: z.literal('slack#/types/list_id'), value: SlackId }),
  z.object({ type: z.string() }).transform(() => undefined),
]);

// Slack's reference example carries neither `channel` nor `user` in the event; @slack/types
// says both. The person is the event's `user`, else the one human authorization.
const AppContextChangedBody = z.object({
  team_id: SlackId.optional(),
  event: z.object({
    user: SlackId.optional(),
    context: z.object({ entities: z.array(ContextEntity).optional() }).nullish(),
  }),
  authorizations: z.array(z.object({ user_id: SlackId.optional(), is_bot: z.boolean().optional() })).optional(),
});

export function listenForMessagesTab(app: App, deps: MessagesTabDeps): void {
  const { logger } = deps;
  const prompts = [...(deps.prompts ?? DEFAULT_SUGGESTED_PROMPTS)];

  app.event('assistant_thread_started', async ({ body }) => {
    const parsed = readInboundEvent('assistant_thread_started', AssistantThreadBody, body, logger);
    if (!parsed) return;
    const thread = parsed.event.assistant_thread;
    await offerPrompts(deps, prompts, thread.channel_id, thread.thread_ts);
    await keep(
      deps,
      { thread: threadKey(parsed.team_id ?? deps.teamId(), thread.channel_id, thread.thread_ts) },
      thread.context?.channel_id,
    );
  });

  app.event('assistant_thread_context_changed', async ({ body }) => {
    const parsed = readInboundEvent('assistant_thread_context_changed', AssistantThreadBody, body, logger);
    if (!parsed) return;
    const thread = parsed.event.assistant_thread;
    await keep(
      deps,
      { thread: threadKey(parsed.team_id ?? deps.teamId(), thread.channel_id, thread.thread_ts) },
      thread.context?.channel_id,
    );
  });

  app.event('app_home_opened', async ({ body }) => {
    const parsed = readInboundEvent('app_home_opened', AppHomeOpenedBody, body, logger);
    // The Home tab is off in the manifest; only the Messages tab greets.
    if (!parsed || parsed.event.tab !== 'messages') return;
    await offerPrompts(deps, prompts, parsed.event.channel);
  });

  app.event('app_context_changed', async ({ body }) => {
    const parsed = readInboundEvent('app_context_changed', AppContextChangedBody, body, logger);
    if (!parsed) return;
    const humans = (parsed.authorizations ?? []).filter(
      (authorization) => authorization.is_bot === false && authorization.user_id,
    );
    const userId = parsed.event.user ?? (humans.length === 1 ? humans[0]!.user_id : undefined);
    if (!userId) return;
    const person = { platform: 'slack', workspace: parsed.team_id ?? deps.teamId(), userId };
    const entity = parsed.event.context?.entities?.find((candidate): candidate is Entity => candidate !== undefined);
    await keepDescription(deps, { person }, entity ? describeEntity(entity) : undefined);
  });
}

/** Prompts for one thread (the assistant container) or for the whole tab (`threadTs` absent). */
async function offerPrompts(
  deps: MessagesTabDeps,
  prompts: SuggestedPrompt[],
  channel: string,
  threadTs?: string,
): Promise<void> {
  try {
    await deps.client.assistant.threads.setSuggestedPrompts({
      channel_id: channel,
      ...(threadTs ? { thread_ts: threadTs } : {}),
      title: PROMPTS_TITLE,
      prompts,
    });
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not offer the suggested prompts in the Messages tab');
  }
}

async function keep(
  deps: MessagesTabDeps,
  scope: Parameters<ViewingContexts['set']>[0],
  channelId: string | undefined,
): Promise<void> {
  await keepDescription(deps, scope, channelId ? describeChannel(channelId) : undefined);
}

async function keepDescription(
  deps: MessagesTabDeps,
  scope: Parameters<ViewingContexts['set']>[0],
  description: string | undefined,
): Promise<void> {
  try {
    await deps.viewing.set(scope, description);
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not keep what the person is viewing');
  }
}

type Entity = Exclude<z.output<typeof ContextEntity>, undefined>;

function describeEntity(entity: Entity): string {
  switch (entity.type) {
    case 'slack#/types/channel_id':
      return describeChannel(entity.value);
    case 'slack#/types/message_context':
      return describeWhat(`a message in the channel <#${entity.value.channel_id}>`);
    case 'slack#/types/canvas_id':
      return describeWhat(`a canvas (${entity.value})`);
    case 'slack#/types/list_id':
      return describeWhat(`a list (${entity.value})`);
  }
}

function describeChannel(channelId: string): string {
  return describeWhat(`the channel <#${channelId}>`);
}

/** Built from checked ids only: nothing a person typed reaches the model this way. */
function describeWhat(what: string): string {
  return `In Slack, the person writing is viewing ${what} beside this conversation. That is context only: you have not read it and cannot see its content, so do not claim to know what it says.`;
}

function threadKey(workspace: string, channel: string, thread: string): SessionKey {
  return { platform: 'slack', workspace, channel, thread };
}

/** A person writes in their DM with the bot: the view Slack last reported for them becomes the thread's context. */
export async function carryViewing(
  viewing: ViewingContexts,
  thread: SessionKey,
  userId: string,
  logger: EngineLogger,
): Promise<void> {
  try {
    await viewing.carryPersonal(thread, { platform: 'slack', workspace: thread.workspace, userId });
  } catch (error) {
    logger.warn({ err: error }, 'could not carry what the person is viewing into the thread');
  }
}
