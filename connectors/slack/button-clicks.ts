// The buttons on the bot's cards and notes: a prompt's choice (the shared prompt click,
// shared/prompt-click.ts, held to what the card or the Show all modal showed), Retry (the
// session layer's `controls.retry`, then the button is taken off its note) and Show all (the
// call's full text in a modal, show-all.ts). Acknowledged first; a refusal or a stale click is
// answered to the clicker alone: ephemerally, or from a modal (no response_url) in the card's
// thread.
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionRecord } from '../../src/sessions/thread-records.js';
import type { CallText } from '../shared/call-arguments.js';
import { answerPromptClick } from '../shared/prompt-click.js';
import type { ThreadPresenter } from '../shared/thread-presenter.js';
import {
  ACTION_PATTERN,
  decodeValue,
  PROMPT_ACTION,
  PromptValueSchema,
  RETRY_ACTION,
  SessionValueSchema,
  SHOW_ALL_ACTION,
} from './actions.js';
import { slackCardHoldsAll } from './approval-card.js';
import { fitsInModal, fullTextModalOf } from './approval-modal.js';
import { firstSectionText, readInbound, type ButtonClick } from './inbound-events.js';
import { showAll } from './show-all.js';

export interface ButtonClickDeps {
  client: WebClient;
  core: Pick<Core, 'manager'>;
  logger: EngineLogger;
  grantScope?: 'thread' | 'channel';
  presenterFor: (session: SessionRecord) => ThreadPresenter;
  /** The full text a live thread presenter holds for a card's call, if it has it. */
  cardText: (sessionId: string, toolCallId: string) => CallText | undefined;
  /** A private answer to one person in a thread. */
  whisper: (channel: string, user: string, threadTs: string, text: string) => Promise<void>;
}

type Say = (text: string) => Promise<void>;

export function listenForButtons(app: App, deps: ButtonClickDeps): void {
  const { logger } = deps;
  app.action(ACTION_PATTERN, async ({ ack, body, respond }) => {
    await ack();
    const click = readInbound('block_actions', body, logger);
    if (!click) return;
    const userId = click.user.id;
    const [{ action_id: actionId, value }] = click.actions;
    const modal = fullTextModalOf(click);
    const say: Say = async (text) => {
      // A click in a modal has no response_url: its private answer goes to the card's thread.
      if (modal) return deps.whisper(modal.channel, userId, modal.thread, text);
      if (!click.response_url)
        return logger.warn({ actionId }, 'a click came without a response_url: its answer is not shown');
      await respond({ response_type: 'ephemeral', replace_original: false, text }).catch((error: unknown) =>
        logger.warn({ err: error }, 'could not answer a click privately'),
      );
    };
    if (actionId.startsWith(PROMPT_ACTION))
      await onPromptClick(deps, decodeValue(PromptValueSchema, value), userId, say, modal?.call);
    else if (actionId === RETRY_ACTION)
      await onRetryClick(deps, decodeValue(SessionValueSchema, value), userId, click, say);
    else if (actionId === SHOW_ALL_ACTION)
      await showAll(
        {
          client: deps.client,
          records: deps.core.manager.records,
          logger,
          cardText: deps.cardText,
          grantScope: deps.grantScope,
        },
        body,
        say,
      );
  });
}

/** `fullViewOf`: the call whose Show all modal the click was made in (undefined for a click on a card). */
async function onPromptClick(
  deps: ButtonClickDeps,
  value: { item: string; choice: string } | undefined,
  userId: string,
  say: Say,
  fullViewOf?: string,
): Promise<void> {
  if (!value) return say('That button is not one I recognise.');
  await answerPromptClick(deps.core, deps.presenterFor, { item: value.item, choice: value.choice, userId }, say, {
    ...(fullViewOf ? { fullViewOf } : {}),
    cardHoldsAll: (_call, view) => slackCardHoldsAll(view),
    // A call too long for a modal shows there only in part: it cannot be approved from Slack.
    fullViewHoldsAll: (call) => fitsInModal(call),
  });
}

async function onRetryClick(
  deps: ButtonClickDeps,
  value: { session: string } | undefined,
  userId: string,
  click: ButtonClick,
  say: Say,
): Promise<void> {
  if (!value) return say('That button is not one I recognise.');
  const result = await deps.core.manager.controls.retry(value.session, userId);
  if (result.status === 'refused') return say(result.reason);
  if (result.status === 'busy') return say('I am already working in this thread.');
  if (result.status !== 'done') return say('There is nothing to retry here any more.');
  // The button has done its job: take it off the note.
  const { container } = click;
  // Keep the note's own sentence (its first section), not just the notification fallback.
  const text = firstSectionText(click) ?? click.message?.text ?? 'Retrying';
  if (container?.channel_id && container.message_ts) {
    await deps.client.chat
      .update({
        channel: container.channel_id,
        ts: container.message_ts,
        text,
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `${text} — retried by <@${userId}>` } }],
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not update the retry note'));
  }
}
