// The harness's feedback gestures, kept out of slack-harness.ts: a click on a thumb of the
// `feedback_buttons` under an answer (a `block_actions` whose action is of type
// feedback_buttons and whose value is the clicked side's), and the submission of a modal the
// bot opened (`view_submission`), both signed and sent to the bot as Slack would.
import { blockActions, SLACK_IDS, viewSubmission } from '../fakes/slack-payloads.js';
import type { FakeSlack } from '../fakes/slack-server.js';
import { sendInteraction } from '../fakes/slack-signer.js';

interface FeedbackElement {
  type?: string;
  action_id?: string;
  positive_button?: { value?: string; text?: { text?: string } };
  negative_button?: { value?: string; text?: { text?: string } };
}

/** Click 👍 or 👎 on the message's feedback buttons (the test fails if it has none). */
export async function clickFeedback(
  bot: { slack: FakeSlack; url: string; secret: string; responseId: string },
  messageTs: string,
  vote: 'up' | 'down',
  options: { user?: string; channel?: string },
): Promise<string> {
  const response = await sendInteraction(
    bot.url,
    bot.secret,
    feedbackClick(bot.slack, messageTs, vote, { ...options, responseUrl: bot.slack.responseUrl(bot.responseId) }),
  );
  if (response.status !== 200) throw new Error(`the feedback click got ${response.status}`);
  return bot.responseId;
}

/** The `block_actions` Slack sends for a click on 👍 or 👎 of the message's feedback buttons (the test fails if it has none). */
export function feedbackClick(
  slack: FakeSlack,
  messageTs: string,
  vote: 'up' | 'down',
  options: { user?: string; channel?: string; responseUrl: string },
) {
  const channel = options.channel ?? SLACK_IDS.channelId;
  const message = slack.message(channel, messageTs);
  if (!message) throw new Error(`no message ${messageTs}`);
  const blocks = (message.blocks ?? []) as { type?: string; block_id?: string; elements?: FeedbackElement[] }[];
  const block = blocks.find(
    (b) => b.type === 'context_actions' && (b.elements ?? []).some((e) => e.type === 'feedback_buttons'),
  );
  const element = block?.elements?.find((e) => e.type === 'feedback_buttons');
  if (!block || !element?.action_id)
    throw new Error(`no feedback buttons on ${messageTs}: ${JSON.stringify(message.blocks)}`);
  const button = vote === 'up' ? element.positive_button : element.negative_button;
  return blockActions({
    actionType: 'feedback_buttons',
    actionId: element.action_id,
    value: button?.value ?? '',
    buttonText: button?.text?.text ?? vote,
    ...(block.block_id ? { blockId: block.block_id } : {}),
    messageTs,
    channel,
    user: options.user ?? SLACK_IDS.humanUserId,
    responseUrl: options.responseUrl,
    messageText: message.text,
    ...(message.threadTs ? { threadTs: message.threadTs } : {}),
    messageBlocks: message.blocks ?? [],
  });
}

/** Submit a modal the bot opened, as the person `options.user` (default Ada). */
export async function submitView(
  bot: { url: string; secret: string },
  opened: { id: string; view: Record<string, unknown> },
  values: Record<string, Record<string, string | null>>,
  options: { user?: string },
): Promise<void> {
  const payload = viewSubmission({
    view: opened.view,
    viewId: opened.id,
    values,
    ...(options.user ? { user: options.user } : {}),
  });
  const response = await sendInteraction(bot.url, bot.secret, payload);
  if (response.status !== 200) throw new Error(`the view submission got ${response.status}: ${response.body}`);
}
