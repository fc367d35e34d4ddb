// Issue 14's acceptance tests: cluster mode as it is deployed. Two or three whole bots
// (`npm start`'s command, test/support/bot-cluster.ts) in Slack HTTP mode share
// one real redis-server (COORDINATION_URL, lease 2 s, sweep 200 ms) behind a round-robin
// proxy; Slack is the fake Slack (signed requests through the real Bolt HTTP receiver) and
// the model is the fake OpenAI (through the real OpenAI SDK). The instances' bad days are
// real signals: SIGKILL, SIGSTOP/SIGCONT, SIGTERM, and Redis itself stopped and restarted.
//
// What is checked is what a user or the model would see: one answer per message, one run
// per approved call, a note when a thread changes hands, no orphan tool call in any request
// the model gets, and nothing written by an instance that lost its lease.
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TAKEN_OVER_NOTE } from '../../connectors/shared/card-words.js';
import type { RecordedRequest } from '../fakes/http-fake.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import {
  agentSessionStopped,
  appMention,
  blockActions,
  eventCallback,
  reactionAdded,
  SLACK_IDS,
  threadMessage,
  type AppMentionEventPayload,
} from '../fakes/slack-payloads.js';
import { FakeSlack, type StoredMessage } from '../fakes/slack-server.js';
import { BotCluster, sleep, slackSessionId, type Target } from '../support/bot-cluster.js';
import { RedisServer } from '../support/redis-server.js';
import { tempDir } from '../support/test-connector.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { approveButtonOf } from '../support/slack-approve.js';

const C = SLACK_IDS.channelId;
const BOT = SLACK_IDS.botUserId;
/** What the model is told about a call the death of its instance cut (recovery.ts). */
const INTERRUPTED = 'interrupted by a restart';
const SHELL = { PERMISSION_MODE: 'auto', SHELL_SANDBOX: 'bwrap' };
/**
 * The bots' own lease (15 s), for the tests that are not about a takeover: with the cluster's
 * quick 2 s one, a machine busy enough stalls an owner past it, and the other instance rightly
 * takes the turn over and asks the model again, which such a test would count as a second turn.
 */
const STEADY = { CLUSTER_LEASE_MS: '15000' };

/**
 * Each test waits by condition; these bounds only end one that hangs. They are generous: on a
 * busy machine (the suite beside other jobs) starting two or three bots and failing over takes
 * several times as long as on idle cores, and must not fail for it.
 */
const SLOW = { timeout: 120_000 };
const SLOWER = { timeout: 180_000 };

/** Figures measured on the way (printed at the end of the file; no test asserts a duration). */
const figures: Record<string, number> = {};

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
  if (Object.keys(figures).length > 0) console.info(`cluster figures: ${JSON.stringify(figures)}`);
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeEach(async () => {
  // One Redis for the file: each test starts from an empty one (its processes are gone by now).
  if (redis.running) await flush(redis);
});

async function flush(server: RedisServer): Promise<void> {
  const client = new Redis(server.url, { lazyConnect: true });
  await client.connect();
  await client.flushall();
  client.disconnect();
}

interface Setup {
  cluster: BotCluster;
  slack: FakeSlack;
  llm: FakeOpenAI;
  dir: string;
}

async function setup(size: number, env: Record<string, string> = {}, server: RedisServer = redis): Promise<Setup> {
  const dir = await tempDir('cluster-processes-');
  cleanups.push(dir.remove);
  const slack = await new FakeSlack().start();
  cleanups.push(() => slack.stop());
  const llm = await new FakeOpenAI().start();
  cleanups.push(() => llm.stop());
  const cluster = await BotCluster.start({ size, redis: server, slack, llm, dir: dir.path, env });
  cleanups.push(async () => {
    await cluster.dispose();
    // Every instance's log and every Slack call, for a failure's post-mortem.
    const name = (expect.getState().currentTestName ?? 'test').replace(/[^a-z0-9]+/gi, '-').slice(0, 80);
    const calls = slack.calls
      .map((call) => `${call.at} ${call.method} ${JSON.stringify(call.args).slice(0, 400)}`)
      .join('\n');
    await writeFile(
      join(tmpdir(), `cluster-processes-${name}.log`),
      `${cluster.story(200_000)}\n--- slack calls:\n${calls}\n`,
    ).catch(() => undefined);
  });
  return { cluster, slack, llm, dir: dir.path };
}

/** A mention that opens a thread (Slack has the message), and its session id. */
function mention(slack: FakeSlack, text: string): { event: AppMentionEventPayload; sessionId: string } {
  const event = appMention({ text });
  slack.addMessage(event);
  return { event, sessionId: slackSessionId(event.ts) };
}

const botMessages = (slack: FakeSlack, root: string): StoredMessage[] =>
  slack.thread(C, root).filter((m) => m.user === BOT);
const botText = (slack: FakeSlack, root: string): string =>
  botMessages(slack, root)
    .map((m) => m.text)
    .join('\n');
/** Streams Slack still shows as being written in the thread. */
const openStreams = (slack: FakeSlack, root: string): StoredMessage[] =>
  slack.thread(C, root).filter((m) => m.stream && m.stream.state !== 'stopped');

async function until(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  cluster: BotCluster,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}${cluster.story()}`);
    await sleep(25);
  }
}

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}
const messagesOf = (request: RecordedRequest): WireMessage[] =>
  (request.body as { messages?: WireMessage[] } | undefined)?.messages ?? [];
const contentOf = (message: WireMessage): string =>
  typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');

/**
 * Every tool call in every request the model got has exactly one result, right after its
 * assistant message (with the other results of the same message), and no result stands
 * alone: what the providers refuse, and what a stranded or doubled call looks like.
 */
function wireProblems(requests: RecordedRequest[]): string[] {
  const problems: string[] = [];
  requests.forEach((request, r) => {
    const messages = messagesOf(request);
    const answered = new Set<string>();
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]!;
      if (message.role === 'tool' && !answered.has(message.tool_call_id ?? ''))
        problems.push(`request ${r + 1}: result ${message.tool_call_id} follows no call`);
      if (message.role !== 'assistant' || !message.tool_calls?.length) continue;
      const ids = message.tool_calls.map((call) => call.id);
      const results: string[] = [];
      for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++)
        results.push(messages[j]!.tool_call_id ?? '');
      for (const id of ids) {
        const count = results.filter((result) => result === id).length;
        if (count !== 1) problems.push(`request ${r + 1}: call ${id} has ${count} results after it`);
        answered.add(id);
      }
      for (const result of results)
        if (!ids.includes(result))
          problems.push(`request ${r + 1}: result ${result} answers no call of the message before it`);
      i += results.length;
    }
  });
  return problems;
}

/** The results of a call the model got in one request. */
const resultsOf = (request: RecordedRequest, callId: string): string[] =>
  messagesOf(request)
    .filter((m) => m.role === 'tool' && m.tool_call_id === callId)
    .map(contentOf);

/** The card that offers Approve, once it shows. */
async function approveCard(setupOf: Setup, root: string): Promise<StoredMessage> {
  const { slack, cluster } = setupOf;
  const card = () => botMessages(slack, root).find((m) => approveButtonOf(m));
  await until('an Approve button in the thread', () => card() !== undefined, cluster);
  return card()!;
}

/** Slack's block_actions for a click on the card's Approve, as the card is now. */
function approveClick(slack: FakeSlack, card: StoredMessage, root: string, responseId: string) {
  const now = slack.message(C, card.ts) ?? card;
  const button = approveButtonOf(card)!;
  return blockActions({
    actionId: button.actionId,
    value: button.value,
    messageTs: card.ts,
    threadTs: root,
    channel: C,
    responseUrl: slack.responseUrl(responseId),
    messageText: now.text,
    ...(now.blocks ? { messageBlocks: now.blocks } : {}),
  });
}

/** What an instance logs when it learns another one took a session from it. */
const LOST_SESSION = 'cluster: this instance lost a session to another; its work here stops';

/** What `barrier` says in a thread, and what the model answers it. */
const BARRIER = { ask: 'barrier: anything else?', answer: 'Barrier reached.' };

/**
 * Before a check that nothing more happened in a thread: a reply in it, delivered to `slots`
 * (each, as Slack may), answered in full. A session applies what comes in for it in order, on
 * its one owner, so once the answer is whole, all that came before in the thread has been
 * applied and any turn it started has ended. The model gets one more request, ending with the reply.
 */
async function barrier(s: Setup, root: string, slots: Target[]): Promise<void> {
  const { cluster, slack, llm } = s;
  llm.replyText(BARRIER.answer);
  const reply = threadMessage({ text: BARRIER.ask, threadTs: root });
  slack.addMessage(reply);
  const body = eventCallback(reply);
  const answers = await Promise.all(slots.map((slot) => cluster.sendEvent(slot, body)));
  expect(answers.map((answer) => answer.status)).toEqual(slots.map(() => 200));
  // Answered in full: its stream (when it streams) stopped, so the turn it started has ended.
  const answered = () =>
    botMessages(slack, root).some(
      (m) => m.text.includes(BARRIER.answer) && (!m.stream || m.stream.state === 'stopped'),
    );
  await until('the barrier reply answered', answered, cluster);
}

/** The last request the model got was the barrier's. */
const lastWasBarrier = (llm: FakeOpenAI): boolean =>
  contentOf(messagesOf(llm.requests.at(-1)!).at(-1) ?? { role: 'user' }).includes(BARRIER.ask);

/** A file the test's one thread wrote, in its own folder (WORKSPACE_SCOPE=thread); '' while there is none. */
const fileText = (dir: string, name: string): Promise<string> =>
  readFile(inOnlyConversation(join(dir, 'workspace'), name), 'utf8').catch(() => '');
const other = (slot: number, size: number): number => (slot + 1) % size;

describe('bot processes on one Redis, through Bolt over HTTP', () => {
  it('the same event delivered to two instances runs one turn: one model request, one answer', SLOW, async () => {
    const s = await setup(2, STEADY);
    const { cluster, slack, llm } = s;
    llm.replyText('Hello, once.');
    const { event } = mention(slack, 'say hello');
    const body = eventCallback(event);
    const answers = await Promise.all([cluster.sendEvent(0, body), cluster.sendEvent(1, body)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    await until('the answer', () => botText(slack, event.ts).includes('Hello, once.'), cluster);
    // A second turn for the mention would have come before the barrier's.
    await barrier(s, event.ts, [0, 1]);
    expect(llm.requests).toHaveLength(2);
    expect(lastWasBarrier(llm)).toBe(true);
    expect(botMessages(slack, event.ts).filter((m) => m.text.includes('Hello, once.'))).toHaveLength(1);
  });

  it(
    'a thread reply that lands on the instance not running the turn steers it: the model’s next request has it',
    SLOW,
    async () => {
      const s = await setup(2, { ...SHELL, ...STEADY });
      const { cluster, slack, llm, dir } = s;
      llm.replyToolCalls([
        { name: 'run_shell', arguments: { command: 'echo started >> steer.txt; sleep 2' }, id: 'call_steer' },
      ]);
      llm.replyText('Using staging, as you said.');
      const { event, sessionId } = mention(slack, 'deploy the app');
      expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
      await until('the command started', async () => (await fileText(dir, 'steer.txt')).includes('started'), cluster);
      const owner = await cluster.waitForOwner(sessionId);
      const reply = threadMessage({ text: 'use staging please', threadTs: event.ts });
      slack.addMessage(reply);
      // Through the load balancer, which hands it to the instance that does not own the thread.
      cluster.proxy.pinNext(other(owner, 2));
      const sentAt = Date.now();
      expect((await cluster.sendEvent('proxy', eventCallback(reply))).status).toBe(200);
      await until('the next model request', () => llm.requests.length >= 2, cluster);
      // Bounded below by the 2 s command the reply waits for (steering applies at the next model call).
      figures['cluster.steer_to_next_request_ms'] = Date.now() - sentAt;
      await until('the answer', () => botText(slack, event.ts).includes('Using staging, as you said.'), cluster);
      expect(cluster.proxy.forwarded.at(-1)).toMatchObject({ backend: other(owner, 2), status: 200 });
      expect(llm.requests).toHaveLength(2);
      const users = messagesOf(llm.requests[1]!)
        .filter((m) => m.role === 'user')
        .map(contentOf);
      expect(users.filter((text) => text.includes('use staging please'))).toHaveLength(1);
      // The running command was not disturbed: it finished on its owner, and its real result came with the reply.
      const results = resultsOf(llm.requests[1]!, 'call_steer');
      expect(results).toHaveLength(1);
      expect(results[0]).not.toContain('interrupted');
      expect(botText(slack, event.ts)).not.toMatch(/Stopped|Interrupted/);
      expect(wireProblems(llm.requests)).toEqual([]);
      // The reply shows it was taken (✅), as in one process.
      await until(
        '✅ on the reply',
        () => slack.reactionsOn(C, reply.ts).some((r) => r.name === 'white_check_mark'),
        cluster,
      );
    },
  );

  it('a 🛑 on the thread that lands on the instance not running the turn stops it', SLOW, async () => {
    const s = await setup(2, STEADY);
    const { cluster, slack, llm } = s;
    llm.replyStall();
    const { event, sessionId } = mention(slack, 'think for a long time');
    expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
    await until('the model was asked', () => llm.requests.length === 1, cluster);
    const owner = await cluster.waitForOwner(sessionId);
    const sentAt = Date.now();
    const stop = reactionAdded({ reaction: 'octagonal_sign', ts: event.ts });
    expect((await cluster.sendEvent(other(owner, 2), eventCallback(stop))).status).toBe(200);
    await until('"Stopped" in the thread', () => /Stopped/.test(botText(slack, event.ts)), cluster);
    figures['cluster.stop_cross_instance_ms'] = Date.now() - sentAt;
    await barrier(s, event.ts, [other(owner, 2)]);
    // The owner's note names who stopped, though the 🛑 came in on the other instance.
    expect(
      slack
        .thread(C, event.ts)
        .filter((m) => JSON.stringify(m.blocks ?? []).includes(`Stopped by <@${SLACK_IDS.humanUserId}>`)),
    ).toHaveLength(1);
    expect(llm.requests).toHaveLength(2);
    expect(lastWasBarrier(llm)).toBe(true);
    // The turn ended: nothing is left streaming in the thread.
    expect(openStreams(slack, event.ts)).toEqual([]);
  });

  it(
    "Slack's Stop button, delivered to the instance not running the turn and again to the other, stops it once",
    SLOW,
    async () => {
      const s = await setup(2, STEADY);
      const { cluster, slack, llm } = s;
      llm.replyStallAfter(4, { text: 'A partial answer, then nothing' });
      const { event, sessionId } = mention(slack, 'think for a long time');
      expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
      await until('the answer streams', () => slack.callsOf('chat.startStream').length === 1, cluster);
      const owner = await cluster.waitForOwner(sessionId);
      // One click; Slack delivers it twice (a retry), to each instance once.
      const click = eventCallback(agentSessionStopped({ threadTs: event.ts }), { eventId: 'Ev0CLUSTERSTOP' });
      const answers = await Promise.all([cluster.sendEvent(other(owner, 2), click), cluster.sendEvent(owner, click)]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      await until('"Stopped" in the thread', () => /Stopped/.test(botText(slack, event.ts)), cluster);
      await barrier(s, event.ts, [0, 1]);
      expect(
        slack.thread(C, event.ts).filter((m) => JSON.stringify(m.blocks ?? []).includes('Stopped by')),
      ).toHaveLength(1);
      expect(llm.requests).toHaveLength(2);
      expect(lastWasBarrier(llm)).toBe(true);
      expect(openStreams(slack, event.ts)).toEqual([]);
    },
  );

  it(
    'Approve clicked on two instances at once: one resolution, the tool runs once, the second clicker is told',
    SLOW,
    async () => {
      const s = await setup(2, STEADY);
      const { cluster, slack, llm, dir } = s;
      llm.replyToolCalls([
        { name: 'write_file', arguments: { path: 'twice.txt', content: 'written once\n' }, id: 'call_twice' },
      ]);
      llm.replyText('The file is written.');
      const { event } = mention(slack, 'write twice.txt');
      expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
      const card = await approveCard(s, event.ts);
      const clicks = await Promise.all([
        cluster.click(0, approveClick(slack, card, event.ts, 'click-a')),
        cluster.click(1, approveClick(slack, card, event.ts, 'click-b')),
      ]);
      expect(clicks.map((c) => c.status)).toEqual([200, 200]);
      await until('the answer', () => botText(slack, event.ts).includes('The file is written.'), cluster);
      // Told who decided, or (when the other instance has not written its decision yet) that it was decided.
      const toldAlready = (p: { body: unknown }) =>
        /This was already answered\.|Already approved by <@U0HUMAN001>\./.test(JSON.stringify(p.body));
      await until('the second clicker is told', () => slack.responsePosts.some(toldAlready), cluster);
      await barrier(s, event.ts, [0, 1]);
      expect(await fileText(dir, 'twice.txt')).toBe('written once\n');
      expect(llm.requests).toHaveLength(3);
      expect(lastWasBarrier(llm)).toBe(true);
      expect(resultsOf(llm.requests[1]!, 'call_twice')).toHaveLength(1);
      expect(wireProblems(llm.requests)).toEqual([]);
      // One clicker was told; the other's click was the decision.
      const told = slack.responsePosts.filter(toldAlready);
      expect(told).toHaveLength(1);
      // The card shows the decision once, whichever instance drew it last: the owner, told of a
      // click made elsewhere, keeps it in its own renders of the card.
      expect((JSON.stringify(slack.message(C, card.ts)?.blocks).match(/Approved by/g) ?? []).length).toBe(1);
    },
  );

  it(
    'SIGKILL of the owner while an approval waits, then the click on another instance: taken over, the call runs once',
    SLOW,
    async () => {
      const s = await setup(2, { SHELL_SANDBOX: 'bwrap' });
      const { cluster, slack, llm, dir } = s;
      llm.replyToolCalls([
        { name: 'run_shell', arguments: { command: 'echo ran >> approved.txt' }, id: 'call_approved' },
      ]);
      llm.replyText('It ran.');
      const { event, sessionId } = mention(slack, 'append to approved.txt');
      expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
      const card = await approveCard(s, event.ts);
      const owner = await cluster.waitForOwner(sessionId);
      const killedAt = Date.now();
      await cluster.kill(owner);
      expect(
        (await cluster.click(other(owner, 2), approveClick(slack, card, event.ts, 'click-after-kill'))).status,
      ).toBe(200);
      figures['cluster.failover_waiting_approval_ms'] = (await cluster.waitForTakeover(sessionId, owner)).at - killedAt;
      await until('the answer', () => botText(slack, event.ts).includes('It ran.'), cluster);
      await barrier(s, event.ts, [other(owner, 2)]);
      expect(await fileText(dir, 'approved.txt')).toBe('ran\n');
      expect(botText(slack, event.ts)).toContain(TAKEN_OVER_NOTE);
      expect(llm.requests).toHaveLength(3);
      expect(lastWasBarrier(llm)).toBe(true);
      const results = resultsOf(llm.requests[1]!, 'call_approved');
      expect(results).toHaveLength(1);
      expect(results[0]).not.toContain('interrupted');
      expect(wireProblems(llm.requests)).toEqual([]);
    },
  );

  it(
    'SIGKILL of the owner mid-command: the new owner answers the call "interrupted by a restart" and never runs it again',
    SLOW,
    async () => {
      const s = await setup(2, SHELL);
      const { cluster, slack, llm, dir } = s;
      llm.replyToolCalls([
        { name: 'run_shell', arguments: { command: 'echo started >> cut.txt; sleep 30' }, id: 'call_cut' },
      ]);
      llm.replyText('The command was cut; I will not run it again unasked.');
      const { event, sessionId } = mention(slack, 'run the long job');
      expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
      await until('the command started', async () => (await fileText(dir, 'cut.txt')).includes('started'), cluster);
      const owner = await cluster.waitForOwner(sessionId);
      const killedAt = Date.now();
      await cluster.kill(owner);
      figures['cluster.failover_mid_tool_ms'] = (await cluster.waitForTakeover(sessionId, owner)).at - killedAt;
      await until('the answer', () => botText(slack, event.ts).includes('I will not run it again unasked.'), cluster);
      await barrier(s, event.ts, [other(owner, 2)]);
      expect(await fileText(dir, 'cut.txt')).toBe('started\n');
      expect(llm.requests).toHaveLength(3);
      expect(lastWasBarrier(llm)).toBe(true);
      const results = resultsOf(llm.requests[1]!, 'call_cut');
      expect(results).toHaveLength(1);
      expect(results[0]).toContain(INTERRUPTED);
      expect(wireProblems(llm.requests)).toEqual([]);
      expect(botText(slack, event.ts)).toContain(TAKEN_OVER_NOTE);
    },
  );

  it(
    'SIGKILL of the owner mid-stream: the turn carries on on another instance and the answer arrives',
    SLOW,
    async () => {
      const s = await setup(2);
      const { cluster, slack, llm } = s;
      llm.replyStallAfter(4, { text: 'Here is the first part of a long answer, and then' });
      const { event, sessionId } = mention(slack, 'tell me something long');
      expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
      await until('the first part shows', () => botText(slack, event.ts).includes('Here is'), cluster);
      const owner = await cluster.waitForOwner(sessionId);
      llm.replyText('The whole answer, from another instance.');
      const killedAt = Date.now();
      await cluster.kill(owner);
      figures['cluster.failover_mid_stream_ms'] = (await cluster.waitForTakeover(sessionId, owner)).at - killedAt;
      await until(
        'the answer',
        () => botText(slack, event.ts).includes('The whole answer, from another instance.'),
        cluster,
      );
      figures['cluster.failover_mid_stream_to_answer_ms'] = Date.now() - killedAt;
      // The dead owner's stream was closed by the new owner, not left for Slack to time out (and
      // the new answer's own stream is stopped once it is whole).
      await until('no stream left open', () => openStreams(slack, event.ts).length === 0, cluster);
      await barrier(s, event.ts, [other(owner, 2)]);
      expect(openStreams(slack, event.ts)).toEqual([]);
      expect(llm.requests).toHaveLength(3);
      expect(lastWasBarrier(llm)).toBe(true);
      const again = messagesOf(llm.requests[1]!);
      expect(again.at(-1)).toMatchObject({ role: 'user' });
      expect(contentOf(again.at(-1)!)).toContain('tell me something long');
      expect(wireProblems(llm.requests)).toEqual([]);
      expect(botMessages(slack, event.ts).filter((m) => m.text.includes('The whole answer'))).toHaveLength(1);
    },
  );

  // The owner dies in the moment between Slack opening its stream and the stream's ts being
  // recorded: on a slow machine that moment is wide (seen under load as a stream left open
  // after the takeover). Here the owner is killed once Slack opened the stream, before Slack's
  // answer to chat.startStream (with the ts) reaches it.
  it('SIGKILL of the owner while Slack opens its stream: the new owner closes that stream too', SLOW, async () => {
    const { cluster, slack, llm } = await setup(2);
    llm.replyStallAfter(4, { text: 'Here is the first part of a long answer, and then' });
    llm.replyText('The whole answer, from another instance.');
    const { event, sessionId } = mention(slack, 'tell me something long');
    let first: string | undefined;
    let owner: number | undefined;
    slack.onceAnswered(
      'chat.startStream',
      () => true,
      async (call) => {
        first = (call.answer as { ts: string }).ts;
        const slot = await cluster.waitForOwner(sessionId);
        await cluster.kill(slot);
        owner = slot;
      },
    );
    expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
    await until('the owner killed while Slack opened its stream', () => owner !== undefined, cluster);
    await cluster.waitForTakeover(sessionId, owner!);
    await until(
      'the answer',
      () => botText(slack, event.ts).includes('The whole answer, from another instance.'),
      cluster,
    );
    await until('no stream left open', () => openStreams(slack, event.ts).length === 0, cluster);
    expect(slack.message(C, first!)?.stream?.state).toBe('stopped');
    // Closed before the note that the thread changed hands, as with a recorded stream.
    const stoppedAt = slack.calls.findIndex((call) => call.method === 'chat.stopStream' && call.args.ts === first);
    const notedAt = slack.calls.findIndex(
      (call) => call.method === 'chat.postMessage' && JSON.stringify(call.args).includes(TAKEN_OVER_NOTE),
    );
    expect(stoppedAt).toBeGreaterThan(-1);
    expect(stoppedAt).toBeLessThan(notedAt);
    expect(botMessages(slack, event.ts).filter((m) => m.text.includes('The whole answer'))).toHaveLength(1);
  });

  it(
    'SIGSTOP of the owner past its lease, then SIGCONT: the other instance took over, the former owner’s late writes are refused',
    SLOW,
    async () => {
      const { cluster, slack, llm, dir } = await setup(2, SHELL);
      llm.replyToolCalls([
        {
          name: 'run_shell',
          arguments: { command: 'echo started >> zombie.txt; sleep 1; echo finished >> zombie.txt' },
          id: 'call_zombie',
        },
      ]);
      llm.replyText('Answered once, by the new owner.');
      const { event, sessionId } = mention(slack, 'run the job');
      expect((await cluster.sendEvent(0, eventCallback(event))).status).toBe(200);
      await until('the command started', async () => (await fileText(dir, 'zombie.txt')).includes('started'), cluster);
      const owner = await cluster.waitForOwner(sessionId);
      const pausedLease = await cluster.leaseOf(sessionId);
      const pausedAt = Date.now();
      cluster.pause(owner);
      const { slot: successor, at } = await cluster.waitForTakeover(sessionId, owner);
      figures['cluster.failover_paused_owner_ms'] = at - pausedAt;
      await until(
        'the new owner’s answer',
        () => botText(slack, event.ts).includes('Answered once, by the new owner.'),
        cluster,
      );
      // The command (not paused: only the bot was) finished meanwhile; its result waits in the paused bot.
      await until(
        'the command finished',
        async () => (await fileText(dir, 'zombie.txt')).includes('finished'),
        cluster,
      );
      const callsBefore = slack.calls.length;
      cluster.resume(owner);
      // The former owner wakes up with a result to record and a turn to carry on; once it says it
      // lost the thread, its session here is fenced: nothing of it is shown or recorded any more.
      await until(
        'the former owner knows it lost the thread',
        () => cluster.instance(owner).stdout.includes(LOST_SESSION),
        cluster,
      );
      expect(await fileText(dir, 'zombie.txt')).toBe('started\nfinished\n');
      expect(llm.requests).toHaveLength(2);
      expect(botMessages(slack, event.ts).filter((m) => m.text.includes('Answered once'))).toHaveLength(1);
      const late = slack.calls
        .slice(callsBefore)
        .filter((call) => /^chat\.(postMessage|startStream|appendStream)$/.test(call.method));
      expect(late.map((call) => call.method)).toEqual([]);
      // The lease the paused owner held is gone for good. The new owner lets the session go once
      // it is idle, so anyone (the former owner too, by a sweep) may hold it by now, but only
      // under a later epoch, which fences everything the paused owner began under its own.
      const leaseNow = await cluster.leaseOf(sessionId);
      expect(pausedLease?.node).toBe(cluster.nodeOf(owner));
      if (leaseNow) expect(leaseNow.epoch).toBeGreaterThan(pausedLease!.epoch);
      // The transcript as the store holds it, through the model's eyes: one more message to the
      // new owner, and its request carries one result for the call (the new owner's), not two.
      llm.replyText('Still one result.');
      const more = threadMessage({ text: 'anything else?', threadTs: event.ts });
      slack.addMessage(more);
      expect((await cluster.sendEvent(successor, eventCallback(more))).status).toBe(200);
      await until('the follow-up answer', () => botText(slack, event.ts).includes('Still one result.'), cluster);
      expect(llm.requests).toHaveLength(3);
      const results = resultsOf(llm.requests[2]!, 'call_zombie');
      expect(results).toHaveLength(1);
      expect(results[0]).toContain(INTERRUPTED);
      expect(wireProblems(llm.requests)).toEqual([]);
    },
  );

  // Redis is down for 20 s, a restart's worth: ten times the test lease, so every instance's leases and
  // renewals fail meanwhile, and Slack's retries keep coming.
  it(
    'Redis stopped for 20 s, then restarted on the same port: an event is not acknowledged while it is down, and its retry runs one turn',
    SLOWER,
    async () => {
      const durable = await RedisServer.start({ durable: true });
      cleanups.push(() => durable.dispose());
      const s = await setup(2, {}, durable);
      const { cluster, slack, llm } = s;
      llm.replyText('Back, and answered once.');
      const { event } = mention(slack, 'are you there?');
      const body = eventCallback(event);
      await durable.stop();
      // Down for 20 s, well past the 2 s lease: Slack's retries in that time, to any instance, are never acknowledged.
      const downUntil = Date.now() + 20_000;
      const whileDown: number[] = [];
      while (Date.now() < downUntil) {
        whileDown.push(
          (
            await cluster.sendEvent('proxy', body, {
              retryNum: Math.min(whileDown.length, 3),
              retryReason: 'http_error',
            })
          ).status,
        );
        await sleep(2_000);
      }
      expect(whileDown.length).toBeGreaterThanOrEqual(5);
      expect(whileDown.filter((status) => status < 300)).toEqual([]);
      await durable.restart();
      // Slack's retries of the same event, to any instance, until one is acknowledged.
      let retry = 0;
      let acknowledged = false;
      const backAt = Date.now();
      while (!acknowledged) {
        retry++;
        if (Date.now() - backAt > 30_000)
          throw new Error(`no retry was acknowledged after Redis came back${cluster.story()}`);
        acknowledged =
          (await cluster.sendEvent('proxy', body, { retryNum: Math.min(retry, 3), retryReason: 'http_error' }))
            .status === 200;
        if (!acknowledged) await sleep(300);
      }
      figures['cluster.redis_back_to_ack_ms'] = Date.now() - backAt;
      // One more retry to each instance: already claimed, so acknowledged and dropped. An instance
      // whose client is still reconnecting cannot know the event was claimed and answers 500,
      // which Slack retries, as it does here until each acknowledges (a busy machine's reconnect
      // can come seconds after the other instance's).
      for (const slot of [0, 1]) {
        const sentAt = Date.now();
        while ((await cluster.sendEvent(slot, body, { retryNum: 3, retryReason: 'http_timeout' })).status !== 200) {
          if (Date.now() - sentAt > 30_000)
            throw new Error(`instance ${slot} acknowledged no retry after Redis came back${cluster.story()}`);
          await sleep(300);
        }
      }
      await until('the answer', () => botText(slack, event.ts).includes('Back, and answered once.'), cluster);
      await barrier(s, event.ts, [0, 1]);
      expect(llm.requests).toHaveLength(2);
      expect(lastWasBarrier(llm)).toBe(true);
      expect(botMessages(slack, event.ts).filter((m) => m.text.includes('Back, and answered once.'))).toHaveLength(1);
      expect(cluster.instances.every((bot) => bot.alive)).toBe(true);
    },
  );

  it(
    'a rolling restart of all three (SIGTERM each in turn, start it again) keeps a pending approval: it still works, the call runs once',
    SLOWER,
    async () => {
      const s = await setup(3, { SHELL_SANDBOX: 'bwrap' });
      const { cluster, slack, llm, dir } = s;
      llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo ran >> rolled.txt' }, id: 'call_rolled' }]);
      llm.replyText('Ran after the rolling restart.');
      const { event } = mention(slack, 'append to rolled.txt');
      expect((await cluster.sendEvent('proxy', eventCallback(event))).status).toBe(200);
      const card = await approveCard(s, event.ts);
      for (let slot = 0; slot < 3; slot++) {
        expect(await cluster.terminate(slot), `instance ${slot}'s exit code${cluster.story()}`).toBe(0);
        await cluster.restart(slot);
      }
      expect(await fileText(dir, 'rolled.txt')).toBe('');
      expect((await cluster.click('proxy', approveClick(slack, card, event.ts, 'click-after-roll'))).status).toBe(200);
      await until(
        'the answer',
        () => botText(slack, event.ts).includes('Ran after the rolling restart.'),
        cluster,
        30_000,
      );
      await barrier(s, event.ts, ['proxy']);
      expect(await fileText(dir, 'rolled.txt')).toBe('ran\n');
      expect(llm.requests).toHaveLength(3);
      expect(lastWasBarrier(llm)).toBe(true);
      const results = resultsOf(llm.requests[1]!, 'call_rolled');
      expect(results).toHaveLength(1);
      expect(results[0]).not.toContain('interrupted');
      expect(wireProblems(llm.requests)).toEqual([]);
      expect(
        botMessages(slack, event.ts).filter((m) => m.text.includes('Ran after the rolling restart.')),
      ).toHaveLength(1);
      // Handed over by graceful stops, not taken from a dead owner: no "stopped responding" note.
      expect(botText(slack, event.ts)).not.toContain(TAKEN_OVER_NOTE);
      expect(
        botMessages(slack, event.ts).filter((m) => approveButtonOf(m) || /approved\.txt|rolled\.txt/.test(m.text)),
      ).toHaveLength(1);
    },
  );
});
