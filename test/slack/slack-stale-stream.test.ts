// Cluster mode: an instance that dies mid-answer leaves a Slack stream "being written". The
// instance that takes the thread over stops it (through the stream's ts, recorded in the
// store while it is open) before it says in the thread that it picked it up. The record is
// written ahead: an owner that dies after Slack opened the stream but before the ts was
// recorded (a wide window on a slow machine) leaves a mark, and the stream is looked for.
import * as webApi from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { SlackSurface } from '../../connectors/slack/slack-surface.js';
import { StoredThreadRecords } from '../../src/sessions/thread-records.js';
import { SessionStore, sessionIdOf, type OpenAnswer, type SessionRecord } from '../../src/store/session-store.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The store as an owner that is about to die sees it: its write of the stream's ts is held
 * and never lands (the process is killed first); every other write goes through.
 */
class DyingOwnersStore extends SessionStore {
  readonly heldWrites: OpenAnswer[] = [];
  override async setOpenAnswer(id: string, answer: OpenAnswer | undefined): Promise<void> {
    // Any write that names the stream (not the mark written before it is opened, nor a clear).
    const namesTheStream = answer !== undefined && !(typeof answer === 'object' && 'startingAt' in answer);
    if (namesTheStream) {
      this.heldWrites.push(answer);
      return new Promise<void>(() => undefined);
    }
    return super.setOpenAnswer(id, answer);
  }
}

async function setup() {
  const slack = await new FakeSlack().start();
  cleanups.push(() => slack.stop());
  const opened: OpenedStore = await openKeyvStore('memory://');
  cleanups.push(() => opened.close());
  const store = new SessionStore(opened.keyv);
  const dyingStore = new DyingOwnersStore(opened.keyv);
  const key = {
    platform: 'slack',
    workspace: SLACK_IDS.teamId,
    channel: SLACK_IDS.channelId,
    thread: '1700000000.000100',
  };
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
  const surface = (on: SessionStore = store) =>
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
  return { slack, store, dyingStore, session, surface };
}

const streamsOf = (slack: FakeSlack) => slack.channelMessages(SLACK_IDS.channelId).filter((m) => m.stream);

describe('a stream left open by an instance that died', () => {
  it('is stopped by the instance that takes the thread over, and the record is cleared', async () => {
    const { slack, store, session, surface } = await setup();
    const dying = surface().startAnswer();
    dying.push('Half of an answer, and then');
    await waitFor(() => slack.channelMessages(SLACK_IDS.channelId).some((m) => m.stream?.state === 'streaming'), 5_000);
    let recorded: OpenAnswer | undefined;
    await waitFor(() => {
      void store.getOpenAnswer(session.id).then((found) => (recorded = found));
      return recorded !== undefined && 'messageId' in recorded;
    }, 5_000);
    expect(recorded).toEqual({ messageId: streamsOf(slack)[0]!.ts });
    // The owner dies here: `finish` never comes. Another instance's surface closes what it left.
    await surface().closeStaleAnswer();
    expect(slack.message(SLACK_IDS.channelId, streamsOf(slack)[0]!.ts)?.stream?.state).toBe('stopped');
    expect(await store.getOpenAnswer(session.id)).toBeUndefined();
  });

  it('is stopped too when the owner died after Slack opened it but before its ts was recorded', async () => {
    const { slack, store, dyingStore, session, surface } = await setup();
    // Earlier in the thread: a finished answer of the bot.
    const earlier = surface().startAnswer();
    earlier.push('An earlier answer.');
    await earlier.finish();
    const dying = surface(dyingStore).startAnswer();
    dying.push('Half of an answer, and then');
    // Slack opened the stream and answered; the owner's write of its ts is still on the way when it dies.
    await waitFor(() => dyingStore.heldWrites.length === 1, 5_000);
    // A person replied meanwhile: newer than the stream, and not the bot's to stop.
    slack.addMessage({
      channel: SLACK_IDS.channelId,
      threadTs: session.key.thread,
      user: SLACK_IDS.humanUserId,
      text: 'and then?',
    });
    const open = streamsOf(slack).filter((m) => m.stream?.state === 'streaming');
    expect(open).toHaveLength(1);
    await surface().closeStaleAnswer();
    expect(streamsOf(slack).filter((m) => m.stream?.state === 'streaming')).toEqual([]);
    expect(slack.message(SLACK_IDS.channelId, open[0]!.ts)?.stream?.state).toBe('stopped');
    expect(await store.getOpenAnswer(session.id)).toBeUndefined();
    // Found by one look at the thread; the person's newer reply was not tried, the earlier answer not touched.
    expect(slack.calls.filter((call) => call.method === 'conversations.replies')).toHaveLength(1);
    const tried = slack.calls
      .filter((call) => call.method === 'chat.stopStream')
      .slice(1)
      .map((call) => call.args.ts);
    expect(tried).toEqual([open[0]!.ts]);
  });

  it('is stopped when the owner died while Slack was opening it (the answer never reached it)', async () => {
    const { slack, store, session, surface } = await setup();
    // Slack opens the stream; its answer (with the ts) is held until the test ends.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    cleanups.push(async () => release());
    let arrived!: () => void;
    const opened = new Promise<void>((resolve) => (arrived = resolve));
    slack.onceAnswered(
      'chat.startStream',
      () => true,
      async () => {
        arrived();
        await released;
      },
    );
    const dying = surface().startAnswer();
    dying.push('Half of an answer, and then');
    await opened;
    // The owner is gone before Slack's answer, with its ts, reaches it.
    await surface().closeStaleAnswer();
    expect(streamsOf(slack).map((m) => m.stream?.state)).toEqual(['stopped']);
    expect(await store.getOpenAnswer(session.id)).toBeUndefined();
  });

  it('leaves no mark behind when Slack refuses to open a stream', async () => {
    const { slack, store, session, surface } = await setup();
    slack.failNext('chat.startStream', 'unknown_method');
    const answer = surface().startAnswer();
    answer.push('Posted instead of streamed.');
    await answer.finish();
    expect(slack.channelMessages(SLACK_IDS.channelId).map((m) => m.text)).toEqual(['Posted instead of streamed.']);
    expect(await store.getOpenAnswer(session.id)).toBeUndefined();
  });

  it('is not recorded once the answer finished normally, and closing then does nothing', async () => {
    const { slack, store, session, surface } = await setup();
    const answer = surface().startAnswer();
    answer.push('A whole answer.');
    await answer.finish();
    expect(await store.getOpenAnswer(session.id)).toBeUndefined();
    const calls = slack.calls.length;
    await surface().closeStaleAnswer();
    expect(slack.calls.length).toBe(calls);
  });
});
