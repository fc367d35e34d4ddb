// What a Slack user sees when the bot asks them something, end to end (the real Bolt app,
// signed requests, FakeSlack, the real core and the real OpenAI SDK against FakeOpenAI):
// a question with one button per option or a free-text reply, a plan to approve, a
// directory to grant; a stop while a card waits for a decision; and the step limit with
// its Continue button.
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION, RETRY_ACTION } from '../../connectors/slack/actions.js';
import { blockActions, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendInteraction } from '../fakes/slack-signer.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { bootSlackBot, SECRET, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;

let bot: SlackBot | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface WireMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string } }[];
}
const messagesOf = (b: SlackBot, i: number) => (b.llm.requests[i]!.body as { messages: WireMessage[] }).messages;

/** The tool result the model received in request `i` for the (only) call of `tool`. */
function toolResultIn(b: SlackBot, i: number, tool: string): string {
  const messages = messagesOf(b, i);
  const call = messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.function.name === tool);
  if (!call) throw new Error(`no ${tool} call in request ${i}`);
  const result = messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id);
  if (!result) throw new Error(`no result for ${tool} in request ${i}`);
  return String(result.content);
}

/** The buttons of a message, as Slack shows them. */
function buttonsOf(b: SlackBot, ts: string): { text: string; action_id: string; value: string }[] {
  const blocks = (b.slack.message(C, ts)?.blocks ?? []) as {
    type: string;
    elements?: { type: string; text?: { text: string }; action_id?: string; value?: string }[];
  }[];
  return blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements ?? [])
    .filter((e) => e.type === 'button')
    .map((e) => ({ text: e.text?.text ?? '', action_id: e.action_id ?? '', value: e.value ?? '' }));
}

const cardText = (b: SlackBot, ts: string) => JSON.stringify(b.slack.message(C, ts)?.blocks ?? []);

describe('the bot asks a question', () => {
  it('the question shows on its card with one button per option, and clicking one answers it', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([
      {
        name: 'ask_user',
        arguments: { question: 'Which environment should I deploy to?', options: ['staging', 'production'] },
      },
    ]);
    bot.llm.replyText('Deploying to staging.');
    const root = await bot.mention('deploy the app');
    const card = await waitForCard(bot, root, 'ask_user', (text) => text.includes(PROMPT_ACTION));
    expect(JSON.stringify(card.blocks)).toContain('Which environment should I deploy to?');
    expect(buttonsOf(bot, card.ts).map((b) => b.text)).toEqual(['staging', 'production']);

    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'staging' });
    await waitFor(() => bot!.llm.requests.length === 2, 8000);
    await bot.idle();
    expect(JSON.parse(toolResultIn(bot, 1, 'ask_user'))).toEqual({ answer: 'staging' });
    // The card loses its buttons and says who answered what.
    expect(buttonsOf(bot, card.ts)).toEqual([]);
    expect(cardText(bot, card.ts)).toContain(`Answered \\"staging\\" by <@${ADA}>`);
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Deploying to staging.')));
  });

  it('a reply in the thread answers the question instead of steering', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([
      { name: 'ask_user', arguments: { question: 'What should the release be called?', options: ['v2', 'v3'] } },
    ]);
    bot.llm.replyText('Calling it Aurora.');
    const root = await bot.mention('cut a release');
    const card = await waitForCard(bot, root, 'ask_user', (text) => text.includes(PROMPT_ACTION));

    const reply = await bot.reply(root, 'call it Aurora');
    await waitFor(() => bot!.llm.requests.length === 2, 8000);
    await bot.idle();
    // The reply is marked as taken.
    await waitFor(() => bot!.slack.reactionsOn(C, reply).some((r) => r.name === 'white_check_mark'));
    expect(JSON.parse(toolResultIn(bot, 1, 'ask_user'))).toEqual({ answer: 'call it Aurora' });
    // Consumed as the answer: it is not also injected as a user message.
    const users = messagesOf(bot, 1).filter((m) => m.role === 'user');
    expect(users).toHaveLength(1);
    expect(String(users[0]!.content)).toMatch(/^cut a release/);
    expect(bot.llm.requests).toHaveLength(2);
    expect(buttonsOf(bot, card.ts)).toEqual([]);
  });
});

describe('the bot proposes a plan or asks for a directory', () => {
  it('a plan shows with Approve plan / Reject; Approve plan lets the model go ahead', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([
      { name: 'propose_plan', arguments: { plan: '1. Back up the database\n2. Run the migration' } },
    ]);
    bot.llm.replyText('Plan approved, starting.');
    const root = await bot.mention('migrate the database');
    const card = await waitForCard(bot, root, 'propose_plan', (text) => text.includes(PROMPT_ACTION));
    expect(JSON.stringify(card.blocks)).toContain('Back up the database');
    expect(buttonsOf(bot, card.ts).map((b) => b.text)).toEqual(['Approve plan', 'Reject']);

    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'approve' });
    await waitFor(() => bot!.llm.requests.length === 2, 8000);
    await bot.idle();
    expect(JSON.parse(toolResultIn(bot, 1, 'propose_plan'))).toEqual({ approved: true });
    expect(cardText(bot, card.ts)).toContain(`Plan approved by <@${ADA}>`);
  });

  it('a directory request shows Grant access / Deny; Deny tells the model no', async () => {
    bot = await bootSlackBot();
    const nginx = await tempDir();
    cleanups.push(nginx.remove);
    bot.llm.replyToolCalls([
      { name: 'request_directory', arguments: { path: nginx.path, reason: 'to read the proxy config' } },
    ]);
    bot.llm.replyText('Understood, I will not look there.');
    const root = await bot.mention('check the proxy config');
    const card = await waitForCard(bot, root, 'request_directory', (text) => text.includes(PROMPT_ACTION));
    expect(buttonsOf(bot, card.ts).map((b) => b.text)).toEqual(['Grant access', 'Deny']);
    expect(JSON.stringify(card.blocks)).toContain('the shell (inside its sandbox) read and write that folder');

    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'deny' });
    await waitFor(() => bot!.llm.requests.length === 2, 8000);
    await bot.idle();
    expect(JSON.parse(toolResultIn(bot, 1, 'request_directory'))).toEqual({ granted: false });
    expect(cardText(bot, card.ts)).toContain(`Denied by <@${ADA}>`);
  });
});

describe('stopping while a card waits for a decision', () => {
  it('🛑 on the tool card ends the turn, closes the card, and a late click on it is answered privately', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'prod.env', content: 'X=1' } }]);
    const root = await bot.mention('write the prod env file');
    const card = await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    const approve = buttonsOf(bot, card.ts).find((b) => b.text === 'Approve')!;

    await bot.react(card.ts, 'octagonal_sign');
    await bot.idle();
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text === 'Stopped'));
    expect(JSON.stringify(bot.slack.thread(C, root).map((m) => m.blocks))).toContain(`Stopped by <@${ADA}>`);
    await waitFor(() => buttonsOf(bot!, card.ts).length === 0);
    expect(cardText(bot, card.ts)).toContain('Closed: the turn was stopped');
    // The model was not called again, and the file was never written.
    expect(bot.llm.requests).toHaveLength(1);

    // A click that was already on its way (the old button, as Slack would still send it).
    const late = await sendInteraction(
      bot.url,
      SECRET,
      blockActions({
        actionId: approve.action_id,
        value: approve.value,
        messageTs: card.ts,
        channel: C,
        user: ADA,
        responseUrl: bot.slack.responseUrl('late'),
      }),
    );
    expect(late.status).toBe(200);
    const answer = await bot.slack.waitForResponse('late');
    expect(answer.body).toMatchObject({
      response_type: 'ephemeral',
      text: `Stopped by <@${ADA}> before anyone answered.`,
    });
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(1);
    expect(cardText(bot, card.ts)).toContain('Closed: the turn was stopped');
    expect(cardText(bot, card.ts)).not.toContain('Approved');
  });
});

describe('the step limit', () => {
  it('after MAX_ITERATIONS model calls the thread gets a Continue button, and Continue runs another round', async () => {
    bot = await bootSlackBot({ env: { MAX_ITERATIONS: '2' } });
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }]);
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }]);
    const root = await bot.mention('look around the workspace');
    await waitFor(
      () => bot!.slack.thread(C, root).some((m) => JSON.stringify(m.blocks ?? []).includes(RETRY_ACTION)),
      8000,
    );
    await bot.idle();
    expect(bot.llm.requests).toHaveLength(2);
    const note = bot.slack.thread(C, root).find((m) => JSON.stringify(m.blocks ?? []).includes(RETRY_ACTION))!;
    expect(JSON.stringify(note.blocks)).toContain('I used the 2 model calls allowed for one request. Continue?');
    expect(buttonsOf(bot, note.ts).map((b) => b.text)).toEqual(['Continue']);

    bot.llm.replyText('The workspace is empty.');
    await bot.click(note.ts, { actionId: RETRY_ACTION });
    await waitFor(() => bot!.llm.requests.length === 3, 8000);
    await bot.idle();
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('The workspace is empty.')));
    // The third call carries both list_dir rounds; the note lost its button.
    expect(messagesOf(bot, 2).filter((m) => m.role === 'tool')).toHaveLength(2);
    expect(buttonsOf(bot, note.ts)).toEqual([]);
    expect(JSON.stringify(bot.slack.message(C, note.ts)!.blocks)).toMatch(
      new RegExp(`I used the 2 model calls allowed for one request. Continue\\? — retried by <@${ADA}>`),
    );
  });
});
