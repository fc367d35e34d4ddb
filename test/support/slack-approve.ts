// Approve on a Slack approval card, as a person clicks it: the button read off the card the
// fake Slack holds, and the block_actions payload Slack would send for that click.
import { blockActions, SLACK_IDS } from '../fakes/slack-payloads.js';
import type { FakeSlack, StoredMessage } from '../fakes/slack-server.js';
import { sendInteraction } from '../fakes/slack-signer.js';

/** The Approve (once) button of an approval card, if the message is one that still offers it. */
export function approveButtonOf(message: StoredMessage): { value: string; actionId: string } | undefined {
  const blocks = (message.blocks ?? []) as {
    type?: string;
    elements?: { type?: string; action_id?: string; value?: string }[];
  }[];
  const button = blocks
    .flatMap((block) => (block.type === 'actions' ? (block.elements ?? []) : []))
    .find((element) => element.action_id === 'agent_prompt:once');
  return button?.value !== undefined && button.action_id !== undefined
    ? { value: button.value, actionId: button.action_id }
    : undefined;
}

/** Clicks Approve on `card` (in the thread of `threadTs`), signed with `secret`, to the bot at `eventsUrl`; Slack's HTTP status for it. */
export async function clickApprove(
  slack: FakeSlack,
  eventsUrl: string,
  secret: string,
  card: StoredMessage,
  threadTs: string,
): Promise<number> {
  const button = approveButtonOf(card);
  if (!button) throw new Error(`message ${card.ts} offers no Approve button`);
  const click = blockActions({
    actionId: button.actionId,
    value: button.value,
    messageTs: card.ts,
    threadTs,
    channel: SLACK_IDS.channelId,
    responseUrl: slack.responseUrl(`approve-${card.ts}`),
    messageText: card.text,
    ...(card.blocks ? { messageBlocks: card.blocks } : {}),
  });
  return (await sendInteraction(eventsUrl, secret, click)).status;
}
