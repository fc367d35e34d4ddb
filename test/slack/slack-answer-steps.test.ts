// One compact answer (AnswerStream with steps) against FakeSlack through the real WebClient:
// the order of text and task updates, a step's changes coalesced under the interval, its
// details sent once per message, every update out before the stream stops, and the plan
// message's edits coalesced where streaming is off; a stream that opened with a step alone is
// written ahead like any other, so a takeover finds and stops it.
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { AnswerStream } from '../../connectors/slack/answer-stream.js';
import type { StreamingSupport } from '../../connectors/slack/streaming-support.js';
import { SlackSurface } from '../../connectors/slack/slack-surface.js';
import { openKeyvStore } from '../../src/store/keyv-factory.js';
import { StoredThreadRecords } from '../../src/sessions/thread-records.js';
import { SessionStore, sessionIdOf, type OpenAnswer, type SessionRecord } from '../../src/store/session-store.js';
import type { ProgressStep } from '../../connectors/shared/thread-surface.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { planTasks } from '../fakes/slack-task-chunks.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';

const C = SLACK_IDS.channelId;
const THREAD = '1795974906.000200';

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

async function answer(options: {
  native: boolean;
  intervalMs: number;
}): Promise<{ slack: FakeSlack; stream: AnswerStream }> {
  fake = await new FakeSlack().start();
  const client = new webApi.WebClient('xoxb-test', {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: webApi.LogLevel.ERROR,
  });
  const support: StreamingSupport = { native: options.native };
  const stream = new AnswerStream(
    client,
    { channel: C, threadTs: THREAD, recipientUserId: SLACK_IDS.humanUserId, recipientTeamId: SLACK_IDS.teamId },
    { logger: memoryLogger(), support, nativeIntervalMs: options.intervalMs, postIntervalMs: options.intervalMs },
  );
  return { slack: fake, stream };
}

const step = (id: string, status: ProgressStep['status'], extra: Partial<ProgressStep> = {}): ProgressStep => ({
  id,
  title: `list_dir ${id}`,
  status,
  details: `path: ${id}`,
  ...extra,
});
const streamCalls = (slack: FakeSlack) =>
  slack.calls
    .filter((call) => call.method.startsWith('chat.') && call.method.endsWith('Stream'))
    .map((call) => call.method);

describe('a compact answer on a native stream', () => {
  it('changes of a step that wait for the interval leave as one update, after the text before them and before the text after', async () => {
    const { slack, stream } = await answer({ native: true, intervalMs: 60_000 });
    stream.push('Looking. ');
    await waitFor(() => slack.callsOf('chat.startStream').length === 1);
    stream.step(step('a', 'pending'));
    stream.step(step('a', 'in_progress'));
    stream.push('Still looking. ');
    stream.step(step('a', 'complete', { output: '3 entries' }));
    stream.step(step('b', 'pending'));
    stream.push('Done.');
    await stream.finish();

    expect(streamCalls(slack)).toEqual(['chat.startStream', 'chat.appendStream', 'chat.stopStream']);
    const message = slack.message(C, stream.messages[0]!)!;
    expect(message.stream!.chunks).toEqual([
      { type: 'markdown_text', text: 'Looking. ' },
      {
        type: 'task_update',
        id: 'a',
        title: 'list_dir a',
        status: 'complete',
        details: 'path: a',
        output: '3 entries',
      },
      { type: 'markdown_text', text: 'Still looking. ' },
      { type: 'task_update', id: 'b', title: 'list_dir b', status: 'pending', details: 'path: b' },
      { type: 'markdown_text', text: 'Done.' },
    ]);
    expect(message.stream!.state).toBe('stopped');
    expect(message.text).toBe('Looking. Still looking. Done.');
  });

  it('a step updated over several calls carries its details and output once, and its last state is out before the stream stops', async () => {
    const { slack, stream } = await answer({ native: true, intervalMs: 0 });
    stream.step(step('a', 'pending'));
    await waitFor(() => slack.callsOf('chat.startStream').length === 1);
    stream.step(step('a', 'in_progress'));
    await waitFor(() => slack.callsOf('chat.appendStream').length === 1);
    stream.step(step('a', 'complete', { output: 'ok' }));
    await waitFor(() => slack.callsOf('chat.appendStream').length === 2);
    stream.step(step('a', 'complete', { output: 'ok' }));
    stream.step(step('c', 'in_progress'));
    stream.step(step('c', 'error', { output: 'interrupted by user' }));
    await stream.finish();

    const message = slack.message(C, stream.messages[0]!)!;
    expect(slack.callsOf('chat.startStream')[0]!.args.task_display_mode).toBe('timeline');
    expect(message.stream!.tasks).toEqual([
      {
        id: 'a',
        title: 'list_dir a',
        status: 'complete',
        details: 'path: a',
        output: 'ok',
        updates: 4,
        detailsSent: 1,
        statuses: ['pending', 'in_progress', 'complete', 'complete'],
      },
      expect.objectContaining({
        id: 'c',
        status: 'error',
        details: 'path: c',
        detailsSent: 1,
        output: 'interrupted by user',
      }),
    ]);
    expect(message.stream!.state).toBe('stopped');
    // The last update went before the stop.
    const methods = slack.calls.map((call) => call.method);
    expect(methods.lastIndexOf('chat.appendStream')).toBeLessThan(methods.lastIndexOf('chat.stopStream'));
  });

  it('a message that fills up rolls over: a task begun in it is finished in the next, its details told there once', async () => {
    const { slack, stream } = await answer({ native: true, intervalMs: 0 });
    stream.push('Start. '.repeat(100));
    stream.step(step('a', 'in_progress'));
    await waitFor(() => slack.channelMessages(C).some((m) => m.stream?.tasks.some((t) => t.id === 'a')));
    // Too much for what the message has left (about 11,000 characters in all), not for a new one.
    stream.push(`${'A long paragraph of findings. '.repeat(366)}\n\n`);
    stream.step(step('a', 'complete', { output: 'done' }));
    stream.push('The end.');
    await stream.finish();

    expect(stream.messages).toHaveLength(2);
    const [first, second] = stream.messages.map((ts) => slack.message(C, ts)!);
    for (const message of [first!, second!]) {
      expect(message.stream!.state).toBe('stopped');
      expect(message.text.length).toBeLessThanOrEqual(12_000);
    }
    expect(first!.stream!.tasks).toMatchObject([{ id: 'a', status: 'in_progress', detailsSent: 1 }]);
    expect(second!.stream!.tasks).toMatchObject([
      { id: 'a', status: 'complete', details: 'path: a', detailsSent: 1, output: 'done' },
    ]);
    expect(second!.text.endsWith('The end.')).toBe(true);
  });

  it('a task update Slack refuses is dropped, and the text behind it still goes out', async () => {
    const { slack, stream } = await answer({ native: true, intervalMs: 60_000 });
    stream.push('Before. ');
    await waitFor(() => slack.callsOf('chat.startStream').length === 1);
    // A step without an id (a compatible server that sends none): Slack refuses it every time.
    stream.step({ id: '', title: '', status: 'in_progress' });
    stream.push('After.');
    await stream.finish();
    const message = slack.message(C, stream.messages[0]!)!;
    expect(message.text).toBe('Before. After.');
    expect(message.stream!.state).toBe('stopped');
  });

  it('an answer of steps alone, and a step pushed after finish, neither throws nor sends after the stop', async () => {
    const { slack, stream } = await answer({ native: true, intervalMs: 0 });
    stream.step(step('a', 'complete'));
    await stream.finish();
    stream.step(step('b', 'pending'));
    expect(streamCalls(slack)).toEqual(['chat.startStream', 'chat.stopStream']);
    expect(slack.message(C, stream.messages[0]!)!.stream!.tasks.map((t) => t.id)).toEqual(['a']);
  });
});

describe('a compact answer without native streaming', () => {
  it('the plan is posted below the text so far, edited in place at most once per flush, and the text after goes below it', async () => {
    const { slack, stream } = await answer({ native: false, intervalMs: 60_000 });
    stream.push('Checking.');
    await waitFor(() => slack.callsOf('chat.postMessage').length === 1);
    stream.step(step('a', 'pending'));
    stream.step(step('a', 'in_progress'));
    stream.step(step('a', 'complete'));
    stream.step(step('b', 'complete'));
    stream.push('All good.');
    await stream.finish();

    const [text, plan, after] = stream.messages.map((ts) => slack.message(C, ts)!);
    expect(stream.messages).toHaveLength(3);
    expect(text!.text).toBe('Checking.');
    expect(planTasks(plan!.blocks)).toMatchObject({
      title: '2 steps done',
      tasks: [
        { task_id: 'a', status: 'complete' },
        { task_id: 'b', status: 'complete' },
      ],
    });
    expect(after!.text).toBe('All good.');
    // Posted with the first change, the rest in one edit.
    expect(slack.callsOf('chat.update').filter((call) => call.args.ts === plan!.ts)).toHaveLength(1);
    expect(slack.callsOf('chat.startStream')).toHaveLength(0);
  });

  it('more steps than one plan holds (50) go on in a second plan message below the first', async () => {
    const { slack, stream } = await answer({ native: false, intervalMs: 60_000 });
    for (let i = 0; i < 52; i++) stream.step(step(`s${i}`, 'complete'));
    await stream.finish();
    const plans = stream.messages.map((ts) => planTasks(slack.message(C, ts)!.blocks)!);
    expect(plans.map((plan) => plan.tasks.length)).toEqual([50, 2]);
    expect(plans[1]!.tasks.map((t) => t.task_id)).toEqual(['s50', 's51']);
  });
});

/** An owner about to die: its write of the stream's ts never lands (the mark before it does). */
class DyingOwnersStore extends SessionStore {
  held = 0;
  override async setOpenAnswer(id: string, answer: OpenAnswer | undefined): Promise<void> {
    if (answer !== undefined && 'messageId' in answer) {
      this.held += 1;
      return new Promise<void>(() => undefined);
    }
    return super.setOpenAnswer(id, answer);
  }
}

describe('a compact stream left open by an owner that died', () => {
  it('opened by a step alone (no text yet), it is found by its mark and stopped by the instance that takes over', async () => {
    fake = await new FakeSlack().start();
    const slack = fake;
    const opened = await openKeyvStore('memory://');
    try {
      const key = { platform: 'slack', workspace: SLACK_IDS.teamId, channel: C, thread: '1700000000.000100' };
      const now = Date.now();
      const session: SessionRecord = {
        id: sessionIdOf(key),
        key,
        model: 'm',
        grants: { tools: [], commands: [] },
        compaction: null,
        startedBy: SLACK_IDS.humanUserId,
        steerers: [],
        directories: [],
        createdAt: now,
        updatedAt: now,
      };
      const client = () =>
        new webApi.WebClient('xoxb-test', {
          slackApiUrl: slack.apiUrl,
          retryConfig: { retries: 0 },
          logLevel: webApi.LogLevel.ERROR,
        });
      const store = new SessionStore(opened.keyv);
      const dying = new DyingOwnersStore(opened.keyv);
      const surface = (on: SessionStore) =>
        new SlackSurface(
          {
            client: client(),
            records: new StoredThreadRecords(on),
            logger: memoryLogger(),
            support: { native: true },
            botUserId: SLACK_IDS.botUserId,
          },
          session,
        );

      const draft = surface(dying).startAnswer();
      draft.step!(step('a', 'in_progress'));
      await waitFor(() => dying.held === 1, 5_000);
      const open = slack.channelMessages(C).filter((m) => m.stream?.state === 'streaming');
      expect(open.map((m) => m.stream!.tasks.map((t) => t.status))).toEqual([['in_progress']]);
      expect(await store.getOpenAnswer(session.id)).toMatchObject({ startingAt: expect.any(Number) });

      await surface(store).closeStaleAnswer();
      expect(slack.message(C, open[0]!.ts)!.stream!.state).toBe('stopped');
      expect(await store.getOpenAnswer(session.id)).toBeUndefined();
    } finally {
      await opened.close();
    }
  });
});
