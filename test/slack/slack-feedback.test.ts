// Feedback on answers, through the real bot (Bolt in HTTP mode, FakeSlack, the real core and
// the real OpenAI SDK against FakeOpenAI): a completed turn's final answer carries 👍 / 👎
// (`context_actions` + `feedback_buttons`, which FakeSlack checks against Slack's limits),
// in stopStream's blocks when streaming natively and in the last chat.update otherwise; a
// stopped or failed turn's text does not. A click counts once per person per answer, is
// answered privately, and a 👎 opens a modal whose reason is kept (masked). `/feedback`
// shows admins the totals and refuses everyone else privately.
import { afterEach, describe, expect, it } from 'vitest';
import { FEEDBACK_ACTION } from '../../connectors/slack/actions.js';
import { FEEDBACK_REASON_CALLBACK, REASON_ACTION_ID, REASON_BLOCK_ID } from '../../connectors/slack/feedback-blocks.js';
import { blockActions, SLACK_IDS } from '../fakes/slack-payloads.js';
import type { StoredMessage } from '../fakes/slack-server.js';
import { sendInteraction } from '../fakes/slack-signer.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, SECRET, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';
const CAROL = 'U0HUMAN003';

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const botMessages = (b: SlackBot, root: string): StoredMessage[] =>
  b.slack.thread(C, root).filter((m) => m.user === SLACK_IDS.botUserId);

/** The feedback_buttons element of a message's blocks, if it has one. */
function feedbackButtons(message: StoredMessage | undefined): Record<string, unknown> | undefined {
  for (const block of (message?.blocks ?? []) as { type?: string; elements?: Record<string, unknown>[] }[]) {
    if (block.type !== 'context_actions') continue;
    const element = block.elements?.find((e) => e.type === 'feedback_buttons');
    if (element) return element;
  }
  return undefined;
}

/** One completed turn: returns the thread root and the answer message (the last bot message). */
async function answeredTurn(b: SlackBot, text = 'The answer is 42.'): Promise<{ root: string; answer: StoredMessage }> {
  b.llm.replyText(text);
  const root = await b.mention('what is the answer?');
  await waitFor(() => b.llm.requests.length >= 1);
  await b.idle();
  const answer = botMessages(b, root).at(-1)!;
  expect(answer.text).toContain(text.slice(0, 10));
  return { root, answer };
}

/** The private answer to a click: its response_url post's text. */
async function answerTo(b: SlackBot, responseId: string): Promise<string> {
  const post = await b.slack.waitForResponse(responseId, 8_000);
  expect(post.body).toMatchObject({ response_type: 'ephemeral' });
  return (post.body as { text: string }).text;
}

describe('the buttons under an answer', () => {
  it('natively streamed: a completed turn’s answer carries 👍 / 👎 in chat.stopStream’s blocks, with the usage footer', async () => {
    bot = await bootSlackBot();
    const { answer } = await answeredTurn(bot);
    const stop = bot.slack.callsOf('chat.stopStream').at(-1)!;
    const blocks = stop.args.blocks as { type: string }[];
    expect(blocks.map((b) => b.type)).toEqual(['context', 'context_actions']);
    expect(feedbackButtons(answer)).toMatchObject({
      type: 'feedback_buttons',
      action_id: FEEDBACK_ACTION,
      positive_button: { text: { type: 'plain_text' }, value: 'up' },
      negative_button: { text: { type: 'plain_text' }, value: 'down' },
    });
  });

  it('posted and edited: the last chat.update of the answer carries them', async () => {
    bot = await bootSlackBot();
    bot.slack.failNext('chat.startStream', 'unknown_method');
    const { answer } = await answeredTurn(bot);
    expect(bot.slack.callsOf('chat.stopStream')).toHaveLength(0);
    const update = bot.slack
      .callsOf('chat.update')
      .filter((call) => call.args.ts === answer.ts)
      .at(-1)!;
    expect(JSON.stringify(update.args.blocks)).toContain('feedback_buttons');
    expect(feedbackButtons(answer)).toBeDefined();
  });

  it('a stopped turn’s text has none; the next completed turn’s answer has them', async () => {
    bot = await bootSlackBot();
    bot.llm.replyStallAfter(4, { text: 'I am halfway through a long explanation and then' });
    const root = await bot.mention('explain at length');
    await waitFor(() => botMessages(bot!, root).some((m) => m.text.includes('halfway')), 8_000);
    await bot.react(root, 'octagonal_sign');
    await bot.idle();
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Stopped')));
    const partial = botMessages(bot, root).find((m) => m.text.includes('halfway'))!;
    expect(feedbackButtons(partial)).toBeUndefined();
    expect(JSON.stringify(bot.slack.calls.map((call) => call.args.blocks ?? []))).not.toContain('feedback_buttons');
    bot.llm.replyText('Short version: it works.');
    await bot.reply(root, 'the short version then');
    await waitFor(() => bot!.llm.requests.length === 2);
    await bot.idle();
    const answer = botMessages(bot, root).find((m) => m.text.includes('Short version'))!;
    expect(feedbackButtons(answer)).toBeDefined();
    expect(feedbackButtons(bot.slack.message(C, partial.ts))).toBeUndefined();
  });

  it('a failed turn’s text has none; its retry’s answer has them', async () => {
    bot = await bootSlackBot();
    // Text, a tool round, then the provider fails: the turn ends in an error note with Retry.
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }], {
      text: 'Let me look at the folder first.',
    });
    bot.llm.replyError(500).replyError(500).replyError(500);
    const root = await bot.mention('question');
    await waitFor(
      () => bot!.slack.thread(C, root).some((m) => JSON.stringify(m.blocks ?? []).includes('agent_retry')),
      15_000,
    );
    await bot.idle();
    expect(botMessages(bot, root).some((m) => m.text.includes('Let me look at the folder first.'))).toBe(true);
    expect(JSON.stringify(bot.slack.calls.map((call) => call.args.blocks ?? []))).not.toContain('feedback_buttons');
    const note = bot.slack.thread(C, root).find((m) => JSON.stringify(m.blocks ?? []).includes('agent_retry'))!;
    bot.llm.replyText('Worked this time.');
    await bot.click(note.ts, { actionId: 'agent_retry' });
    await waitFor(() => botMessages(bot!, root).some((m) => m.text.includes('Worked this time.')), 8_000);
    await bot.idle();
    const buttoned = botMessages(bot, root).filter((m) => feedbackButtons(m) !== undefined);
    expect(buttoned.map((m) => m.text)).toEqual([expect.stringContaining('Worked this time.')]);
  });
});

describe('a click on them', () => {
  it('counts once per person: twice by one person is one vote, two people are two', async () => {
    bot = await bootSlackBot();
    const { answer } = await answeredTurn(bot);
    expect(await answerTo(bot, await bot.feedback(answer.ts, 'up'))).toMatch(/counted/);
    expect(await answerTo(bot, await bot.feedback(answer.ts, 'up'))).toMatch(/already counted/);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 1, down: 0 });
    await answerTo(bot, await bot.feedback(answer.ts, 'up', { user: BOB }));
    expect(await bot.core.feedback.totals()).toMatchObject({
      up: 2,
      down: 0,
      byModel: [{ model: 'openai:gpt-4.1', up: 2, down: 0 }],
    });
    // Changing one's mind replaces the vote.
    expect(await answerTo(bot, await bot.feedback(answer.ts, 'down', { user: BOB }))).toMatch(/changed/);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 1, down: 1 });
  });

  it('a 👎 opens a modal; the reason submitted is kept, masked, and said thanks for privately', async () => {
    bot = await bootSlackBot();
    const { root, answer } = await answeredTurn(bot);
    // A secret the bot holds (its Slack signing secret): the masker knows it.
    const secret = SECRET;
    expect(bot.core.mask(`x ${secret} y`)).not.toContain(secret);
    expect(await answerTo(bot, await bot.feedback(answer.ts, 'down'))).toMatch(/counted/);
    await waitFor(() => bot!.slack.views().length === 1);
    const opened = bot.slack.views()[0]!;
    expect(opened.view).toMatchObject({ type: 'modal', callback_id: FEEDBACK_REASON_CALLBACK });
    await bot.submitView(opened, {
      [REASON_BLOCK_ID]: { [REASON_ACTION_ID]: `It used the wrong token ${secret} and <!channel> too` },
    });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.user === ADA && e.text.includes('reason is recorded')));
    expect(bot.slack.ephemerals(C).find((e) => e.text.includes('reason is recorded'))!.threadTs).toBe(root);
    const totals = await bot.core.feedback.totals();
    expect(totals).toMatchObject({ up: 0, down: 1 });
    expect(totals.reasons).toHaveLength(1);
    expect(totals.reasons[0]!.reason).toContain('It used the wrong token');
    expect(totals.reasons[0]!.reason).not.toContain(secret);
  });

  it('a reason from someone without a 👎 on that answer is not kept', async () => {
    bot = await bootSlackBot();
    const { answer } = await answeredTurn(bot);
    await answerTo(bot, await bot.feedback(answer.ts, 'down'));
    await waitFor(() => bot!.slack.views().length === 1);
    const opened = bot.slack.views()[0]!;
    // Bob submits Ada's modal (a forged submission): he has no 👎 there.
    await bot.submitView(opened, { [REASON_BLOCK_ID]: { [REASON_ACTION_ID]: 'made up' } }, { user: BOB });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.user === BOB && e.text.includes('did not keep')));
    expect((await bot.core.feedback.totals()).reasons).toEqual([]);
  });

  it('on a message that is not a final answer it counts nothing and says so privately', async () => {
    bot = await bootSlackBot();
    const { root, answer } = await answeredTurn(bot);
    // A forged click: the answer's buttons, sent as if clicked on the thread's first message.
    const response = await sendInteraction(
      bot.url,
      SECRET,
      blockActions({
        actionType: 'feedback_buttons',
        actionId: FEEDBACK_ACTION,
        value: 'up',
        messageTs: root,
        responseUrl: bot.slack.responseUrl('forged'),
        messageBlocks: answer.blocks ?? [],
      }),
    );
    expect(response.status).toBe(200);
    expect(await answerTo(bot, 'forged')).toMatch(/no longer kept/);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 0, down: 0 });
  });

  it('from someone who may not use the bot it is refused privately', async () => {
    bot = await bootSlackBot({ env: { ALLOWED_USERS: `${ADA},${BOB}` } });
    const { answer } = await answeredTurn(bot);
    expect(await answerTo(bot, await bot.feedback(answer.ts, 'up', { user: CAROL }))).toMatch(/not on the list/);
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 0, down: 0 });
  });
});

describe('/feedback', () => {
  it('shows an admin the totals, privately; a member is told only admins can see them', async () => {
    bot = await bootSlackBot({ env: { ADMINS: BOB } });
    const { root, answer } = await answeredTurn(bot);
    await answerTo(bot, await bot.feedback(answer.ts, 'up'));
    await answerTo(bot, await bot.feedback(answer.ts, 'down', { user: BOB }));
    await waitFor(() => bot!.slack.views().length === 1);
    await bot.submitView(
      bot.slack.views()[0]!,
      { [REASON_BLOCK_ID]: { [REASON_ACTION_ID]: 'Too long & <b>wrong</b>' } },
      { user: BOB },
    );
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.user === BOB && e.text.includes('reason is recorded')));

    await bot.mention('/feedback', { threadTs: root });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.user === ADA && e.text.includes('Only the bot admins')));

    await bot.mention('/feedback', { threadTs: root, user: BOB });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.user === BOB && e.text.includes('Feedback on answers')));
    const shown = bot.slack.ephemerals(C).find((e) => e.user === BOB && e.text.includes('Feedback on answers'))!.text;
    expect(shown).toContain('1 👍 · 1 👎 (50% positive)');
    expect(shown).toContain('openai:gpt-4.1: 1 👍 · 1 👎');
    // The reason, escaped for mrkdwn.
    expect(shown).toContain('Too long &amp; &lt;b&gt;wrong&lt;/b&gt;');
    // Nothing of it went into the thread for everyone.
    expect(botMessages(bot, root).some((m) => m.text.includes('Feedback on answers'))).toBe(false);
  });
});

describe('malformed feedback payloads', () => {
  it('are acknowledged and dropped, never answered with an error', async () => {
    bot = await bootSlackBot();
    const { answer } = await answeredTurn(bot);
    for (const payload of [
      { type: 'view_submission', user: { id: ADA } },
      { type: 'view_submission', user: null, view: { callback_id: FEEDBACK_REASON_CALLBACK } },
      {
        type: 'view_submission',
        user: { id: ADA },
        view: { id: 'V1', callback_id: FEEDBACK_REASON_CALLBACK, private_metadata: 'not json', state: { values: {} } },
      },
      {
        type: 'view_submission',
        user: { id: ADA },
        view: {
          id: 'V1',
          callback_id: FEEDBACK_REASON_CALLBACK,
          private_metadata: JSON.stringify({ channel: C, ts: answer.ts, thread: answer.ts }),
          state: null,
        },
      },
      {
        ...blockActions({
          actionType: 'feedback_buttons',
          actionId: FEEDBACK_ACTION,
          value: 'up',
          messageTs: answer.ts,
          responseUrl: bot.slack.responseUrl('bad'),
        }),
        container: null,
      },
    ]) {
      const response = await sendInteraction(bot.url, SECRET, payload);
      expect(response.status, JSON.stringify(payload).slice(0, 80)).toBe(200);
    }
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 0, down: 0 });
    expect(bot.logs.lines.some((line) => /malformed feedback/.test(JSON.stringify(line)))).toBe(true);
  });
});
