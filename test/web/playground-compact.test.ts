// Compact mode in the playground (TOOL_DISPLAY=compact): a reply's tool calls are one progress
// message, a checklist updated in place, with the reply's text above and below it; a call that
// asks a person still gets its own card with buttons. Through the real bot (core against
// FakeOpenAI, the real WebConnector), read from the thread documents and the live stream as
// the page reads them: an approval in the middle, a stop in the middle, a restart in the middle.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PageThreadSchema, type PageMessage } from '../../connectors/web/page-threads.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { bootWebBot, messageOf, type WebBot } from './web-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function boot(options: Parameters<typeof bootWebBot>[0] = {}): Promise<WebBot> {
  const bot = await bootWebBot({ ...options, env: { TOOL_DISPLAY: 'compact', ...options.env } });
  let stopping: Promise<void> | undefined;
  const stopOnce = bot.stop.bind(bot);
  bot.stop = () => (stopping ??= stopOnce());
  cleanups.push(() => bot.stop());
  return bot;
}

const messagesOf = (bot: WebBot, thread: string): PageMessage[] => bot.connector.threads.get(thread)?.messages ?? [];
const progressOf = (bot: WebBot, thread: string) => messagesOf(bot, thread).filter((m) => m.kind === 'progress');
const statusOf = (bot: WebBot, thread: string, step: string) =>
  progressOf(bot, thread)
    .flatMap((m) => (m.kind === 'progress' ? m.steps : []))
    .find((s) => s.id === step)?.status;
const askingCard = (bot: WebBot, thread: string) =>
  messagesOf(bot, thread).find((m) => m.kind === 'card' && m.card.buttons.length > 0);

/** A look around (auto-approved) and a write (asks), with text before them; then the final answer. */
function scriptLookAndWrite(llm: FakeOpenAI): void {
  llm.replyToolCalls(
    [
      { id: 'call_look', name: 'list_dir', arguments: { path: '.' } },
      { id: 'call_write', name: 'write_file', arguments: { path: 'notes.txt', content: 'compact\n' } },
    ],
    { text: 'Let me look first.' },
  );
  llm.replyText('All done.');
}

describe('compact mode in the playground', () => {
  it("a reply's tool calls are one progress message updated in place: text before it above, text after it below", async () => {
    const bot = await boot({ env: { PERMISSION_MODE: 'auto' } });
    const live = await bot.stream();
    bot.llm.replyToolCalls([{ id: 'call_a', name: 'list_dir', arguments: { path: '.' } }], { text: 'Looking.' });
    bot.llm.replyToolCalls([{ id: 'call_b', name: 'list_dir', arguments: { path: '.' } }]);
    bot.llm.replyText('Found nothing.');
    const thread = (await bot.act('/api/messages', { text: '@bot look around' })).body.thread as string;
    await bot.idle();

    const messages = messagesOf(bot, thread);
    expect(messages.map((m) => m.kind)).toEqual(['input', 'answer', 'progress', 'answer']);
    expect(messages[1]).toMatchObject({ kind: 'answer', text: 'Looking.', streaming: false });
    const progress = messages[2]!;
    expect(progress.kind === 'progress' && progress.steps).toEqual([
      expect.objectContaining({ id: 'call_a', title: 'list_dir', status: 'complete' }),
      expect.objectContaining({ id: 'call_b', title: 'list_dir', status: 'complete' }),
    ]);
    expect(messages[3]).toMatchObject({ kind: 'answer', text: 'Found nothing.', streaming: false, feedback: {} });
    expect(messages[3]!.kind === 'answer' && messages[3]!.footer).toMatch(/\d+ in · \d+ out/);
    // Updated in place: the page was sent the same message again and again, never a card.
    const updates = live.events.filter((e) => messageOf(e)?.id === progress.id);
    expect(updates.length).toBeGreaterThanOrEqual(4);
    expect(updates.map((e) => (messageOf(e)!.steps as unknown[]).length)).toContain(1);
    expect(live.events.some((e) => messageOf(e)?.kind === 'card')).toBe(false);
  });

  it('with an approval in the middle: the call that asks gets its card with buttons, its step is updated in the same progress message', async () => {
    const bot = await boot();
    const live = await bot.stream();
    scriptLookAndWrite(bot.llm);
    const thread = (await bot.act('/api/messages', { text: '@bot write my notes' })).body.thread as string;
    await waitFor(() => askingCard(bot, thread) !== undefined, 10_000);

    // The round's calls run once every one of them is allowed: both wait.
    expect(messagesOf(bot, thread).map((m) => m.kind)).toEqual(['input', 'answer', 'progress', 'card']);
    expect(statusOf(bot, thread, 'call_look')).toBe('pending');
    expect(statusOf(bot, thread, 'call_write')).toBe('pending');
    const card = askingCard(bot, thread)!;
    const itemId = card.kind === 'card' ? card.card.itemId : undefined;
    expect(card.kind === 'card' && card.toolCallId).toBe('call_write');

    expect((await bot.act('/api/click', { item: itemId, choice: 'once' })).status).toBe(200);
    await bot.idle();
    expect(await readFile(inOnlyConversation(join(bot.dir, 'workspace'), 'notes.txt'), 'utf8')).toBe('compact\n');

    const messages = messagesOf(bot, thread);
    expect(messages.map((m) => m.kind)).toEqual(['input', 'answer', 'progress', 'card', 'answer']);
    const progress = progressOf(bot, thread);
    expect(progress).toHaveLength(1);
    expect(statusOf(bot, thread, 'call_look')).toBe('complete');
    expect(statusOf(bot, thread, 'call_write')).toBe('complete');
    const decided = messages[3]!;
    expect(decided.kind === 'card' && decided.card.buttons).toEqual([]);
    expect(decided.kind === 'card' && decided.card.status).toMatch(/Approved by @you/);
    expect(messages[4]).toMatchObject({ kind: 'answer', text: 'All done.', feedback: {} });
    // The write's step went from pending to complete in that one message, live.
    const writeStates = live.events
      .filter((e) => messageOf(e)?.id === progress[0]!.id)
      .map((e) => (messageOf(e)!.steps as { id: string; status: string }[]).find((s) => s.id === 'call_write')?.status)
      .filter((s) => s !== undefined);
    expect(writeStates[0]).toBe('pending');
    expect(writeStates.at(-1)).toBe('complete');
    expect(writeStates).toContain('in_progress');
  });

  it('with a stop in the middle: the running step ends as an error, none is left running, and the thread says it was stopped', async () => {
    const bot = await boot({ env: { PERMISSION_MODE: 'auto' } });
    bot.llm.replyToolCalls([{ id: 'call_sleep', name: 'run_shell', arguments: { command: 'sleep 30' } }], {
      text: 'Waiting a while.',
    });
    bot.llm.replyText('Never said.');
    const thread = (await bot.act('/api/messages', { text: '@bot wait a while' })).body.thread as string;
    await waitFor(() => statusOf(bot, thread, 'call_sleep') === 'in_progress', 15_000);

    expect((await bot.act('/api/stop', { thread })).status).toBe(200);
    await bot.idle();
    const messages = messagesOf(bot, thread);
    expect(messages.map((m) => m.kind)).toEqual(['input', 'answer', 'progress', 'note']);
    expect(statusOf(bot, thread, 'call_sleep')).toBe('error');
    for (const step of progressOf(bot, thread).flatMap((m) => (m.kind === 'progress' ? m.steps : [])))
      expect(['complete', 'error']).toContain(step.status);
    expect(messages[3]).toMatchObject({ kind: 'note', text: expect.stringMatching(/Stopped by @you/) });
    // A stopped turn's answer takes no 👍 / 👎.
    expect(messages.some((m) => 'feedback' in m)).toBe(false);
    expect(bot.llm.requests).toHaveLength(1);
  });

  it('with a restart in the middle: the stored thread shows the progress as it was, and the resumed turn updates that same message', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const llm = await new FakeOpenAI().start();
    cleanups.push(() => llm.stop());
    scriptLookAndWrite(llm);
    const first = await boot({ dir: dir.path, llm });
    const thread = (await first.act('/api/messages', { text: '@bot write my notes' })).body.thread as string;
    await waitFor(() => askingCard(first, thread) !== undefined, 10_000);
    const before = progressOf(first, thread);
    // As the bot stops for a restart (run-bot.ts): the turn waiting for the click is kept.
    await first.connector.stopTaking();
    await first.core.suspend();
    await first.stop();

    const second = await boot({ dir: dir.path, llm });
    const live = await second.stream();
    const snapshot = live.events[0]!.data as { threads: { id: string; messages: PageMessage[] }[] };
    const stored = snapshot.threads.find((t) => t.id === thread)!.messages;
    expect(stored.map((m) => m.kind)).toEqual(['input', 'answer', 'progress', 'card']);
    expect(stored[2]).toEqual(before[0]);
    expect(stored[2]!.kind === 'progress' && stored[2]!.steps.map((s) => [s.id, s.status])).toEqual([
      ['call_look', 'pending'],
      ['call_write', 'pending'],
    ]);

    const card = askingCard(second, thread)!;
    expect(
      (await second.act('/api/click', { item: card.kind === 'card' ? card.card.itemId : '', choice: 'once' })).status,
    ).toBe(200);
    await waitFor(() => messagesOf(second, thread).some((m) => m.kind === 'answer' && m.text === 'All done.'), 10_000);
    await second.idle();
    expect(await readFile(inOnlyConversation(join(dir.path, 'workspace'), 'notes.txt'), 'utf8')).toBe('compact\n');
    expect(messagesOf(second, thread).map((m) => m.kind)).toEqual(['input', 'answer', 'progress', 'card', 'answer']);
    expect(progressOf(second, thread)[0]!.id).toBe(before[0]!.id);
    expect(statusOf(second, thread, 'call_look')).toBe('complete');
    expect(statusOf(second, thread, 'call_write')).toBe('complete');
    expect(llm.requests).toHaveLength(2);
  });

  it('with a restart while a step runs: the stored thread shows it running and says the turn carries on; the resumed turn ends that step in the same message', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const llm = await new FakeOpenAI().start();
    cleanups.push(() => llm.stop());
    llm.replyToolCalls(
      [
        { id: 'call_echo', name: 'run_shell', arguments: { command: 'echo ready' } },
        { id: 'call_sleep', name: 'run_shell', arguments: { command: 'sleep 30' } },
      ],
      { text: 'Waiting a while.' },
    );
    llm.replyText('Carried on after the restart.');
    const env = { PERMISSION_MODE: 'auto' };
    const first = await boot({ dir: dir.path, llm, env });
    const thread = (await first.act('/api/messages', { text: '@bot wait a while' })).body.thread as string;
    await waitFor(() => statusOf(first, thread, 'call_sleep') === 'in_progress', 15_000);
    const progressId = progressOf(first, thread)[0]!.id;
    await first.connector.stopTaking();
    await first.core.suspend();
    // The thread document as the store holds it when the process ends: the step running, and the note.
    const stored = PageThreadSchema.parse(await first.core.store.keyv.get(`web:thread:${thread}`)).messages;
    expect(stored.map((m) => m.kind)).toEqual(['input', 'answer', 'progress', 'note']);
    expect(stored[2]!.kind === 'progress' && stored[2]!.steps.map((s) => [s.id, s.status])).toEqual([
      ['call_echo', 'complete'],
      ['call_sleep', 'in_progress'],
    ]);
    expect(stored[3]).toMatchObject({ kind: 'note', text: expect.stringMatching(/restart/i) });
    await first.stop();

    const second = await boot({ dir: dir.path, llm, env });
    await waitFor(
      () => messagesOf(second, thread).some((m) => m.kind === 'answer' && m.text === 'Carried on after the restart.'),
      15_000,
    );
    await second.idle();
    expect(progressOf(second, thread).map((m) => m.id)).toEqual([progressId]);
    expect(statusOf(second, thread, 'call_echo')).toBe('complete');
    expect(statusOf(second, thread, 'call_sleep')).toBe('error');
    expect(messagesOf(second, thread).at(-1)).toMatchObject({
      kind: 'answer',
      text: 'Carried on after the restart.',
      feedback: {},
    });
  });
});
