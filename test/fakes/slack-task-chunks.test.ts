// Self-tests of the fake Slack's tasks and plans (slack-task-chunks.ts), through the real
// web-api WebClient: chunks and plan blocks checked as Slack checks them, and the tasks of a
// streamed message kept as Slack keeps them (details appended on a repeat).
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { SLACK_IDS } from './slack-payloads.js';
import { FakeSlack } from './slack-server.js';

const C = SLACK_IDS.channelId;
const THREAD = '1795974906.000200';

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

async function client(): Promise<{ fake: FakeSlack; client: webApi.WebClient }> {
  fake = await new FakeSlack().start();
  return {
    fake,
    client: new webApi.WebClient('xoxb-test', {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 0 },
      logLevel: webApi.LogLevel.ERROR,
    }),
  };
}

const recipient = { recipient_team_id: SLACK_IDS.teamId, recipient_user_id: SLACK_IDS.humanUserId };

async function errorOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return (error as webApi.WebAPIPlatformError).data?.error;
  }
}

describe('FakeSlack stream chunks', () => {
  it('keeps a streamed message’s tasks: a status changes in place, details sent twice show twice', async () => {
    const { fake, client: slack } = await client();
    const start = await slack.chat.startStream({
      channel: C,
      thread_ts: THREAD,
      ...recipient,
      task_display_mode: 'timeline',
      chunks: [
        { type: 'markdown_text', text: 'Looking. ' },
        { type: 'task_update', id: 't1', title: 'list_dir', status: 'in_progress', details: 'path: .' },
      ],
    });
    await slack.chat.appendStream({
      channel: C,
      ts: start.ts!,
      chunks: [{ type: 'task_update', id: 't1', title: 'list_dir', status: 'complete', output: '3 entries' }],
    });
    await slack.chat.stopStream({
      channel: C,
      ts: start.ts!,
      chunks: [{ type: 'task_update', id: 't1', title: 'list_dir', status: 'complete', details: 'path: .' }],
    });
    const stream = fake.message(C, start.ts!)!.stream!;
    expect(stream.tasks).toEqual([
      {
        id: 't1',
        title: 'list_dir',
        status: 'complete',
        details: 'path: .path: .',
        output: '3 entries',
        updates: 3,
        detailsSent: 2,
        statuses: ['in_progress', 'complete', 'complete'],
      },
    ]);
    expect(fake.message(C, start.ts!)!.text).toBe('Looking. ');
  });

  it('refuses a status outside the four, a missing id or title, details over 256 characters, an unknown chunk or display mode', async () => {
    const { fake, client: slack } = await client();
    const start = await slack.chat.startStream({ channel: C, thread_ts: THREAD, ...recipient, markdown_text: 'Hi' });
    const ts = start.ts!;
    const bad: unknown[] = [
      { type: 'task_update', id: 't', title: 'x', status: 'completed' },
      { type: 'task_update', id: '', title: 'x', status: 'pending' },
      { type: 'task_update', id: 't', status: 'pending' },
      { type: 'task_update', id: 't', title: 'x', status: 'pending', details: 'd'.repeat(257) },
      { type: 'task_update', id: 't', title: 'x', status: 'complete', output: 'o'.repeat(257) },
      { type: 'plan_update' },
      { type: 'sparkles' },
    ];
    for (const chunk of bad) {
      expect(
        await errorOf(slack.chat.appendStream({ channel: C, ts, chunks: [chunk as never] })),
        JSON.stringify(chunk),
      ).toBe('invalid_chunks');
    }
    expect(
      await errorOf(
        slack.chat.startStream({
          channel: C,
          thread_ts: THREAD,
          ...recipient,
          markdown_text: 'x',
          task_display_mode: 'carousel',
        }),
      ),
    ).toBe('invalid_arguments');
    expect(
      await errorOf(
        slack.chat.stopStream({
          channel: C,
          ts,
          chunks: [{ type: 'task_update', id: 't', title: 'x', status: 'done' as never }],
        }),
      ),
    ).toBe('invalid_chunks');
    // Nothing refused reached the message.
    expect(fake.message(C, ts)!.stream).toMatchObject({ state: 'streaming', tasks: [] });
    await slack.chat.appendStream({
      channel: C,
      ts,
      chunks: [
        { type: 'plan_update', title: 'Plan' },
        { type: 'task_update', id: 't', title: 'x', status: 'error', details: 'd'.repeat(256) },
      ],
    });
    expect(fake.message(C, ts)!.stream!.tasks).toMatchObject([{ id: 't', status: 'error' }]);
  });
});

describe('FakeSlack plan and task card blocks', () => {
  const card = (id: string, status = 'pending') => ({ type: 'task_card', task_id: id, title: `task ${id}`, status });

  it('takes a plan of task cards, posted and updated in place', async () => {
    const { fake, client: slack } = await client();
    const posted = await slack.chat.postMessage({
      channel: C,
      thread_ts: THREAD,
      text: 'Working…',
      blocks: [{ type: 'plan', title: 'Working…', tasks: [card('a')] }] as never,
    });
    const details = {
      type: 'rich_text',
      elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'path: .' }] }],
    };
    await slack.chat.update({
      channel: C,
      ts: posted.ts!,
      text: 'Done',
      blocks: [{ type: 'plan', title: 'Done', tasks: [{ ...card('a', 'complete'), details }] }] as never,
    });
    expect(fake.message(C, posted.ts!)!.blocks).toMatchObject([
      { type: 'plan', title: 'Done', tasks: [{ task_id: 'a', status: 'complete', details }] },
    ]);
    expect(
      await errorOf(
        slack.chat.postMessage({
          channel: C,
          thread_ts: THREAD,
          text: 'one card',
          blocks: [card('b', 'in_progress')] as never,
        }),
      ),
    ).toBeUndefined();
  });

  it('refuses plan and task_card in one message, a bad status, details that are no rich_text, more than 50 tasks', async () => {
    const { client: slack } = await client();
    const post = (blocks: unknown[]) =>
      errorOf(slack.chat.postMessage({ channel: C, thread_ts: THREAD, text: 'x', blocks: blocks as never }));
    expect(await post([{ type: 'plan', title: 'P', tasks: [card('a')] }, card('b')])).toBe('invalid_blocks');
    expect(await post([{ type: 'plan', title: 'P', tasks: [card('a', 'completed')] }])).toBe('invalid_blocks');
    expect(await post([{ ...card('a'), details: 'plain string' }])).toBe('invalid_blocks');
    expect(
      await post([{ type: 'plan', title: 'P', tasks: Array.from({ length: 51 }, (_, i) => card(String(i))) }]),
    ).toBe('invalid_blocks');
    expect(await post([{ type: 'plan', title: '', tasks: [] }])).toBe('invalid_blocks');
    const ok = await slack.chat.postMessage({
      channel: C,
      thread_ts: THREAD,
      text: 'x',
      blocks: [{ type: 'plan', title: 'P', tasks: [card('a')] }] as never,
    });
    expect(
      await errorOf(
        slack.chat.update({
          channel: C,
          ts: ok.ts!,
          text: 'x',
          blocks: [{ type: 'plan', title: 'P', tasks: [] }, card('a')] as never,
        }),
      ),
    ).toBe('invalid_blocks');
  });
});
