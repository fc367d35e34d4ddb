// Slack Web API calls counted as platform_call events: the real WebClient, sending through the
// counted (and guarded) fetch as bolt-app.ts wires it, against FakeSlack. Each attempt Slack
// answers is one event: a 429 is rate_limited, a 5xx or a 200 with `"ok": false` is an error.
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { countedFetch } from '../../../connectors/slack/api-calls.js';
import { guardedFetch } from '../../../connectors/slack/outbound-guard.js';
import { OpsBus, type OpsEventOf } from '../../../src/ops/ops-events.js';
import { SLACK_IDS } from '../../fakes/slack-payloads.js';
import { FakeSlack } from '../../fakes/slack-server.js';
import { waitFor } from '../../support/engine-kit.js';

let slack: FakeSlack | undefined;
afterEach(async () => {
  await slack?.stop();
  slack = undefined;
});

async function clientOnBus(listening: boolean) {
  slack = await new FakeSlack().start();
  const bus = new OpsBus();
  const calls: OpsEventOf<'platform_call'>[] = [];
  if (listening) bus.add({ handle: (event) => (event.type === 'platform_call' ? calls.push(event) : undefined) });
  const client = new WebClient('xoxb-test', {
    slackApiUrl: slack.apiUrl,
    fetch: countedFetch(guardedFetch(), bus),
    retryConfig: { retries: 2, factor: 1, minTimeout: 10, maxTimeout: 20 },
  });
  return { slack, client, calls };
}

describe('Slack API calls on the operations bus', () => {
  it('counts each attempt by method: ok, a 429 as rate_limited, a 500 and a refusal ("ok": false) as errors', async () => {
    const { slack, client, calls } = await clientOnBus(true);
    await client.chat.postMessage({ channel: SLACK_IDS.channelId, text: 'hello' });
    slack.failNext('reactions.add', { status: 429, headers: { 'retry-after': '0' } });
    slack.failNext('chat.update', { status: 500 });
    await client.reactions
      .add({ channel: SLACK_IDS.channelId, timestamp: '1700000000.000100', name: 'eyes' })
      .catch(() => undefined);
    await client.chat
      .update({ channel: SLACK_IDS.channelId, ts: '1700000000.000100', text: 'x' })
      .catch(() => undefined);
    slack.failNext('chat.delete', 'message_not_found');
    await expect(client.chat.delete({ channel: SLACK_IDS.channelId, ts: '1700000000.000100' })).rejects.toThrow(
      /message_not_found/,
    );
    // A body's outcome is read from a clone after the WebClient got the answer.
    await waitFor(() => calls.length === slack.calls.length);
    const seen = calls.map((call) => `${call.method} ${call.outcome}`);
    expect(seen).toContain('chat.postMessage ok');
    expect(seen.filter((entry) => entry === 'reactions.add rate_limited')).toHaveLength(1);
    expect(seen).toContain('reactions.add ok');
    expect(seen).toContain('chat.update error');
    expect(seen).toContain('chat.delete error');
    expect(calls.every((call) => call.platform === 'slack')).toBe(true);
    // One event per answer Slack gave, retries included.
    expect(calls).toHaveLength(slack.calls.length);
  });

  it('with nothing listening, passes every call through untouched', async () => {
    const { client, calls } = await clientOnBus(false);
    const posted = await client.chat.postMessage({ channel: SLACK_IDS.channelId, text: 'hello' });
    expect(posted.ok).toBe(true);
    expect(calls).toHaveLength(0);
  });
});
