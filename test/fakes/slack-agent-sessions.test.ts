// Self-tests of FakeSlack's agent sessions (slack-agent-sessions.ts), through the real
// WebClient (web-api 8.2 types the methods): the four statuses and nothing else, title and
// initiator read on creation only, rename, chat.stopStream's session_status, and the variant
// of a workspace without sessions.
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { SLACK_IDS } from './slack-payloads.js';
import { FakeSlack } from './slack-server.js';

const C = SLACK_IDS.channelId;
const ROOT = '1700000000.000100';

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

async function start(): Promise<{ slack: FakeSlack; client: WebClient }> {
  fake = await new FakeSlack().start();
  return { slack: fake, client: new WebClient('xoxb-test', { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } }) };
}

const refusal = (error: string) => ({ data: { ok: false, error } });

describe('FakeSlack agent sessions', () => {
  it('a session is created by its first status, titled then; later titles and initiators are ignored', async () => {
    const { slack, client } = await start();
    await client.agents.sessions.setStatus({
      channel_id: C,
      thread_ts: ROOT,
      status: 'processing',
      title: 'first',
      initiator_user_id: 'U1',
    });
    await client.agents.sessions.setStatus({
      channel_id: C,
      thread_ts: ROOT,
      status: 'suspended',
      title: 'second',
      initiator_user_id: 'U2',
    });
    await client.agents.sessions.setStatus({ channel_id: C, thread_ts: ROOT, status: 'active' });
    expect(slack.agentSessions.session(C, ROOT)).toMatchObject({
      status: 'active',
      history: ['processing', 'suspended', 'active'],
      title: 'first',
      initiator: 'U1',
    });
    await client.agents.sessions.rename({ channel_id: C, thread_ts: ROOT, title: 'renamed' });
    expect(slack.agentSessions.session(C, ROOT)).toMatchObject({ title: 'renamed', renames: ['renamed'] });
  });

  it('refuses a status outside the four values, a title over 200 characters and an empty rename', async () => {
    const { slack, client } = await start();
    await expect(
      client.agents.sessions.setStatus({ channel_id: C, thread_ts: ROOT, status: 'thinking' }),
    ).rejects.toMatchObject(refusal('invalid_arguments'));
    await expect(
      client.agents.sessions.setStatus({
        channel_id: C,
        thread_ts: ROOT,
        status: 'processing',
        title: 'x'.repeat(201),
      }),
    ).rejects.toMatchObject(refusal('invalid_arguments'));
    expect(slack.agentSessions.session(C, ROOT)).toBeUndefined();
    await client.agents.sessions.setStatus({
      channel_id: C,
      thread_ts: ROOT,
      status: 'processing',
      title: 'x'.repeat(200),
    });
    await expect(client.agents.sessions.rename({ channel_id: C, thread_ts: ROOT, title: '' })).rejects.toMatchObject(
      refusal('invalid_arguments'),
    );
  });

  it("chat.stopStream's session_status is checked and recorded on the stream's thread", async () => {
    const { slack, client } = await start();
    await client.agents.sessions.setStatus({ channel_id: C, thread_ts: ROOT, status: 'processing' });
    const first = await client.chat.startStream({
      channel: C,
      thread_ts: ROOT,
      markdown_text: 'hi',
      recipient_user_id: 'U1',
      recipient_team_id: 'T1',
    });
    await expect(client.chat.stopStream({ channel: C, ts: first.ts!, session_status: 'done' })).rejects.toMatchObject(
      refusal('invalid_arguments'),
    );
    expect(slack.message(C, first.ts!)!.stream!.state).toBe('streaming');
    await client.chat.stopStream({ channel: C, ts: first.ts!, session_status: 'active' });
    expect(slack.message(C, first.ts!)!.stream!.state).toBe('stopped');
    expect(slack.agentSessions.session(C, ROOT)).toMatchObject({
      history: ['processing', 'active'],
      via: ['agents.sessions.setStatus', 'chat.stopStream'],
    });
    // No session in that thread: Slack has nothing to set.
    const other = await client.chat.startStream({
      channel: C,
      thread_ts: '1700000000.000200',
      markdown_text: 'hi',
      recipient_user_id: 'U1',
      recipient_team_id: 'T1',
    });
    await expect(client.chat.stopStream({ channel: C, ts: other.ts!, session_status: 'active' })).rejects.toMatchObject(
      refusal('session_not_found'),
    );
  });

  it('refuse() plays a workspace without sessions; a stopStream without session_status still works', async () => {
    const { slack, client } = await start();
    slack.agentSessions.refuse('unknown_method');
    await expect(
      client.agents.sessions.setStatus({ channel_id: C, thread_ts: ROOT, status: 'processing' }),
    ).rejects.toMatchObject(refusal('unknown_method'));
    await expect(client.agents.sessions.rename({ channel_id: C, thread_ts: ROOT, title: 't' })).rejects.toMatchObject(
      refusal('unknown_method'),
    );
    const stream = await client.chat.startStream({
      channel: C,
      thread_ts: ROOT,
      markdown_text: 'hi',
      recipient_user_id: 'U1',
      recipient_team_id: 'T1',
    });
    await expect(
      client.chat.stopStream({ channel: C, ts: stream.ts!, session_status: 'active' }),
    ).rejects.toMatchObject(refusal('unknown_method'));
    await client.chat.stopStream({ channel: C, ts: stream.ts! });
    expect(slack.message(C, stream.ts!)!.stream!.state).toBe('stopped');
    slack.agentSessions.allow();
    await client.agents.sessions.setStatus({ channel_id: C, thread_ts: ROOT, status: 'processing' });
    expect(slack.agentSessions.all()).toHaveLength(1);
  });
});
