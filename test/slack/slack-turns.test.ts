// What a Slack user sees, end to end: the real Bolt app, signed requests, the fake Web
// API, the real core and the real OpenAI SDK against a fake server.
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION, RETRY_ACTION } from '../../connectors/slack/actions.js';
import type { Message } from '../../src/engine/index.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

type Body = { messages: { role: string; content?: unknown; tool_call_id?: string }[] };
const bodyOf = (b: SlackBot, i: number) => b.llm.requests[i]!.body as Body;

async function transcript(b: SlackBot, threadTs: string, channel = C): Promise<Message[]> {
  const id = (await b.core.store.listSessionIds()).find((s) =>
    s.endsWith(`:${encodeURIComponent(channel)}:${encodeURIComponent(threadTs)}`),
  );
  return id ? b.core.store.loadTranscript(id) : [];
}

describe('a mention starts a conversation in its thread', () => {
  it('the text reaches the model without the bot mention, with other mentions as names, and carries its source', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('Hello Ada! I will ask Bob.');
    const root = await bot.mention(`please loop in <@${BOB}> on this`);
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();
    const user = bodyOf(bot, 0).messages.find((m) => m.role === 'user')!;
    expect(String(user.content)).toMatch(/^please loop in @bob on this/);
    expect(String(user.content)).not.toContain(SLACK_IDS.botUserId);
    const stored = await transcript(bot, root);
    expect(stored[0]).toMatchObject({
      role: 'user',
      source: {
        platform: 'slack',
        workspace: SLACK_IDS.teamId,
        channel: C,
        thread: root,
        userId: ADA,
        userName: 'ada',
        messageId: root,
        permalink: `https://fake-team.slack.com/archives/${C}/p${root.replace('.', '')}`,
      },
    });
    // The answer streams into the thread under the mention.
    const answer = bot.slack.thread(C, root).find((m) => m.user === SLACK_IDS.botUserId)!;
    expect(answer.text).toContain('Hello Ada!');
    expect(bot.slack.callsOf('chat.startStream')[0]!.args).toMatchObject({
      channel: C,
      thread_ts: root,
      recipient_user_id: ADA,
      recipient_team_id: SLACK_IDS.teamId,
    });
    expect(bot.slack.callsOf('chat.stopStream')).toHaveLength(1);
    // The person's message is marked as received.
    expect(bot.slack.reactionsOn(C, root).map((r) => r.name)).toContain('eyes');
  });

  it('a DM works the same way, with a native "is thinking" status (where the workspace has no agent sessions)', async () => {
    bot = await bootSlackBot();
    bot.slack.agentSessions.refuse('unknown_method');
    bot.llm.replyText('Hi in the DM.');
    const ts = await bot.dm('hello there');
    await waitFor(() => bot!.slack.callsOf('chat.stopStream').length === 1);
    await bot.idle();
    expect(String(bodyOf(bot, 0).messages.at(-1)!.content)).toMatch(/^hello there/);
    expect(bot.slack.callsOf('assistant.threads.setStatus')[0]!.args).toMatchObject({
      channel_id: SLACK_IDS.dmChannelId,
      thread_ts: ts,
      status: 'is thinking…',
    });
  });

  it('Slack retries and the app_mention + message pair start one turn, not two', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('once');
    const root = await bot.mention('hello', { eventId: 'EvSAME' });
    // The retry of the same event, and the `message` event Slack sends for the same mention.
    const { sendEvent } = await import('../fakes/slack-signer.js');
    const { eventCallback, appMention } = await import('../fakes/slack-payloads.js');
    const again = appMention({ text: 'hello', ts: root, user: ADA });
    await sendEvent(bot.url, 'test-signing-secret', eventCallback(again, { eventId: 'EvSAME' }), {
      retryNum: 1,
      retryReason: 'http_timeout',
    });
    await sendEvent(
      bot.url,
      'test-signing-secret',
      eventCallback({ ...again, type: 'message' } as never, { eventId: 'EvOTHER' }),
    );
    await bot.barrier();
    expect(bot.llm.requests).toHaveLength(1);
  });

  it('other bots and the bot itself never start a turn', async () => {
    bot = await bootSlackBot();
    const { sendEvent } = await import('../fakes/slack-signer.js');
    const { eventCallback, botMessage } = await import('../fakes/slack-payloads.js');
    await sendEvent(
      bot.url,
      'test-signing-secret',
      eventCallback(botMessage({ text: `<@${SLACK_IDS.botUserId}> hi`, bot: 'other' })),
    );
    await sendEvent(
      bot.url,
      'test-signing-secret',
      eventCallback(botMessage({ text: 'echo of my own post', bot: 'self' })),
    );
    await bot.barrier();
    expect(bot.llm.requests).toHaveLength(0);
    expect(await bot.core.store.listSessionIds()).toEqual([]);
  });
});

describe('replies in the thread', () => {
  it('while the bot works a reply is queued (👀) then injected (✅); when idle a reply starts the next turn', async () => {
    bot = await bootSlackBot();
    // The first call is held until the reply is queued: the reply lands while the bot works, however slow the machine.
    const firstCall = bot.llm.replyAnswerHeld({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    bot.llm.replyText('Done, using staging.');
    const root = await bot.mention('deploy the app');
    await waitFor(() => bot!.llm.requests.length >= 1);
    const reply = await bot.reply(root, 'use staging please');
    await waitFor(() => bot!.slack.reactionsOn(C, reply).some((r) => r.name === 'eyes'));
    firstCall.release();
    await waitFor(() => bot!.llm.requests.length === 2, 8000);
    await bot.idle();
    expect(bodyOf(bot, 1).messages.at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringContaining('use staging please'),
    });
    await waitFor(() => bot!.slack.reactionsOn(C, reply).some((r) => r.name === 'white_check_mark'));
    expect(bot.slack.reactionsOn(C, reply).map((r) => r.name)).toEqual(
      expect.arrayContaining(['eyes', 'white_check_mark']),
    );

    bot.llm.replyText('Second answer.');
    await bot.reply(root, 'and now?');
    await waitFor(() => bot!.llm.requests.length === 3);
    await bot.idle();
    expect(bodyOf(bot, 2).messages.filter((m) => m.role === 'user')).toHaveLength(3);
  });

  it("a plain channel message outside the bot's threads is ignored", async () => {
    bot = await bootSlackBot();
    await bot.reply('1700000000.000001', 'unrelated chatter');
    await bot.barrier();
    expect(bot.llm.requests).toHaveLength(0);
    expect(await bot.core.store.listSessionIds()).toEqual([]);
  });
});

describe('tool cards and approvals', () => {
  it('each tool call is its own message, updated in place from proposed to done, with duration and result', async () => {
    bot = await bootSlackBot({ env: { PERMISSION_MODE: 'auto' } });
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi there' } }]);
    bot.llm.replyText('Wrote hello.txt.');
    const root = await bot.mention('write hello.txt');
    const card = await waitForCard(bot, root, 'write_file', (text) => text.includes('Done'));
    expect(JSON.stringify(card.blocks)).toContain('hello.txt');
    expect(bot.slack.message(C, card.ts)!.edits).toBeGreaterThanOrEqual(2);
    await bot.idle();
  });

  it('Approve by the thread starter runs the call; the card shows who decided and loses its buttons', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }]);
    bot.llm.replyText('Written.');
    const root = await bot.mention('write a.txt');
    const card = await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    expect(JSON.stringify(card.blocks)).toMatch(
      /Approve[\s\S]*Always allow write_file for me in this thread[\s\S]*Deny/,
    );
    expect(JSON.stringify(card.blocks)).not.toContain('Always allow this command');

    // Someone else clicks: refused privately, still pending.
    const refused = await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' }, { user: BOB });
    const answer = await bot.slack.waitForResponse(refused);
    expect(JSON.stringify(answer)).toMatch(/Only the person who started this thread can approve this/);
    expect(JSON.stringify(bot.slack.message(C, card.ts)!.blocks)).toContain(PROMPT_ACTION);

    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await bot.idle();
    const final = JSON.stringify(bot.slack.message(C, card.ts)!.blocks);
    expect(final).not.toContain(PROMPT_ACTION);
    expect(final).toContain(`Approved by <@${ADA}>`);
    expect(final).toContain('Done');

    // A second Slack window still shows the card with its buttons: a Deny there is answered
    // privately, with what became of the call, and changes nothing.
    const stale = await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'deny' }, { seen: card });
    expect((await bot.slack.waitForResponse(stale)).body).toMatchObject({
      response_type: 'ephemeral',
      text: `Already approved by <@${ADA}>.`,
    });
    expect(JSON.stringify(bot.slack.message(C, card.ts)!.blocks)).toBe(final);
    expect(bot.llm.requests).toHaveLength(2);
  });

  it('a shell call offers "Always allow this command"', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo hi' } }]);
    bot.llm.replyText('ok');
    const root = await bot.mention('say hi');
    const card = await waitForCard(bot, root, 'run_shell', (text) => text.includes(PROMPT_ACTION));
    expect(JSON.stringify(card.blocks)).toContain('Always allow this command');
    // The approver reads where the command will run.
    expect(JSON.stringify(card.blocks)).toContain(
      'Runs in a sandbox: it can write only the workspace and granted folders',
    );
    expect(JSON.stringify(card.blocks)).toContain('no network');
    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'always_command' });
    await bot.idle();
    expect(JSON.stringify(bot.slack.message(C, card.ts)!.blocks)).toContain(
      `This command always allowed for their own requests by <@${ADA}>`,
    );
  });

  it("with SHELL_NETWORK=on, or SHELL_SANDBOX=off, the shell's approval card says so", async () => {
    for (const [env, says] of [
      [{ SHELL_NETWORK: 'on' }, 'but it CAN reach the network (SHELL_NETWORK=on)'],
      [{ SHELL_SANDBOX: 'off' }, 'Runs WITHOUT a sandbox (SHELL_SANDBOX=off)'],
    ] as const) {
      bot = await bootSlackBot({ env });
      bot.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'curl example.com' } }]);
      bot.llm.replyText('Not fetched.');
      const root = await bot.mention('fetch it');
      const card = await waitForCard(bot, root, 'run_shell', (text) => text.includes(PROMPT_ACTION));
      expect(JSON.stringify(card.blocks)).toContain(says);
      await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'deny' });
      await bot.idle();
      await bot.stop();
      bot = undefined;
    }
  });

  it('a reply while a text answer streams: the answer to it is a new message below the reply, not glued onto the first', async () => {
    bot = await bootSlackBot();
    const held = bot.llm.replyTextHeld('The first answer, to the end.');
    bot.llm.replyText('You said: actually, shorter.');
    const root = await bot.mention('tell me something');
    await waitFor(() =>
      bot!.slack.thread(C, root).some((m) => m.user === SLACK_IDS.botUserId && (m.text ?? '').length > 0),
    );
    const reply = await bot.reply(root, 'actually, shorter');
    await waitFor(() => bot!.slack.reactionsOn(C, reply).some((r) => r.name === 'eyes'));
    held.release();
    await waitFor(() => bot!.slack.thread(C, root).some((m) => (m.text ?? '').includes('You said')));
    await bot.idle();
    // One turn: the reply was taken in as steering, not as a turn of its own.
    expect(bot.llm.requests).toHaveLength(2);
    const thread = bot.slack.thread(C, root);
    const first = thread.find((m) => (m.text ?? '').includes('The first answer'))!;
    const second = thread.find((m) => (m.text ?? '').includes('You said'))!;
    expect(first.text).not.toContain('You said');
    expect(thread.map((m) => m.ts).indexOf(second.ts)).toBeGreaterThan(thread.map((m) => m.ts).indexOf(reply));
    expect(thread.map((m) => m.ts).indexOf(first.ts)).toBeLessThan(thread.map((m) => m.ts).indexOf(reply));
  });

  it('a reply while a call awaits approval declines it and steers', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'prod.txt', content: 'x' } }]);
    bot.llm.replyText('Using staging instead.');
    const root = await bot.mention('write the prod file');
    const card = await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    await bot.reply(root, 'no, use staging');
    await waitFor(() => bot!.llm.requests.length === 2, 8000);
    await bot.idle();
    const second = bodyOf(bot, 1).messages;
    expect(JSON.stringify(second.at(-2))).toContain('the user replied instead of approving');
    expect(second.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('no, use staging') });
    const final = JSON.stringify(bot.slack.message(C, card.ts)!.blocks);
    expect(final).not.toContain(PROMPT_ACTION);
    expect(final).toContain('Declined: answered by a reply');
  });
});

describe('stopping and recovering', () => {
  it('🛑 on the thread root stops a stalled stream; the thread says who stopped it', async () => {
    bot = await bootSlackBot();
    bot.llm.replyStall();
    const root = await bot.mention('think forever');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.react(root, 'octagonal_sign');
    await bot.idle();
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Stopped')));
    expect(JSON.stringify(bot.slack.thread(C, root).map((m) => m.blocks))).toContain(`Stopped by <@${ADA}>`);
    await bot.llm.waitForClientClose(0);
  });

  it('🛑 from someone with no part in the thread is refused privately', async () => {
    bot = await bootSlackBot();
    bot.llm.replyStall();
    const root = await bot.mention('work');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.react(root, 'octagonal_sign', { user: BOB });
    await waitFor(() => bot!.slack.ephemerals(C).length === 1);
    expect(bot.slack.ephemerals(C)[0]).toMatchObject({ user: BOB });
    await bot.react(root, 'octagonal_sign');
    await bot.idle();
  });

  it('a provider error posts a Retry button that works', async () => {
    bot = await bootSlackBot();
    bot.llm.replyError(500).replyError(500).replyError(500);
    const root = await bot.mention('question');
    await waitFor(
      () => bot!.slack.thread(C, root).some((m) => JSON.stringify(m.blocks ?? []).includes(RETRY_ACTION)),
      8000,
    );
    await bot.idle();
    const note = bot.slack.thread(C, root).find((m) => JSON.stringify(m.blocks ?? []).includes(RETRY_ACTION))!;
    expect(note.text).toMatch(/server error/);
    bot.llm.replyText('Worked this time.');
    await bot.click(note.ts, { actionId: RETRY_ACTION });
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Worked this time.')), 8000);
    await bot.idle();
  });

  it('usage appears in a compact footer under the answer', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('Short answer.', { usage: { prompt_tokens: 1200, completion_tokens: 30 } });
    const root = await bot.mention('hi');
    await waitFor(() => bot!.slack.callsOf('chat.stopStream').length === 1);
    await bot.idle();
    expect(JSON.stringify(bot.slack.callsOf('chat.stopStream')[0]!.args.blocks)).toMatch(/1,200 in · 30 out/);
    expect(root).toBeTruthy();
  });

  it('the footer prices the turn with MODEL_PRICES, which overrides the built-in table', async () => {
    // gpt-4.1 lists at $2 / $8 per million; the operator's rate is $1,000 / $0 (1,200 in → $1.20).
    bot = await bootSlackBot({ env: { MODEL_PRICES: '{"openai:gpt-4.1": {"input": 1000, "output": 0}}' } });
    bot.llm.replyText('Short answer.', { usage: { prompt_tokens: 1200, completion_tokens: 30 } });
    await bot.mention('hi');
    await waitFor(() => bot!.slack.callsOf('chat.stopStream').length === 1);
    await bot.idle();
    expect(JSON.stringify(bot.slack.callsOf('chat.stopStream')[0]!.args.blocks)).toMatch(
      /1,200 in · 30 out · ≈ \$1\.20/,
    );
  });
});

describe('thread commands and many threads', () => {
  it('@bot /model switches the model for this thread; /forget deletes its data', async () => {
    bot = await bootSlackBot({ env: { MODELS: 'openai:gpt-4.1, gpt-4o' } });
    bot.llm.replyText('first');
    const root = await bot.mention('hi');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();
    // Only what MODELS lists: a pricier model typed by anyone is refused, privately, with the list.
    await bot.mention('/model openai:o1-pro', { threadTs: root });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.text.includes('not available here')));
    expect(bot.slack.ephemerals(C).at(-1)!.text).toContain('`openai:gpt-4.1`, `openai:gpt-4o`');
    await bot.mention('/model', { threadTs: root });
    await waitFor(() =>
      bot!.slack
        .ephemerals(C)
        .some((e) => e.text.startsWith('Say which model: `/model openai:gpt-4.1`, `/model openai:gpt-4o`')),
    );
    await bot.mention('/model openai:gpt-4o', { threadTs: root });
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Model switched to openai:gpt-4o')));
    bot.llm.replyText('second');
    await bot.reply(root, 'again');
    await waitFor(() => bot!.llm.requests.length === 2);
    await bot.idle();
    expect((bot.llm.requests[1]!.body as { model: string }).model).toBe('gpt-4o');
    await bot.mention('/forget', { threadTs: root });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.text.includes('Forgotten')));
    expect(await bot.core.store.listSessionIds()).toEqual([]);
  });

  it('20 threads at once each get their own answer', async () => {
    // One person opening 20 threads is what fair use stops (test/slack/slack-fair-use.test.ts): lifted here.
    bot = await bootSlackBot({ env: { TURNS_PER_USER_PER_MINUTE: '100', THREADS_PER_USER: '100' } });
    const roots: string[] = [];
    for (let i = 0; i < 20; i++) roots.push(await bot.mention(`question ${i}`));
    await waitFor(() => bot!.llm.requests.length === 20, 15_000);
    await bot.idle();
    for (const root of roots) {
      await waitFor(() => bot!.slack.thread(C, root).some((m) => m.user === SLACK_IDS.botUserId));
    }
    expect(new Set(await bot.core.store.listSessionIds()).size).toBe(20);
  });
});
