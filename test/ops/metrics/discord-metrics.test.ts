// `npm start` with Discord, HEALTH_PORT and METRICS_TOKEN: GET /metrics answers beside /healthz
// to the bearer token (and to nobody without it), and after a mention answered through a 429 it
// counts the turn on Discord and the REST calls by route template (never a snowflake). The bot
// is a child process; Discord and the model are fakes.
import { afterEach, describe, expect, it } from 'vitest';
import { DISCORD_IDS, mention } from '../../fakes/discord-payloads.js';
import { discordEnv, startDiscordBotFakes } from '../../support/bot-fakes.js';
import { BotProcess } from '../../support/bot-process.js';
import { waitFor } from '../../support/engine-kit.js';
import { scrape } from './scrape.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const TOKEN = 'metrics-token-0123456789abcdef';
const bearer = { authorization: `Bearer ${TOKEN}` };

describe('/metrics on HEALTH_PORT (Discord, npm start)', () => {
  it('counts the turn on Discord and each REST call by method and route template, a 429 as rate_limited', async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const { dir, fake, llm } = fakes;
    llm.replyText('Hello from the process.');
    const bot = await BotProcess.start(discordEnv(fakes, { HEALTH_PORT: '0', METRICS_TOKEN: TOKEN }), dir, 30_000, {
      waitFor: 'discord',
    });
    cleanups.push(() => bot.kill());
    let port = 0;
    await waitFor(() => {
      const line = bot.lines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('health endpoint'));
      port = typeof line?.port === 'number' ? line.port : 0;
      return port > 0;
    }, 15_000);
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(401);

    // Discord answers the bot's first post with a 429; discord.js waits and posts again.
    fake.rest.rateLimitNext('POST /channels/:channel/messages', 1, { retryAfterMs: 100 });
    const asked = fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} say hello` });
    await fake.waitForMessage(asked.id, (m) => m.content.includes('Hello from the process.'), 15_000);

    // The turn's end is counted just after its last post: read until it is there (bounded).
    let m = await scrape(`${base}/metrics`, bearer);
    for (let i = 0; i < 50 && m.value('chat_agent_turns_total') < 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      m = await scrape(`${base}/metrics`, bearer);
    }
    expect(m.value('chat_agent_turns_total', { platform: 'discord', outcome: 'completed' })).toBe(1);
    expect(
      m.count('gen_ai_client_operation_duration_seconds', {
        gen_ai_provider_name: 'openai',
        gen_ai_request_model: 'gpt-4.1',
      }),
    ).toBe(1);
    // Each post the fake answered is counted once on its route template, the 429 included.
    const posts = fake.rest.calls.filter((call) => call.route === 'POST /channels/:channel/messages').length;
    const post = { platform: 'discord', method: 'POST /channels/:id/messages' };
    expect(m.value('chat_agent_platform_calls_total', { ...post, outcome: 'rate_limited' })).toBe(1);
    expect(m.value('chat_agent_platform_calls_total', { ...post, outcome: 'ok' })).toBe(posts - 1);
    // Route templates only: no snowflake, no token.
    const methods = [...(m.labelValues().get('chat_agent_platform_calls_total{method}') ?? [])];
    expect(methods.length).toBeGreaterThan(2);
    for (const method of methods) expect(method).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \/[\w/:@.-]*$/);
    for (const values of m.labelValues().values()) for (const value of values) expect(value).not.toMatch(/\d{17,19}/);
  });
});
