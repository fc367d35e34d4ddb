// Files on Slack through `npm start` as a user runs it: the compiled bot in a child process
// against the fake Slack and the fake model. A mention with a screenshot: the bot fetches it
// with its token, keeps it under uploads/, shows it to the model, and its logs never carry the
// token. A mention with a PDF: its text reaches the model, read by the PDF reader's own process,
// whose entry the build carries beside the bundle (bin/build.mjs).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { startBotFakes, slackHttpEnv } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { waitFor } from '../support/engine-kit.js';
import { writeTextPdf } from '../support/file-fixtures.js';

const SECRET = 'files-process-secret';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('npm start on Slack, with a file', () => {
  it('a mention with a PNG: fetched with the bot token into uploads/, sent to the model as an image, the token in no log line', async () => {
    const fakes = await startBotFakes(cleanups);
    const env = slackHttpEnv(fakes, SECRET, { LOG_LEVEL: 'debug' });
    fakes.slack.setBotToken(env.SLACK_BOT_TOKEN);
    fakes.llm.replyText('An empty chart.');
    const bot = await BotProcess.start(env, fakes.dir, 30_000);
    cleanups.push(() => bot.kill());

    const shot = fakes.slack.files.add({ bytes: PNG, name: 'chart.png', mimetype: 'image/png' });
    const mention = appMention({ text: 'why is this chart empty?', files: [shot] });
    fakes.slack.addMessage(mention);
    expect((await sendEvent(bot.eventsUrl, SECRET, eventCallback(mention))).status).toBe(200);
    await waitFor(() => fakes.llm.requests.length === 1, 20_000);

    expect(fakes.slack.files.downloadsOf(shot.id)).toMatchObject([{ served: 'file', authorized: true }]);
    expect((await readFile(inOnlyConversation(join(fakes.dir, 'workspace'), 'uploads', 'chart.png'))).equals(PNG)).toBe(
      true,
    );
    expect(JSON.stringify(fakes.llm.requests[0]!.body)).toContain(`data:image/png;base64,${PNG.toString('base64')}`);
    expect(bot.stdout + bot.stderr).not.toContain(env.SLACK_BOT_TOKEN);
  });

  it(
    "a mention with a PDF: the model gets the PDF's text, read in the reader process the build carries",
    { timeout: 60_000 },
    async () => {
      const fakes = await startBotFakes(cleanups);
      const env = slackHttpEnv(fakes, SECRET);
      fakes.slack.setBotToken(env.SLACK_BOT_TOKEN);
      fakes.llm.replyText('Revenue grew.');
      const bot = await BotProcess.start(env, fakes.dir, 30_000);
      cleanups.push(() => bot.kill());

      const pdf = await readFile(await writeTextPdf(join(fakes.dir, 'q3.pdf'), [['Q3 report', 'Revenue: 4,213']]));
      const report = fakes.slack.files.add({ bytes: pdf, name: 'q3.pdf', mimetype: 'application/pdf' });
      const mention = appMention({ text: 'what does the report say?', files: [report] });
      fakes.slack.addMessage(mention);
      expect((await sendEvent(bot.eventsUrl, SECRET, eventCallback(mention))).status).toBe(200);
      await waitFor(() => fakes.llm.requests.length === 1, 30_000);

      const seen = JSON.stringify(fakes.llm.requests[0]!.body);
      expect(seen).toContain('Q3 report');
      expect(seen).toContain('Revenue: 4,213');
    },
  );
});
