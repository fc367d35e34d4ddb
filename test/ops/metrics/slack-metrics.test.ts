// GET /metrics after a scripted session through the real bot: the real Bolt app in HTTP mode
// (PORT), the real core and OpenAI provider against FakeSlack and FakeOpenAI. The page is read
// over HTTP from the metrics' own listener on 127.0.0.1 (as run-bot.ts starts it) and parsed
// with a Prometheus text parser; each named series has the counts the session made, and no
// label carries an id. PORT, which Slack reaches, answers /metrics only behind METRICS_TOKEN.
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION } from '../../../connectors/slack/actions.js';
import { startMetricsServer, type MetricsServer } from '../../../src/app/metrics-server.js';
import { SLACK_IDS } from '../../fakes/slack-payloads.js';
import { waitFor } from '../../support/engine-kit.js';
import { bootSlackBot, waitForCard, type SlackBot } from '../../slack/slack-harness.js';
import { scrape } from './scrape.js';

const C = SLACK_IDS.channelId;

let bot: SlackBot | undefined;
let listener: MetricsServer | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
  await bot?.stop();
  bot = undefined;
});

/** /metrics on PORT, beside the Slack events. */
const metricsUrl = (b: SlackBot) => b.url.replace('/slack/events', '/metrics');

/** The metrics' own listener, on 127.0.0.1 and any free port. */
async function ownMetricsUrl(b: SlackBot): Promise<string> {
  listener = await startMetricsServer(b.core.metrics!, { host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${listener.port}/metrics`;
}

describe('GET /metrics on PORT (Slack HTTP mode)', () => {
  it('after an approved tool call, a steered answer and a stop, each series has its counts; a 429 is counted by method', async () => {
    bot = await bootSlackBot();
    const metricsAt = await ownMetricsUrl(bot);
    // Slack answers the first reaction with a 429: the WebClient waits, retries, and it goes through.
    bot.slack.failNext('reactions.add', { status: 429, headers: { 'retry-after': '0' } });

    // 1. A call that needs approval, approved by the starter; then the answer.
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }]);
    bot.llm.replyText('Written.');
    const first = await bot.mention('write a.txt');
    const card = await waitForCard(bot, first, 'write_file', (text) => text.includes(PROMPT_ACTION));
    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'once' });
    await waitFor(() => bot!.slack.thread(C, first).some((m) => m.text.includes('Written.')), 8000);
    await bot.idle();

    // 2. A reply while the answer streams is taken into the running turn (steering). Mid-turn,
    // the gauges show the working session, its queued reply and the model call in flight.
    const held = bot.llm.replyTextHeld('The first answer, to the end.');
    bot.llm.replyText('You said: shorter.');
    const second = await bot.mention('tell me something');
    await waitFor(() =>
      bot!.slack.thread(C, second).some((m) => m.user === SLACK_IDS.botUserId && (m.text ?? '').length > 0),
    );
    const reply = await bot.reply(second, 'actually, shorter');
    await waitFor(() => bot!.slack.reactionsOn(C, reply).some((r) => r.name === 'eyes'));
    const during = await scrape(metricsAt);
    expect(during.value('chat_agent_live_sessions')).toBe(2);
    expect(during.value('chat_agent_working_sessions')).toBe(1);
    expect(during.value('chat_agent_queued_steering_inputs')).toBe(1);
    expect(during.value('chat_agent_model_calls_running')).toBe(1);
    expect(during.value('chat_agent_model_calls_waiting')).toBe(0);
    held.release();
    await waitFor(() => bot!.slack.thread(C, second).some((m) => (m.text ?? '').includes('You said')), 8000);
    await bot.idle();

    // 3. A stalled answer stopped with 🛑.
    bot.llm.replyStall();
    const third = await bot.mention('think forever');
    await waitFor(() => bot!.llm.requests.length === 5);
    await bot.react(third, 'octagonal_sign');
    await bot.idle();
    await waitFor(() => bot!.slack.thread(C, third).some((m) => m.text.includes('Stopped')));

    const m = await scrape(metricsAt);
    // Turns: two completed, one interrupted, all on Slack.
    expect(m.value('chat_agent_turns_total', { platform: 'slack', outcome: 'completed' })).toBe(2);
    expect(m.value('chat_agent_turns_total', { platform: 'slack', outcome: 'interrupted' })).toBe(1);
    expect(m.value('chat_agent_turns_total')).toBe(3);
    // Model calls: five sent (two per finished turn, one stopped), named after the OTel GenAI metrics.
    const chat = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'openai', gen_ai_request_model: 'gpt-4.1' };
    expect(m.family('gen_ai_client_operation_duration_seconds').type).toBe('histogram');
    expect(m.count('gen_ai_client_operation_duration_seconds', chat)).toBe(5);
    expect(m.count('gen_ai_client_operation_duration_seconds', { ...chat, error_type: 'interrupted' })).toBe(1);
    expect(m.count('gen_ai_client_operation_time_to_first_chunk_seconds', chat)).toBe(4);
    expect(m.count('gen_ai_client_token_usage', { ...chat, gen_ai_token_type: 'input' })).toBe(4);
    expect(m.count('gen_ai_client_token_usage', { ...chat, gen_ai_token_type: 'output' })).toBe(4);
    expect(m.value('chat_agent_model_tokens_total', { token_type: 'input' })).toBeGreaterThan(0);
    // Tools, approvals, stops, steering.
    expect(m.value('chat_agent_tool_calls_total', { tool: 'write_file', outcome: 'ok' })).toBe(1);
    expect(m.value('chat_agent_tool_calls_total')).toBe(1);
    expect(m.value('chat_agent_approvals_total', { kind: 'approval', decision: 'once' })).toBe(1);
    expect(m.count('chat_agent_approval_wait_seconds', { kind: 'approval', decision: 'once' })).toBe(1);
    expect(m.value('chat_agent_stop_requests_total', { platform: 'slack' })).toBe(1);
    expect(m.count('chat_agent_stop_latency_seconds', { platform: 'slack' })).toBe(1);
    expect(m.value('chat_agent_steering_inputs_total', { platform: 'slack' })).toBe(1);
    // Slack's API: the 429 counted once, on its method; the retry and the other calls ok.
    expect(
      m.value('chat_agent_platform_calls_total', {
        platform: 'slack',
        method: 'reactions.add',
        outcome: 'rate_limited',
      }),
    ).toBe(1);
    expect(
      m.value('chat_agent_platform_calls_total', { platform: 'slack', method: 'reactions.add', outcome: 'ok' }),
    ).toBe(bot.slack.callsOf('reactions.add').filter((call) => call.status === 200).length);
    expect(m.value('chat_agent_platform_calls_total', { platform: 'slack', outcome: 'ok' })).toBeGreaterThan(10);
    // Idle again.
    expect(m.value('chat_agent_working_sessions')).toBe(0);

    // No label carries an id: not a session's, a channel's, a user's, a team's or a message's.
    const ids = [SLACK_IDS.teamId, C, SLACK_IDS.humanUserId, SLACK_IDS.botUserId, first, second, third, reply];
    const sessions = await bot.core.store.listSessionIds();
    expect(sessions).toHaveLength(3);
    for (const [label, values] of m.labelValues()) {
      for (const value of values) {
        expect(
          ids.some((id) => value.includes(id)),
          `${label}="${value}"`,
        ).toBe(false);
        expect(
          sessions.some((id) => value.includes(id)),
          `${label}="${value}"`,
        ).toBe(false);
        expect(value, `${label}`).not.toMatch(/\d{6,}|[CUT]0[A-Z0-9]{6,}/);
      }
    }
    // And each label takes only the values its kind has.
    expect(
      [...m.labelValues().get('chat_agent_platform_calls_total{method}')!].every((v) => /^[a-z]+\.[\w.]+$/.test(v)),
    ).toBe(true);
  });
});

describe('who may read /metrics on PORT', () => {
  it('without METRICS_TOKEN, nobody: PORT faces the internet (the own listener on 127.0.0.1 answers)', async () => {
    bot = await bootSlackBot();
    expect((await fetch(metricsUrl(bot))).status).toBe(404);
    expect((await fetch(bot.url.replace('/slack/events', '/healthz'))).status).toBe(200);
    expect((await scrape(await ownMetricsUrl(bot))).value('chat_agent_turns_total')).toBe(0);
  });

  it('with METRICS_TOKEN, only a request with that bearer token; /healthz stays open', async () => {
    const token = 'metrics-token-0123456789abcdef';
    bot = await bootSlackBot({ env: { METRICS_TOKEN: token } });
    const refused = await fetch(metricsUrl(bot));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(
      (await fetch(metricsUrl(bot), { headers: { authorization: 'Bearer not-the-token-at-all-0000' } })).status,
    ).toBe(401);
    const m = await scrape(metricsUrl(bot), { authorization: `Bearer ${token}` });
    expect(m.value('chat_agent_turns_total')).toBe(0);
    expect((await fetch(bot.url.replace('/slack/events', '/healthz'))).status).toBe(200);
    // The own listener asks for it too: one rule, whichever port is reached.
    const own = await ownMetricsUrl(bot);
    expect((await fetch(own)).status).toBe(401);
    expect((await scrape(own, { authorization: `Bearer ${token}` })).value('chat_agent_turns_total')).toBe(0);
  });

  it('with METRICS=off, there is no /metrics and nothing listens on the bus; /healthz answers as before', async () => {
    bot = await bootSlackBot({ env: { METRICS: 'off' } });
    expect((await fetch(metricsUrl(bot))).status).toBe(404);
    expect(bot.core.metrics).toBeUndefined();
    expect((await fetch(bot.url.replace('/slack/events', '/healthz'))).status).toBe(200);
  });
});
