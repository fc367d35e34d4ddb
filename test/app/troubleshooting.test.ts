// docs/troubleshooting.md, as it happens: each case through the real start
// command (a child process, as `npm start` runs) against the local fakes, what the bot shows
// and logs, and the page quoting the bot's own words, so neither drifts from the other.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeDiscord } from '../fakes/discord-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { appMention, eventCallback, SLACK_IDS, urlVerification } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { startBotFakes, slackHttpEnv } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';
import { freePort } from '../support/loopback-port.js';
import { tempDir } from '../support/test-connector.js';

const SECRET = 'troubleshooting-signing-secret';
const PAGE = readFileSync(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** docs/troubleshooting.md, from its "# Troubleshooting" title on. */
function troubleshooting(): string {
  const start = PAGE.indexOf('# Troubleshooting\n');
  expect(start, 'docs/troubleshooting.md has its "# Troubleshooting" title').toBe(0);
  return PAGE;
}

/** The bot in Slack HTTP mode against the fakes, `overrides` last. */
async function slackBot(overrides: Record<string, string> = {}) {
  const fakes = await startBotFakes(cleanups);
  const bot = await BotProcess.start(slackHttpEnv(fakes, SECRET, overrides), fakes.dir);
  cleanups.push(() => bot.kill());
  return { ...fakes, bot };
}

describe('docs/troubleshooting.md, as the bot does it', () => {
  it('the model server is not running: the thread says it could not be reached, with Retry, and the log says "model call failed"', async () => {
    const port = await freePort(); // nothing listens there: Ollama not started
    const { slack, bot } = await slackBot({ OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` });
    await sendEvent(bot.eventsUrl, SECRET, eventCallback(appMention({ text: 'hello' })));
    const note = await slack.waitForCall(
      'chat.postMessage',
      (call) => String(call.args.text).startsWith('Error: '),
      20_000,
    );
    expect(note.args.text).toBe(
      `Error: Could not reach 127.0.0.1:${port} (OpenAI-compatible): check the network or the base URL.`,
    );
    expect(JSON.stringify(note.args.blocks)).toContain('"text":"Retry"');
    await waitFor(() => bot.lines().some((line) => line.msg === 'model call failed'), 5_000);
    expect(bot.lines().find((line) => line.msg === 'model call failed')).toMatchObject({
      level: 40,
      kind: 'connection',
    });

    const section = troubleshooting();
    expect(section).toContain(
      'Could not reach localhost:11434 (OpenAI-compatible): check the network or the base URL.',
    );
    expect(section).toContain('`model call failed`');
  });

  it('Slack HTTP mode: the URL check\'s challenge is answered at /slack/events; signed with another secret it gets 401 and a "signature mismatch" warning', async () => {
    const { bot } = await slackBot();
    const challenge = '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P';
    const answered = await sendEvent(bot.eventsUrl, SECRET, urlVerification(challenge));
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body)).toEqual({ challenge });

    const refused = await sendEvent(bot.eventsUrl, 'another-apps-signing-secret', urlVerification(challenge));
    expect(refused.status).toBe(401);
    const warning = 'Failed to parse and verify the request data: Failed to verify authenticity: signature mismatch';
    await waitFor(() => bot.lines().some((line) => line.msg === warning), 5_000);
    expect(bot.lines().find((line) => line.msg === warning)).toMatchObject({ level: 40, source: 'bolt' });
    // What the section tells to try: the health check on the same port.
    expect(await (await fetch(new URL('/healthz', bot.eventsUrl))).json()).toEqual({ ok: true });

    const section = troubleshooting();
    for (const words of [
      'url_verification',
      '`https://<your host>/slack/events`',
      warning,
      'SLACK_SIGNING_SECRET',
      '{"ok":true}',
    ])
      expect(section).toContain(words);
  });

  it('no bubblewrap (macOS, a container): the bot starts without run_shell, and one start-up warning says why and how to fix it', async () => {
    const emptyBin = await tempDir(); // a PATH without bwrap
    cleanups.push(emptyBin.remove);
    const { llm, bot } = await slackBot({ PATH: emptyBin.path });
    const lines = bot.lines().filter((line) => String(line.msg).startsWith('run_shell is not offered'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40 });
    expect(lines[0]!.msg).toMatch(
      /^run_shell is not offered: the shell sandbox cannot run here: bwrap was not found\. To fix: install bubblewrap .* or set SHELL_SANDBOX=off /,
    );

    llm.replyText('No shell here.');
    await sendEvent(bot.eventsUrl, SECRET, eventCallback(appMention({ text: 'run ls' })));
    await waitFor(() => llm.requests.length === 1, 10_000);
    const offered = ((llm.requests[0]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map(
      (tool) => tool.function.name,
    );
    expect(offered).toContain('read_file');
    expect(offered).not.toContain('run_shell');

    const section = troubleshooting();
    for (const words of ['run_shell is not offered: the shell sandbox cannot run here', 'SHELL_SANDBOX=off', 'seccomp'])
      expect(section).toContain(words);
  });

  it('Discord without the Message Content intent: the start stops and names the switch to turn on', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const discord = await new FakeDiscord({ privilegedIntents: { messageContent: false } }).start();
    cleanups.push(() => discord.stop());
    const llm = await new FakeOpenAI().start();
    cleanups.push(() => llm.stop());
    const env = {
      MODEL: 'openai:gpt-4.1',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: llm.baseURL,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      STORE_URL: `sqlite://${join(dir.path, 'data', 'bot.sqlite')}`,
      WORKSPACE_DIR: join(dir.path, 'workspace'),
    };
    const start = BotProcess.start(env, dir.path, 30_000, { waitFor: 'discord' });
    await expect(start).rejects.toThrow(
      /Could not start: Discord refused the Message Content intent \(Used disallowed intents\): the bot needs it to read replies in its threads\. Turn on Message Content Intent in the Developer Portal → your application → Bot → Privileged Gateway Intents/,
    );
    await expect(start).rejects.not.toThrow(/did not accept DISCORD_TOKEN/);

    const section = troubleshooting();
    for (const words of ['Discord refused the Message Content intent', 'Privileged Gateway Intents'])
      expect(section).toContain(words);
  });
  it("Slack: an app installed without files:read gets the sign-in page for a shared file: nothing is saved, and the thread's note names the scope", async () => {
    const { slack, llm, dir, bot } = await slackBot();
    // An install from before the bot read files: the token works, but not for files.
    slack.revokeScope('files:read');
    llm.replyText('I could not open it.');
    const csv = slack.files.add({ bytes: 'a,b\n1,2\n', name: 'rain.csv', mimetype: 'text/csv' });
    const mention = appMention({ text: 'summarise this', files: [csv] });
    slack.addMessage(mention);
    await sendEvent(bot.eventsUrl, SECRET, eventCallback(mention));
    const note = await slack.waitForCall(
      'chat.postMessage',
      (call) => String(call.args.text).includes('did not reach the model'),
      20_000,
    );
    const shown =
      "not saved: Slack sent its sign-in page instead of the file, so the bot's token was not accepted for files.";
    expect(note.args).toMatchObject({ channel: SLACK_IDS.channelId, thread_ts: mention.ts });
    expect(String(note.args.text)).toContain(shown);
    expect(String(note.args.text)).toContain('files:read');
    expect(slack.files.downloadsOf(csv.id).map((d) => d.served)).toEqual(['sign-in page']);
    expect(
      readdirSync(join(dir, 'workspace'), { recursive: true })
        .map(String)
        .filter((path) => path.includes('rain')),
    ).toEqual([]);

    const section = troubleshooting();
    for (const words of [
      'Some files shared here did not reach the model:',
      shown,
      '`files:read`',
      '**Reinstall to Workspace**',
    ])
      expect(section).toContain(words);
  });
});
