// Cluster mode: an instance that dies mid-answer leaves a Slack stream "being written". The
// instance that takes the thread over stops it (through the stream's ts, recorded in the
// store while it is open) before it says in the thread that it picked it up.
import * as webApi from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { SlackSurface } from '../../connectors/slack/slack-surface.js';
import { SessionStore, sessionIdOf, type SessionRecord } from '../../src/store/session-store.js';
import { openKeyvStore, type OpenedStore } from '../../src/store/keyv-factory.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const slack = await new FakeSlack().start();
  cleanups.push(() => slack.stop());
  const opened: OpenedStore = await openKeyvStore('memory://');
  cleanups.push(() => opened.close());
  const store = new SessionStore(opened.keyv);
  const key = { platform: 'slack', workspace: SLACK_IDS.teamId, channel: SLACK_IDS.channelId, thread: '1700000000.000100' };
  const now = Date.now();
  const session: SessionRecord = { id: sessionIdOf(key), key, model: 'm', grants: { tools: [], commands: [] }, compaction: null, startedBy: SLACK_IDS.humanUserId, steerers: [], directories: [], createdAt: now, updatedAt: now };
  const surface = () =>
    new SlackSurface({ client: new webApi.WebClient('xoxb-test', { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 }, logLevel: webApi.LogLevel.ERROR }), store, logger: memoryLogger(), support: { native: true } }, session);
  return { slack, store, session, surface };
}

describe('a stream left open by an instance that died', () => {
  it('is stopped by the instance that takes the thread over, and the record is cleared', async () => {
    const { slack, store, session, surface } = await setup();
    const dying = surface().startAnswer();
    dying.push('Half of an answer, and then');
    await waitFor(() => slack.channelMessages(SLACK_IDS.channelId).some((m) => m.stream?.state === 'streaming'), 5_000);
    let ts: string | undefined;
    await waitFor(() => {
      void store.getOpenAnswer(session.id).then((found) => (ts = found));
      return ts !== undefined;
    }, 5_000);
    // The owner dies here: `finish` never comes. Another instance's surface closes what it left.
    await surface().closeStaleAnswer();
    expect(slack.message(SLACK_IDS.channelId, ts!)?.stream?.state).toBe('stopped');
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
