// Slack agent sessions and their Stop button, end to end: the real Bolt app in HTTP mode,
// signed requests, FakeSlack (with its agent sessions: slack-agent-sessions.ts), the real core
// and the real OpenAI SDK against FakeOpenAI. What a person sees: the thread's session walks
// processing → suspended (an approval) → processing → active, is titled once from the request,
// closes after /forget; Slack's Stop button stops a stream, a running tool and a pending
// approval as 🛑 does, is refused privately to a bystander, and counts once however often
// Slack delivers it; a workspace without sessions keeps the DM "is thinking…" status.
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentSessions, DEFAULT_LOADING_MESSAGES } from '../../connectors/slack/agent-session.js';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';
const FOUR = ['processing', 'suspended', 'active', 'closed'];

let bot: SlackBot | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const sessionCalls = (b: SlackBot) => b.slack.callsOf('agents.sessions.setStatus');
const stoppedNotes = (b: SlackBot, root: string) =>
  b.slack.thread(C, root).filter((m) => JSON.stringify(m.blocks ?? []).includes('Stopped by'));
const cardText = (b: SlackBot, ts: string) => JSON.stringify(b.slack.message(C, ts)?.blocks ?? []);
const fallbackLines = (b: SlackBot) =>
  b.logs.lines.filter((line) => /agent sessions are not available/.test(line.message));

describe('each thread is a Slack agent session', () => {
  it('its status walks processing → suspended (approval) → processing → active, titled from the request by its starter', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hello' } }]);
    bot.llm.replyText('The file is written.');
    const root = await bot.mention('write the notes file');
    const card = await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'suspended');
    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('The file is written.')));
    await bot.idle();
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'active');

    const session = bot.slack.agentSessions.session(C, root)!;
    expect(session.history).toEqual(['processing', 'suspended', 'processing', 'active']);
    expect(session).toMatchObject({ title: 'write the notes file', initiator: ADA });
    // The stop that ended the turn said "active" itself: no separate call for it.
    expect(session.via.at(-1)).toBe('chat.stopStream');
    expect(bot.slack.callsOf('chat.stopStream').at(-1)!.args.session_status).toBe('active');
    expect(sessionCalls(bot).map((call) => call.args.status)).toEqual(['processing', 'suspended', 'processing']);
    expect(sessionCalls(bot)[0]!.args).toMatchObject({
      channel_id: C,
      thread_ts: root,
      title: 'write the notes file',
      initiator_user_id: ADA,
    });
    // The DM status line is for workspaces without sessions.
    expect(bot.slack.callsOf('assistant.threads.setStatus')).toEqual([]);
  });

  it('the title is sent once: later turns, and turns after a restart, do not send it again', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('first');
    const root = await bot.mention('the first request');
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'active');
    bot.llm.replyText('second');
    await bot.reply(root, 'a second request');
    await waitFor(() => bot!.llm.requests.length === 2);
    await bot.idle();
    const { slack, llm, dir } = bot;
    await bot.crash();
    const crashed = bot;
    cleanups.push(() => crashed.stop());
    bot = await bootSlackBot({ slack, llm, dir });
    llm.replyText('third');
    await bot.reply(root, 'a third request');
    await waitFor(() => llm.requests.length === 3);
    await bot.idle();
    await waitFor(() => slack.agentSessions.session(C, root)?.history.length === 6);

    const titled = sessionCalls(bot).filter(
      (call) => call.args.title !== undefined || call.args.initiator_user_id !== undefined,
    );
    expect(titled).toHaveLength(1);
    expect(slack.agentSessions.session(C, root)).toMatchObject({
      title: 'the first request',
      history: ['processing', 'active', 'processing', 'active', 'processing', 'active'],
    });
  });

  it('the title is at most 200 characters and carries no mention markup', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('ok');
    const long = 'x'.repeat(300);
    const root = await bot.mention(
      `<@${BOB}> <!here> <!channel> see <#C0OPS0001|ops> and <https://example.com|the docs> ${long}`,
    );
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'active');
    const title = bot.slack.agentSessions.session(C, root)!.title!;
    expect(title.length).toBeLessThanOrEqual(200);
    expect(title.endsWith('…')).toBe(true);
    expect(title).not.toMatch(/<[@!#]/);
    expect(title).toMatch(/^@bob @\u2060here @\u2060channel see #ops and the docs \(https:\/\/example.com\) x+…$/);
  });

  it('/forget closes the session', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('first');
    const root = await bot.mention('hi');
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'active');
    await bot.idle();
    await bot.mention('/forget', { threadTs: root });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.text.includes('Forgotten')));
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'closed');
    expect(bot.slack.agentSessions.session(C, root)!.history).toEqual(['processing', 'active', 'closed']);
  });

  it('only the four statuses are ever sent, and FakeSlack refuses any other as Slack does', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('ok');
    const root = await bot.mention('hello');
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'active');
    const sent = [
      ...sessionCalls(bot).map((call) => call.args.status),
      ...bot.slack
        .callsOf('chat.stopStream')
        .map((call) => call.args.session_status)
        .filter(Boolean),
    ];
    expect(sent.length).toBeGreaterThan(0);
    for (const status of sent) expect(FOUR).toContain(status);
    const client = new WebClient('xoxb-test', { slackApiUrl: bot.slack.apiUrl, retryConfig: { retries: 0 } });
    await expect(
      client.agents.sessions.setStatus({ channel_id: C, thread_ts: root, status: 'is thinking…' }),
    ).rejects.toMatchObject({ data: { error: 'invalid_arguments' } });
  });
});

describe("Slack's Stop button is the 🛑 stop", () => {
  it('from the starter it stops a stalled stream, keeping what was written; the thread says who stopped it', async () => {
    bot = await bootSlackBot();
    bot.llm.replyStallAfter(4, { text: 'Partial answer that then stalls forever' });
    const root = await bot.mention('think forever');
    const started = await bot.slack.waitForCall('chat.startStream');
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'processing');
    await bot.stopButton(root, { streamingMessageTs: [String((started.answer as { ts: string }).ts)] });
    await waitFor(() => stoppedNotes(bot!, root).length === 1);
    await bot.idle();
    expect(JSON.stringify(stoppedNotes(bot, root)[0]!.blocks)).toContain(`Stopped by <@${ADA}>`);
    const answer = bot.slack.thread(C, root).find((m) => m.stream)!;
    expect(answer.stream!.state).toBe('stopped');
    expect(answer.text.length).toBeGreaterThan(0);
    await bot.llm.waitForClientClose(0);
    await waitFor(() => bot!.slack.agentSessions.session(C, root)?.status === 'active');
  });

  it('from the starter it stops a running tool', async () => {
    bot = await bootSlackBot({ env: { PERMISSION_MODE: 'auto', SHELL_SANDBOX: 'off' } });
    bot.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'sleep 60' } }]);
    const root = await bot.mention('wait a minute');
    const card = await waitForCard(bot, root, 'run_shell', (text) => text.includes('Running'));
    await bot.stopButton(root);
    await waitFor(() => stoppedNotes(bot!, root).length === 1, 15_000);
    await bot.idle();
    await waitFor(() => !cardText(bot!, card.ts).includes('Running'));
    expect(bot.llm.requests).toHaveLength(1);
  });

  it('from the starter it closes a pending approval as stopped', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'prod.env', content: 'X=1' } }]);
    const root = await bot.mention('write the prod env file');
    const card = await waitForCard(bot, root, 'write_file', (text) => text.includes(PROMPT_ACTION));
    await bot.stopButton(root);
    await waitFor(() => stoppedNotes(bot!, root).length === 1);
    await bot.idle();
    await waitFor(() => cardText(bot!, card.ts).includes('Closed: the turn was stopped'));
    expect(cardText(bot, card.ts)).not.toContain(PROMPT_ACTION);
    expect(bot.llm.requests).toHaveLength(1);
  });

  it('from a bystander it is refused privately and the turn goes on', async () => {
    bot = await bootSlackBot();
    const held = bot.llm.replyTextHeld('An answer that is finished in the end.', 2);
    const root = await bot.mention('work');
    await bot.slack.waitForCall('chat.startStream');
    await bot.stopButton(root, { user: BOB });
    await waitFor(() => bot!.slack.ephemerals(C).length === 1);
    expect(bot.slack.ephemerals(C)[0]).toMatchObject({ user: BOB, threadTs: root });
    held.release();
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('finished in the end')));
    await bot.idle();
    expect(stoppedNotes(bot, root)).toEqual([]);
  });

  it('one click delivered twice (a Slack retry) is applied once: one note, one refusal', async () => {
    bot = await bootSlackBot();
    const held = bot.llm.replyTextHeld('Still going.', 2);
    const root = await bot.mention('work');
    await bot.slack.waitForCall('chat.startStream');
    // A bystander's click, and Slack's retry of it: one private answer.
    await Promise.all([
      bot.stopButton(root, { user: BOB, eventTs: '1700000001.000100', eventId: 'Ev0STOPBOB' }),
      bot.stopButton(root, { user: BOB, eventTs: '1700000001.000100', eventId: 'Ev0STOPBOB', retryNum: 1 }),
    ]);
    await bot.stopButton(root, { user: BOB, eventTs: '1700000001.000100', eventId: 'Ev0STOPBOB', retryNum: 2 });
    // The starter's click, delivered twice at once and once more later: one stop, one note.
    await Promise.all([
      bot.stopButton(root, { eventTs: '1700000002.000100', eventId: 'Ev0STOPADA' }),
      bot.stopButton(root, { eventTs: '1700000002.000100', eventId: 'Ev0STOPADA', retryNum: 1 }),
    ]);
    await waitFor(() => stoppedNotes(bot!, root).length === 1);
    await bot.idle();
    await bot.stopButton(root, { eventTs: '1700000002.000100', eventId: 'Ev0STOPADA', retryNum: 2 });
    held.release();
    await bot.idle();
    expect(bot.slack.ephemerals(C).filter((e) => e.user === BOB)).toHaveLength(1);
    expect(stoppedNotes(bot, root)).toHaveLength(1);
    expect(bot.slack.ephemerals(C).filter((e) => e.user === ADA)).toEqual([]);
  });
});

describe('a workspace without agent sessions', () => {
  it('falls back to the DM "is thinking…" status with loading messages, says so once in the log, and asks no more', async () => {
    const slack = await new FakeSlack({
      users: [
        { id: ADA, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada' },
        { id: BOB, name: 'bob', realName: 'Bob', displayName: 'bob' },
      ],
    }).start();
    cleanups.push(() => slack.stop());
    slack.agentSessions.refuse('unknown_method');
    bot = await bootSlackBot({ slack });
    // Three threads at once, then one more turn.
    for (let i = 0; i < 3; i++) bot.llm.replyText(`answer ${i}`);
    await Promise.all([bot.mention('one'), bot.mention('two', { user: BOB }), bot.dm('three')]);
    await waitFor(() => bot!.llm.requests.length === 3);
    await bot.idle();
    const refused = sessionCalls(bot).length;
    expect(refused).toBeGreaterThanOrEqual(1);
    bot.llm.replyText('in the DM again');
    const dm = await bot.dm('four');
    await waitFor(() => bot!.llm.requests.length === 4);
    await bot.idle();

    expect(sessionCalls(bot)).toHaveLength(refused);
    expect(fallbackLines(bot)).toHaveLength(1);
    expect(fallbackLines(bot)[0]).toMatchObject({ level: 'info' });
    expect(
      bot.logs.lines.filter(
        (line) =>
          ['warn', 'error'].includes(line.level) && /session|setStatus|unknown_method/.test(JSON.stringify(line)),
      ),
    ).toEqual([]);
    const thinking = bot.slack
      .callsOf('assistant.threads.setStatus')
      .filter((call) => call.args.thread_ts === dm && call.args.status === 'is thinking…');
    expect(thinking).toHaveLength(1);
    expect(thinking[0]!.args.loading_messages).toEqual([...DEFAULT_LOADING_MESSAGES]);
    // A channel thread has no status line: nothing is sent for it.
    expect(
      bot.slack.callsOf('assistant.threads.setStatus').every((call) => call.args.channel_id === SLACK_IDS.dmChannelId),
    ).toBe(true);
  });

  it('LOADING_MESSAGES replaces the built-in loading messages', async () => {
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    slack.agentSessions.refuse('not_allowed');
    bot = await bootSlackBot({ slack, env: { LOADING_MESSAGES: '["Sharpening pencils…", "Asking the model…"]' } });
    bot.llm.replyText('hi');
    const dm = await bot.dm('hello');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();
    const thinking = bot.slack
      .callsOf('assistant.threads.setStatus')
      .find((call) => call.args.thread_ts === dm && call.args.status === 'is thinking…');
    expect(thinking!.args.loading_messages).toEqual(['Sharpening pencils…', 'Asking the model…']);
  });

  it('a DM with a session shows the loading messages too: the session gives the Stop button, the status line the words', async () => {
    bot = await bootSlackBot({ env: { LOADING_MESSAGES: '["Sharpening pencils…"]' } });
    bot.llm.replyText('hi');
    const dm = await bot.dm('hello');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();
    expect(
      bot.slack
        .callsOf('agents.sessions.setStatus')
        .some((call) => call.args.thread_ts === dm && call.args.status === 'processing'),
    ).toBe(true);
    const thinking = bot.slack
      .callsOf('assistant.threads.setStatus')
      .find((call) => call.args.thread_ts === dm && call.args.status === 'is thinking…');
    expect(thinking?.args.loading_messages).toEqual(['Sharpening pencils…']);
  });

  it('each refusal of the method itself counts as "no sessions here"; another failure does not', async () => {
    for (const code of ['unknown_method', 'not_allowed', 'missing_scope', 'not_allowed_token_type']) {
      const slack = await new FakeSlack().start();
      cleanups.push(() => slack.stop());
      slack.agentSessions.refuse(code);
      const logs = memoryLogger();
      const sessions = new AgentSessions({
        records: { messageAt: () => Promise.resolve(undefined), rememberMessage: () => Promise.resolve() },
        logger: logs,
      });
      const client = new WebClient('xoxb-test', { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
      const thread = { sessionId: 's', teamId: 'T1', channel: C, threadTs: '1700000000.000100' };
      expect(await sessions.setStatus(client, thread, 'thinking', { title: 'x' })).toBe(false);
      expect(await sessions.setStatus(client, thread, 'idle')).toBe(false);
      expect(slack.callsOf('agents.sessions.setStatus')).toHaveLength(1);
      expect(logs.lines.filter((line) => /not available/.test(line.message))).toHaveLength(1);
      // Another workspace is asked on its own.
      expect(await sessions.setStatus(client, { ...thread, teamId: 'T2' }, 'idle')).toBe(false);
      expect(logs.lines.filter((line) => /not available/.test(line.message))).toHaveLength(2);
    }
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    slack.failNext('agents.sessions.setStatus', 'ratelimited');
    const sessions = new AgentSessions({
      records: { messageAt: () => Promise.resolve(undefined), rememberMessage: () => Promise.resolve() },
      logger: memoryLogger(),
    });
    const client = new WebClient('xoxb-test', {
      slackApiUrl: slack.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    });
    const thread = { sessionId: 's', teamId: 'T1', channel: C, threadTs: '1700000000.000100' };
    await expect(sessions.setStatus(client, thread, 'thinking')).rejects.toThrow();
    expect(await sessions.setStatus(client, thread, 'thinking')).toBe(true);
  });
});
