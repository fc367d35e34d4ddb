// fetch_url in the bot as `npm start` runs it (the bundle, bin/build.mjs): the tool loads its
// HTTP client (undici, CommonJS, imported on first use) and reads a page, approved on Slack.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';
import { approveButtonOf, clickApprove } from '../support/slack-approve.js';

const SECRET = 'fetch-process-secret';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('npm start, fetch_url', () => {
  it('an approved fetch_url reads the page, and the model gets its text', { timeout: 60_000 }, async () => {
    const page = createServer((_request, response) =>
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><head><title>Release notes</title></head><body><p>Version 4.2 ships on Friday.</p></body></html>'),
    );
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => page.close(resolve)));
    const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/notes`;

    const fakes = await startBotFakes(cleanups);
    fakes.llm
      .replyToolCalls([{ name: 'fetch_url', arguments: { url }, id: 'call_fetch_1' }])
      .replyText('It ships on Friday.');
    const bot = await BotProcess.start(slackHttpEnv(fakes, SECRET, { FETCH_ALLOW_PRIVATE: 'true' }), fakes.dir, 30_000);
    cleanups.push(() => bot.kill());

    const mention = appMention({ text: 'when does 4.2 ship?' });
    fakes.slack.addMessage(mention);
    expect((await sendEvent(bot.eventsUrl, SECRET, eventCallback(mention))).status).toBe(200);
    const card = () =>
      fakes.slack
        .thread(SLACK_IDS.channelId, mention.ts)
        .find((message) => message.user === SLACK_IDS.botUserId && approveButtonOf(message));
    await waitFor(() => card() !== undefined, 20_000);
    expect(await clickApprove(fakes.slack, bot.eventsUrl, SECRET, card()!, mention.ts)).toBe(200);

    await waitFor(() => fakes.llm.requests.length === 2, 20_000);
    const result = JSON.stringify(fakes.llm.requests[1]!.body);
    expect(result).toContain('Version 4.2 ships on Friday.');
    await waitFor(
      () =>
        fakes.slack
          .thread(SLACK_IDS.channelId, mention.ts)
          .some((message) => message.text.includes('It ships on Friday.')),
      20_000,
    );
  });
});
