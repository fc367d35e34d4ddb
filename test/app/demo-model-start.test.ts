// The demo model and `npm start` (main.ts in a child process, against the fake Slack in HTTP
// mode, with no model server and no key): it is never the bot's default, but it may be named.
// Without MODEL the bot still refuses to start; with MODEL=demo it starts, warns that it
// answers from a script, and a mention on Slack gets the scripted answer (a platform's setup
// checked end to end before any key is at hand).
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';

const SECRET = 'signing-secret';
const C = SLACK_IDS.channelId;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Slack in HTTP mode against the fakes, with no model at all: no key, no model server. */
async function slackWithoutModel(overrides: Record<string, string>) {
  const fakes = await startBotFakes(cleanups);
  return { ...fakes, env: slackHttpEnv(fakes, SECRET, { OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ...overrides }) };
}

describe('npm start and the demo model', () => {
  it("without MODEL the bot still refuses to start: the demo is only the playground's default", async () => {
    const { dir, env } = await slackWithoutModel({ MODEL: '' });
    await expect(BotProcess.start(env, dir, 20_000)).rejects.toThrow(
      /exited \(2\) before it started[\s\S]*MODEL: missing/,
    );
  });

  it('with MODEL=demo it starts with a warning, and a mention on Slack gets the scripted answer', async () => {
    const { dir, env, slack, llm } = await slackWithoutModel({ MODEL: 'demo' });
    const bot = await BotProcess.start(env, dir, 30_000);
    cleanups.push(() => bot.kill());
    expect(
      bot.lines().find((line) => Number(line.level) === 40 && String(line.msg).startsWith('MODEL=demo'))?.msg,
    ).toMatch(/built-in demo model \(scripted answers, no AI\)/);

    const mention = appMention({ text: 'hello' });
    await sendEvent(bot.eventsUrl, SECRET, eventCallback(mention));
    await waitFor(
      () =>
        slack
          .thread(C, mention.ts)
          .some((message) => message.user === SLACK_IDS.botUserId && message.text.includes('scripted answers, no AI')),
      20_000,
    );
    expect(llm.requests).toHaveLength(0);
  }, 60_000);
});
