// Self-tests of what FakeSlack checks in feedback blocks and modal inputs (slack-block-checks.ts),
// through the real WebClient: the bot's own 👍 / 👎 block and reason modal pass, and each of
// Slack's limits is refused the way Slack refuses it (invalid_blocks / invalid_arguments).
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { feedbackBlock, reasonModal } from '../../connectors/slack/feedback-blocks.js';
import { nextTs, SLACK_IDS } from './slack-payloads.js';
import { FakeSlack } from './slack-server.js';

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

async function client(): Promise<webApi.WebClient> {
  fake = await new FakeSlack().start();
  return new webApi.WebClient('xoxb-test', { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
}

const C = SLACK_IDS.channelId;
const triggerId = () => `1337.${Date.now()}.abcdef0123456789`;

/** The bot's block with one change made to its feedback_buttons element. */
function changed(edit: (element: Record<string, unknown>) => void): Record<string, unknown> {
  const block = structuredClone(feedbackBlock()) as unknown as { elements: Record<string, unknown>[] };
  edit(block.elements[0]!);
  return block;
}

async function refusal(call: Promise<unknown>): Promise<{ error?: string; messages?: string[] }> {
  try {
    await call;
  } catch (error) {
    const data = (error as { data?: { error?: string; response_metadata?: { messages?: string[] } } }).data;
    return {
      ...(data?.error ? { error: data.error } : {}),
      ...(data?.response_metadata?.messages ? { messages: data.response_metadata.messages } : {}),
    };
  }
  return {};
}

describe('FakeSlack checks context_actions / feedback_buttons as Slack does', () => {
  it('accepts the bot’s block on postMessage, update and stopStream', async () => {
    const web = await client();
    const root = nextTs();
    const posted = await web.chat.postMessage({
      channel: C,
      thread_ts: root,
      text: 'answer',
      blocks: [feedbackBlock()],
    });
    await web.chat.update({ channel: C, ts: posted.ts!, text: 'answer', blocks: [feedbackBlock()] });
    const stream = await web.chat.startStream({
      channel: C,
      thread_ts: root,
      markdown_text: 'hi',
      recipient_team_id: SLACK_IDS.teamId,
      recipient_user_id: SLACK_IDS.humanUserId,
    });
    await web.chat.stopStream({ channel: C, ts: stream.ts!, blocks: [feedbackBlock()] });
    expect(fake!.message(C, stream.ts!)!.blocks).toEqual([feedbackBlock()]);
  });

  it('refuses a button text over 75, a value over 2,000, a missing button, an unknown element and more than 5 elements', async () => {
    const web = await client();
    const cases: Record<string, unknown> = {
      text: changed((e) => ((e.positive_button as { text: { text: string } }).text.text = 'x'.repeat(76))),
      value: changed((e) => ((e.negative_button as { value: string }).value = 'x'.repeat(2001))),
      label: changed(
        (e) => ((e.negative_button as { accessibility_label: string }).accessibility_label = 'x'.repeat(76)),
      ),
      missing: changed((e) => delete e.negative_button),
      element: changed((e) => (e.type = 'button')),
      many: {
        type: 'context_actions',
        elements: Array.from({ length: 6 }, () => (feedbackBlock() as unknown as { elements: unknown[] }).elements[0]),
      },
    };
    for (const [name, block] of Object.entries(cases)) {
      const refused = await refusal(web.chat.postMessage({ channel: C, text: 'answer', blocks: [block as never] }));
      expect(refused.error, name).toBe('invalid_blocks');
      expect(refused.messages?.join(' '), name).toMatch(/json-pointer:\/blocks\/0/);
    }
    const posted = await web.chat.postMessage({ channel: C, text: 'answer' });
    expect(
      (await refusal(web.chat.update({ channel: C, ts: posted.ts!, text: 'a', blocks: [cases.value as never] }))).error,
    ).toBe('invalid_blocks');
    const stream = await web.chat.startStream({
      channel: C,
      thread_ts: posted.ts!,
      markdown_text: 'hi',
      recipient_team_id: SLACK_IDS.teamId,
      recipient_user_id: SLACK_IDS.humanUserId,
    });
    expect(
      (await refusal(web.chat.stopStream({ channel: C, ts: stream.ts!, blocks: [cases.text as never] }))).error,
    ).toBe('invalid_blocks');
    // Refused means refused: the stream is still open.
    expect(fake!.message(C, stream.ts!)!.stream?.state).toBe('streaming');
  });

  it('accepts the reason modal; refuses inputs without a submit button, and context_actions in a modal', async () => {
    const web = await client();
    const modal = reasonModal({ channel: C, ts: '1.000001', thread: '1.000001' });
    await web.views.open({ trigger_id: triggerId(), view: modal });
    const { submit: _submit, ...withoutSubmit } = modal;
    expect(await refusal(web.views.open({ trigger_id: triggerId(), view: withoutSubmit }))).toMatchObject({
      error: 'invalid_arguments',
      messages: [expect.stringContaining('submit')],
    });
    expect(
      (
        await refusal(
          web.views.open({
            trigger_id: triggerId(),
            view: { ...modal, blocks: [...modal.blocks, feedbackBlock() as never] },
          }),
        )
      ).error,
    ).toBe('invalid_arguments');
  });
});
