// TOOL_DISPLAY=compact on Slack, end to end (the real Bolt app, signed requests, FakeSlack, the
// real core and the real OpenAI SDK against FakeOpenAI): a turn's tool calls are task updates
// of its one streamed reply instead of a card each; a call that asks a person still gets its
// card with buttons, the stream closed before it and the steps going on in a new one after the
// click; a stop leaves no task spinning; a restart neither loses the turn nor posts the card
// twice; without native streaming the steps are a plan message edited in place. The fake
// refuses what Slack refuses (slack-task-chunks.ts) and keeps each message's tasks as Slack
// does (details appended on a repeat), so what is asserted is what a person would see.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import { CARD_METADATA_EVENT } from '../../connectors/slack/card-index.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack, type StoredMessage } from '../fakes/slack-server.js';
import { planTasks } from '../fakes/slack-task-chunks.js';
import { waitFor } from '../support/engine-kit.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { tempDir } from '../support/test-connector.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const COMPACT = { TOOL_DISPLAY: 'compact' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function boot(options: Parameters<typeof bootSlackBot>[0] = {}): Promise<SlackBot> {
  const bot = await bootSlackBot({ ...options, env: { ...COMPACT, ...options.env } });
  cleanups.push(() => bot.stop());
  return bot;
}

const botMessages = (bot: SlackBot, root: string): StoredMessage[] =>
  bot.slack.thread(C, root).filter((m) => m.user === SLACK_IDS.botUserId);
const streamed = (bot: SlackBot, root: string) => botMessages(bot, root).filter((m) => m.stream !== undefined);
const isCard = (m: StoredMessage) =>
  (m.metadata as { event_type?: string } | undefined)?.event_type === CARD_METADATA_EVENT;
const cards = (bot: SlackBot, root: string) => botMessages(bot, root).filter(isCard);

/**
 * Every task of every streamed message: none left running, none pending except a call that
 * waited for a person in the reply before its card (it ran in a later reply), each told its
 * details at most once per message.
 */
function expectSettled(bot: SlackBot, root: string, asked: string[] = []): void {
  for (const message of streamed(bot, root)) {
    expect(message.stream!.state).toBe('stopped');
    for (const task of message.stream!.tasks) {
      expect(
        asked.includes(task.id) ? ['pending', 'complete', 'error'] : ['complete', 'error'],
        `${task.title} in ${message.ts}`,
      ).toContain(task.status);
      expect(task.detailsSent, `${task.title} details in ${message.ts}`).toBeLessThanOrEqual(1);
    }
  }
}

/** The chunks of a streamed message in order, as `text:` / `task:<id>:<status>` marks. */
function sequence(message: StoredMessage): string[] {
  return message.stream!.chunks.map((chunk) => {
    const c = chunk as { type: string; text?: string; id?: string; status?: string };
    return c.type === 'task_update' ? `task:${c.id}:${c.status}` : `text:${c.text ?? ''}`;
  });
}

describe('TOOL_DISPLAY=compact on Slack', () => {
  it('a turn with text and three tool calls is one streamed message with its task updates, in order, and no card', async () => {
    const bot = await boot();
    bot.llm.replyToolCalls(
      [
        { name: 'list_dir', arguments: { path: '.' }, id: 'call_one' },
        { name: 'list_dir', arguments: { path: '.' }, id: 'call_two' },
      ],
      { text: 'Let me look around first.' },
    );
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' }, id: 'call_three' }], {
      text: ' One more look.',
    });
    bot.llm.replyText(' The folder is empty.');
    const root = await bot.mention('what is in the workspace?');
    await waitFor(() => bot.llm.requests.length === 3, 10_000);
    await bot.idle();
    await waitFor(() => streamed(bot, root).some((m) => m.stream!.state === 'stopped'));

    const messages = botMessages(bot, root);
    expect(cards(bot, root)).toEqual([]);
    expect(messages).toHaveLength(1);
    const reply = messages[0]!;
    expect(reply.text.replace(/\s+/g, ' ')).toContain('Let me look around first. One more look. The folder is empty.');
    expect(reply.stream!.tasks.map((t) => [t.id, t.title, t.status, t.details])).toEqual([
      ['call_one', 'list_dir', 'complete', expect.stringContaining('.')],
      ['call_two', 'list_dir', 'complete', expect.stringContaining('.')],
      ['call_three', 'list_dir', 'complete', expect.stringContaining('.')],
    ]);
    expectSettled(bot, root);
    // The text said before a call is above it, the text after below it.
    const order = sequence(reply);
    const firstTask = order.findIndex((mark) => mark.startsWith('task:call_one'));
    const lastText = order.findLastIndex((mark) => mark.includes('empty'));
    expect(
      order
        .slice(0, firstTask)
        .map((mark) => mark.replace(/^text:/, ''))
        .join(''),
    ).toContain('Let me look around first.');
    expect(order.findIndex((mark) => mark.startsWith('task:call_three'))).toBeLessThan(lastText);
    // One update per change of a task, never the same state twice.
    for (const task of reply.stream!.tasks) {
      expect(task.statuses.at(-1)).toBe('complete');
      expect(task.statuses.filter((status, i) => status === task.statuses[i - 1])).toEqual([]);
    }
  });

  it('an approval in the middle: its own card with buttons, the stream closed before it, the steps going on in a new stream after the click', async () => {
    const bot = await boot();
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' }, id: 'call_look' }], {
      text: 'Looking first.',
    });
    bot.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo hi > note.txt' }, id: 'call_write' }], {
      text: ' Now writing.',
    });
    bot.llm.replyText('Written.');
    const root = await bot.mention('write a note');
    const card = await waitForCard(bot, root, 'run_shell', (text) => text.includes(PROMPT_ACTION));

    // Before the card: the reply so far, its stream stopped, the look done.
    const before = streamed(bot, root);
    expect(before).toHaveLength(1);
    expect(before[0]!.stream!.state).toBe('stopped');
    expect(before[0]!.stream!.tasks.find((t) => t.id === 'call_look')?.status).toBe('complete');
    const stoppedAt = bot.slack.calls.findIndex(
      (call) => call.method === 'chat.stopStream' && call.args.ts === before[0]!.ts,
    );
    const cardAt = bot.slack.calls.findIndex(
      (call) => call.method === 'chat.postMessage' && (call.answer as { ts?: string }).ts === card.ts,
    );
    expect(stoppedAt).toBeGreaterThanOrEqual(0);
    expect(stoppedAt).toBeLessThan(cardAt);

    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => bot.llm.requests.length === 3, 10_000);
    await bot.idle();
    await waitFor(() => streamed(bot, root).length === 2 && streamed(bot, root)[1]!.stream!.state === 'stopped');

    const after = streamed(bot, root)[1]!;
    expect(after.ts > card.ts).toBe(true);
    expect(after.stream!.tasks.find((t) => t.id === 'call_write')).toMatchObject({
      status: 'complete',
      detailsSent: 1,
    });
    expect(after.text).toContain('Written.');
    // One card, for the call that asked; the look has none.
    expect(cards(bot, root).map((m) => m.ts)).toEqual([card.ts]);
    expect(JSON.stringify(bot.slack.message(C, card.ts)!.blocks)).toContain(`Approved by <@${ADA}>`);
    expectSettled(bot, root, ['call_write']);
    // A stream that opens with a step asks for the timeline (task cards between the text).
    expect(
      bot.slack.calls.find(
        (call) => call.method === 'chat.startStream' && (call.answer as { ts?: string }).ts === after.ts,
      )!.args.task_display_mode,
    ).toBe('timeline');
  });

  it('🛑 while a tool runs: the stream ends with the task as an error, none left running, and the "Stopped by" note', async () => {
    const bot = await boot({ env: { SHELL_ALLOWLIST: 'sleep 30' } });
    bot.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'sleep 30' }, id: 'call_sleep' }], {
      text: 'Waiting a while.',
    });
    bot.llm.replyText('never said');
    const root = await bot.mention('wait for me');
    await waitFor(
      () =>
        streamed(bot, root)[0]?.stream!.tasks.some((t) => t.id === 'call_sleep' && t.status === 'in_progress') === true,
      10_000,
    );

    await bot.react(root, 'octagonal_sign');
    await bot.idle();
    await waitFor(() => botMessages(bot, root).some((m) => m.text === 'Stopped'));

    const reply = streamed(bot, root);
    expect(reply).toHaveLength(1);
    expect(reply[0]!.stream!.tasks).toMatchObject([{ id: 'call_sleep', status: 'error' }]);
    expectSettled(bot, root);
    expect(cards(bot, root)).toEqual([]);
    const note = botMessages(bot, root).find((m) => m.text === 'Stopped')!;
    expect(JSON.stringify(note.blocks)).toContain(`Stopped by <@${ADA}>`);
    expect(note.ts > reply[0]!.ts).toBe(true);
    expect(bot.llm.requests).toHaveLength(1);
  });

  it('a restart while the approval waits: the click after it resumes the turn, the card is not posted again, the steps go on in a new stream', async () => {
    const slack = await new FakeSlack().start();
    const llm = await new FakeOpenAI().start();
    const dir = await tempDir();
    cleanups.push(async () => {
      await slack.stop();
      await llm.stop();
      await dir.remove();
    });
    const first = await boot({ dir: dir.path, slack, llm });
    llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' }, id: 'call_look' }], { text: 'Looking.' });
    llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo ran >> runs.txt' }, id: 'call_run' }]);
    const root = await first.mention('note that you ran');
    const card = await waitForCard(first, root, 'run_shell', (text) => text.includes(PROMPT_ACTION));
    await first.crash();

    llm.replyText('Noted.');
    const second = await boot({ dir: dir.path, slack, llm });
    await second.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => llm.requests.length === 3, 10_000);
    await second.idle();
    await waitFor(() => streamed(second, root).some((m) => m.text.includes('Noted.') && m.stream!.state === 'stopped'));

    expect(cards(second, root).map((m) => m.ts)).toEqual([card.ts]);
    expect(JSON.stringify(slack.message(C, card.ts)!.blocks)).toContain('Done');
    const replies = streamed(second, root);
    expect(replies.length).toBeGreaterThanOrEqual(2);
    expect(replies[0]!.stream!.tasks.find((t) => t.id === 'call_look')?.status).toBe('complete');
    // Shown as waiting in the reply before the card, then run in the reply after it.
    expect(replies[0]!.stream!.tasks.find((t) => t.id === 'call_run')?.status).toBe('pending');
    const resumed = replies.findLast((m) => m.stream!.tasks.some((t) => t.id === 'call_run'))!;
    expect(resumed.ts > card.ts).toBe(true);
    expect(resumed.stream!.tasks.find((t) => t.id === 'call_run')?.status).toBe('complete');
    expectSettled(second, root, ['call_run']);
  });

  it('a stream that died mid-task: the task goes on in a new message, with its details again there (and only once)', async () => {
    const bot = await boot({ env: { PERMISSION_MODE: 'auto' } });
    bot.llm.replyToolCalls(
      [
        {
          name: 'run_shell',
          arguments: { command: 'until [ -f go ]; do sleep 0.05; done; echo went' },
          id: 'call_wait',
        },
      ],
      { text: 'Waiting for the signal.' },
    );
    bot.llm.replyText(' Done waiting.');
    const root = await bot.mention('wait for the signal');
    await waitFor(
      () =>
        streamed(bot, root)[0]?.stream!.tasks.some((t) => t.id === 'call_wait' && t.status === 'in_progress') === true,
      10_000,
    );
    const first = streamed(bot, root)[0]!;
    expect(first.stream!.tasks[0]!.details).toContain('until');

    // Slack ends the stream under the bot (its five minutes, say): the next append is refused.
    bot.slack.failNext('chat.appendStream', 'message_not_in_streaming_state');
    await writeFile(inOnlyConversation(join(bot.dir, 'workspace'), 'go'), '');
    await waitFor(() => bot.llm.requests.length === 2, 10_000);
    await bot.idle();
    await waitFor(() => streamed(bot, root).length === 2 && streamed(bot, root)[1]!.stream!.state === 'stopped');

    // The dead message was repaired in place; the task finished in the new one, told in full.
    expect(bot.slack.callsOf('chat.update').some((call) => call.args.ts === first.ts)).toBe(true);
    const next = streamed(bot, root)[1]!;
    expect(next.stream!.tasks).toMatchObject([
      { id: 'call_wait', status: 'complete', detailsSent: 1, details: expect.stringContaining('until') },
    ]);
    expect(next.text).toContain('Done waiting.');
    expect(cards(bot, root)).toEqual([]);
  });

  it('arguments full of broadcasts: the task shows them inert and within Slack’s 256 characters', async () => {
    const bot = await boot();
    const path = '<!here> '.repeat(40);
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path }, id: 'call_loud' }], { text: 'Listing.' });
    bot.llm.replyText(' Done.');
    const root = await bot.mention('list that');
    await waitFor(() => bot.llm.requests.length === 2, 10_000);
    await bot.idle();
    await waitFor(() => streamed(bot, root)[0]?.stream!.state === 'stopped');
    const task = streamed(bot, root)[0]!.stream!.tasks.find((t) => t.id === 'call_loud')!;
    expect(task).toBeDefined();
    expect(task.details!.length).toBeLessThanOrEqual(256);
    expect(task.details).not.toContain('<!here');
    expect(['complete', 'error']).toContain(task.status);
  });

  it('without native streaming the steps are one plan message edited in place, the text in messages of its own', async () => {
    const bot = await boot();
    bot.slack.failNext('chat.startStream', 'unknown_method');
    bot.llm.replyToolCalls(
      [
        { name: 'list_dir', arguments: { path: '.' }, id: 'call_a' },
        { name: 'list_dir', arguments: { path: '.' }, id: 'call_b' },
      ],
      { text: 'Checking the folder.' },
    );
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' }, id: 'call_c' }]);
    bot.llm.replyText('Nothing there.');
    const root = await bot.mention('what is in the workspace?');
    await waitFor(() => bot.llm.requests.length === 3, 10_000);
    await bot.idle();
    await waitFor(() => botMessages(bot, root).some((m) => m.text.includes('Nothing there.')));

    const messages = botMessages(bot, root);
    expect(cards(bot, root)).toEqual([]);
    const plans = messages.filter((m) => planTasks(m.blocks) !== undefined);
    expect(plans).toHaveLength(1);
    const plan = plans[0]!;
    const shown = planTasks(plan.blocks)!;
    expect(shown.tasks.map((t) => [t.task_id, t.status])).toEqual([
      ['call_a', 'complete'],
      ['call_b', 'complete'],
      ['call_c', 'complete'],
    ]);
    expect(shown.title).toBe('3 steps done');
    // Posted once, then edited in place.
    expect(plan.edits).toBeGreaterThanOrEqual(1);
    expect(
      bot.slack.callsOf('chat.postMessage').filter((call) => JSON.stringify(call.args.blocks ?? []).includes('"plan"')),
    ).toHaveLength(1);
    // The text before the steps above the plan, the text after below it.
    const [above, below] = [
      messages.find((m) => m.text.includes('Checking the folder.'))!,
      messages.find((m) => m.text.includes('Nothing there.'))!,
    ];
    expect(above.ts < plan.ts && plan.ts < below.ts).toBe(true);
    expect(messages.filter((m) => m.stream !== undefined)).toEqual([]);
  });
});
