// The bot in rough weather, end to end (the real Bolt app, signed requests, FakeSlack, the
// real core and the real OpenAI SDK against FakeOpenAI): buttons that outlive a crash or a
// restart, Slack answering 429, and the health check a load balancer polls.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION, RETRY_ACTION } from '../../connectors/slack/actions.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';
import { inOnlyConversation } from '../support/conversation-folders.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fakes(): Promise<{ slack: FakeSlack; llm: FakeOpenAI }> {
  const slack = await new FakeSlack().start();
  const llm = await new FakeOpenAI().start();
  cleanups.push(async () => {
    await slack.stop();
    await llm.stop();
  });
  return { slack, llm };
}

async function folder(): Promise<string> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  return dir.path;
}

async function boot(options: Parameters<typeof bootSlackBot>[0] = {}): Promise<SlackBot> {
  const bot = await bootSlackBot(options);
  cleanups.push(() => bot.stop());
  return bot;
}

type WireMessage = { role: string; content?: unknown; tool_call_id?: string; tool_calls?: { id: string }[] };
const messagesOf = (llm: FakeOpenAI, i: number) => (llm.requests[i]!.body as { messages: WireMessage[] }).messages;

function buttonsOf(slack: FakeSlack, ts: string): string[] {
  const blocks = (slack.message(C, ts)?.blocks ?? []) as {
    type: string;
    elements?: { type: string; text?: { text: string } }[];
  }[];
  return blocks.filter((b) => b.type === 'actions').flatMap((b) => (b.elements ?? []).map((e) => e.text?.text ?? ''));
}

/** A bot that posted an approval card for `echo ran >> runs.txt` (the usual start of a crash). */
async function approvalCardPosted() {
  const { slack, llm } = await fakes();
  const dir = await folder();
  const first = await boot({ dir, slack, llm });
  llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo ran >> runs.txt' } }]);
  const root = await first.mention('note that you ran');
  const card = await waitForCard(first, root, 'run_shell', (text) => text.includes(PROMPT_ACTION));
  return { slack, llm, dir, first, root, card };
}

describe('after a restart', () => {
  it('Approve on a card posted before the bot crashed runs the call exactly once and finishes the turn', async () => {
    const { slack, llm, dir, first, root, card } = await approvalCardPosted();

    // The process dies with the call waiting for approval; a new one starts on the same data.
    await first.crash();
    llm.replyText('Noted.');
    const second = await boot({ dir, slack, llm });
    expect(llm.requests).toHaveLength(1);

    await second.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => llm.requests.length === 2, 8000);
    await second.idle();
    expect(await readFile(inOnlyConversation(join(dir, 'workspace'), 'runs.txt'), 'utf8')).toBe('ran\n');
    // The model sees the call answered once, by the command's real result.
    const results = messagesOf(llm, 1).filter((m) => m.role === 'tool');
    expect(results).toHaveLength(1);
    expect(String(results[0]!.content)).not.toMatch(/restart|interrupted/i);
    await waitFor(() => slack.thread(C, root).some((m) => m.text.includes('Noted.')));
    // The old card is brought up to date by the new process: done, buttons gone.
    const final = JSON.stringify(slack.message(C, card.ts)!.blocks);
    expect(final).toContain('Done');
    expect(final).toContain(`Approved by <@${ADA}>`);
    expect(buttonsOf(slack, card.ts)).toEqual([]);
    // One card for the call, not a second one posted by the new process.
    expect(slack.thread(C, root).filter((m) => JSON.stringify(m.blocks ?? []).includes('*run_shell*'))).toHaveLength(1);

    // A second click on the same old button (a client that still shows it) is answered
    // privately, with who decided, and runs nothing.
    const again = await second.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' }, { seen: card });
    expect((await slack.waitForResponse(again)).body).toMatchObject({
      response_type: 'ephemeral',
      text: `Already approved by <@${ADA}>.`,
    });
    await second.idle();
    expect(await readFile(inOnlyConversation(join(dir, 'workspace'), 'runs.txt'), 'utf8')).toBe('ran\n');
  });

  it('a card posted just before the crash, whose message was never indexed, is found in the thread and updated, not posted twice', async () => {
    const { slack, llm, dir, first, root, card } = await approvalCardPosted();
    await first.crash();
    // The crash fell between chat.postMessage and writing down the card's ts: only the
    // "posting" mark is left. The card carries its call id in its message metadata.
    const toolCallId = (slack.message(C, card.ts)!.metadata as { event_payload: { tool_call_id: string } })
      .event_payload.tool_call_id;
    const [sessionId] = await first.core.store.listSessionIds();
    await first.core.store.updateMessageRef(`slack-card:${sessionId}:${toolCallId}`, {
      sessionId: sessionId!,
      toolCallId,
      kind: 'tool_card_index',
      postingAt: Date.now() - 1000,
    });

    llm.replyText('Noted.');
    const second = await boot({ dir, slack, llm });
    await second.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => slack.thread(C, root).some((m) => m.text.includes('Noted.')), 8000);
    await second.idle();
    expect(slack.thread(C, root).filter((m) => JSON.stringify(m.blocks ?? []).includes('*run_shell*'))).toHaveLength(1);
    expect(JSON.stringify(slack.message(C, card.ts)!.blocks)).toContain('Done');
    const lookups = slack.callsOf('conversations.replies');
    expect(lookups).toHaveLength(1);
    expect(lookups[0]!.args).toMatchObject({ channel: C, ts: root });
    expect(String(lookups[0]!.args.include_all_metadata)).toBe('true');
  });

  it('a prompt whose buttons were never drawn before the crash gets them after the restart', async () => {
    const { slack, llm, dir, first, root, card } = await approvalCardPosted();
    await first.crash();
    // The process died after the card was posted as "Pending", before the update with its buttons.
    const drawn = (card.blocks as { type: string }[]).filter((block) => block.type !== 'actions');
    await first.connector.client.chat.update({ channel: C, ts: card.ts, text: card.text, blocks: drawn });
    expect(buttonsOf(slack, card.ts)).toEqual([]);

    llm.replyText('Noted.');
    const second = await boot({ dir, slack, llm });
    expect(buttonsOf(slack, card.ts)).toContain('Approve');
    await second.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => slack.thread(C, root).some((m) => m.text.includes('Noted.')), 8000);
    await second.idle();
    expect(await readFile(inOnlyConversation(join(dir, 'workspace'), 'runs.txt'), 'utf8')).toBe('ran\n');
  });

  it('a Retry button posted before a restart still works after it', async () => {
    const { slack, llm } = await fakes();
    const dir = await folder();
    const first = await bootSlackBot({ dir, slack, llm });
    llm.replyError(500).replyError(500).replyError(500);
    const root = await first.mention('summarise the incident');
    await waitFor(() => slack.thread(C, root).some((m) => JSON.stringify(m.blocks ?? []).includes(RETRY_ACTION)), 8000);
    await first.idle();
    const note = slack.thread(C, root).find((m) => JSON.stringify(m.blocks ?? []).includes(RETRY_ACTION))!;
    // A clean restart (a deploy): the first bot shuts down, a new one starts on the same folder.
    await first.stop();

    llm.replyText('The incident was a full disk.');
    const second = await boot({ dir, slack, llm });
    await second.click(note.ts, { actionId: RETRY_ACTION });
    await waitFor(() => slack.thread(C, root).some((m) => m.text.includes('The incident was a full disk.')), 8000);
    await second.idle();
    // The retried call carries the original question.
    expect(String(messagesOf(llm, llm.requests.length - 1).at(-1)!.content)).toMatch(/^summarise the incident/);
    expect(buttonsOf(slack, note.ts)).toEqual([]);
    expect(JSON.stringify(slack.message(C, note.ts)!.blocks)).toContain(`retried by <@${ADA}>`);
  });
});

describe('Slack rate limits', () => {
  it('a 429 on posting a tool card is waited out: the card is posted exactly once, before the answer', async () => {
    const { slack, llm } = await fakes();
    const bot = await boot({ slack, llm, env: { PERMISSION_MODE: 'auto' } });
    llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }]);
    llm.replyText('The workspace is empty.');
    slack.failNext('chat.postMessage', { status: 429, headers: { 'retry-after': '1' } });
    const root = await bot.mention('what is in the workspace?');
    await waitFor(() => slack.thread(C, root).some((m) => m.text.includes('The workspace is empty.')), 10_000);
    await bot.idle();

    const posts = slack.callsOf('chat.postMessage');
    expect(posts.map((call) => call.status)).toEqual([429, 200]);
    expect(posts[1]!.args).toMatchObject({ channel: C, thread_ts: root, text: posts[0]!.args.text });
    // Slack said "retry after 1 s": the bot waited that long before trying again.
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(950);
    const cards = slack.thread(C, root).filter((m) => JSON.stringify(m.blocks ?? []).includes('*list_dir*'));
    expect(cards).toHaveLength(1);
    expect(JSON.stringify(cards[0]!.blocks)).toContain('Done');
    // The card, then the answer: the thread reads in the order things happened.
    const answer = slack.thread(C, root).find((m) => m.text.includes('The workspace is empty.'))!;
    expect(Number(answer.ts)).toBeGreaterThan(Number(cards[0]!.ts));
  });
});

describe('HTTP mode', () => {
  it("GET /healthz on the bot's port answers 200", async () => {
    const bot = await boot();
    const response = await fetch(`http://127.0.0.1:${bot.connector.port}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});
