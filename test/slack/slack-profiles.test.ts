// Profiles per place through the real bot on Slack: the Bolt app against the fake
// Slack, the OpenAI SDK against the fake model, a PROFILES file of two channel profiles over
// the environment's default. What each channel's model requests carry (system message, model,
// tools), who approves where, the file edited while the bot runs (a good edit holds from the
// next turn, a broken one changes nothing), /status, a narrowed channel, and the name and icon
// a profile gives the bot's posts (chat:write.customize).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { DEFAULT_SYSTEM_PROMPT } from '../../src/system-prompt.js';
import { waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const GENERAL = SLACK_IDS.channelId;
const SUPPORT = 'C0SUPPORT1';
const OPS = 'C0OPS00001';
const SECRET_ROOM = 'C0SECRET01';
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';
const ONCALL = 'U0ONCALL01';

const profilesYaml = (opsInstructions = 'You help the on-call engineer. OPS-V1') => `profiles:
  - name: support
    match: { slackChannel: ${SUPPORT} }
    instructions: "You answer Acme's customers, kindly. SUPPORT-ONLY"
    instructionsMode: replace
    model: openai:gpt-4o-mini
    tools: [read_file, search]
    identity: { name: Acme Support, iconEmoji: ":headphones:" }
  - name: ops
    match: { slackChannel: ${OPS} }
    instructions: "${opsInstructions}"
    model: openai:gpt-4.1-mini
    tools: [read_file, write_file, run_shell]
    admins: [${ONCALL}]
    identity: { name: Ops Bot, iconUrl: "https://example.com/ops.png" }
  - name: secret
    match: { slackChannel: ${SECRET_ROOM} }
    allowedUsers: [${ADA}]
`;

interface Body {
  model: string;
  messages: { role: string; content: unknown }[];
  tools?: { function: { name: string } }[];
}
const bodies = (b: SlackBot) => b.llm.requests.map((request) => request.body as Body);
const systemOf = (body: Body) => String(body.messages.find((m) => m.role === 'system')?.content);
const toolsOf = (body: Body) => (body.tools ?? []).map((tool) => tool.function.name).sort();
const whispersTo = (b: SlackBot, channel: string, user: string) =>
  b.slack
    .ephemerals(channel)
    .filter((e) => e.user === user)
    .map((e) => e.text);

let bot: SlackBot | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  while (cleanups.length) await cleanups.pop()!();
});

async function bootWithProfiles(
  yaml = profilesYaml(),
  env: Record<string, string> = {},
): Promise<{ bot: SlackBot; file: string }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const file = join(dir.path, 'profiles.yaml');
  await writeFile(file, yaml);
  bot = await bootSlackBot({
    env: { PROFILES: file, MODELS: 'openai:gpt-4.1, openai:gpt-4.1-mini, openai:gpt-4o-mini', ...env },
  });
  return { bot, file };
}

/** A new thread in `channel` whose one turn is a text answer; its root ts. */
async function answered(b: SlackBot, channel: string, text: string, user = ADA): Promise<string> {
  const before = b.llm.requests.length;
  b.llm.replyText(`Answer to ${text}.`);
  const root = await b.mention(text, { channel, user });
  await waitFor(() => b.llm.requests.length === before + 1, 8_000);
  await b.idle();
  return root;
}

describe('two channels with their own profiles, and the default elsewhere', () => {
  it('each channel’s model requests carry its instructions, model and tools; the support channel never offers run_shell', async () => {
    const { bot: b } = await bootWithProfiles();
    const root = await answered(b, SUPPORT, 'where is my order?');
    await answered(b, OPS, 'is the deploy done?');
    await answered(b, GENERAL, 'hello');
    const [support, ops, general] = bodies(b);

    // support: its instructions replace the system message; its model; its two tools.
    expect(support!.model).toBe('gpt-4o-mini');
    expect(systemOf(support!)).toContain("You answer Acme's customers, kindly. SUPPORT-ONLY");
    expect(systemOf(support!)).not.toContain(DEFAULT_SYSTEM_PROMPT.slice(0, 60));
    expect(toolsOf(support!)).toEqual(['read_file', 'search']);
    // ops: appended to the default prompt; its model and tools, the shell among them.
    expect(ops!.model).toBe('gpt-4.1-mini');
    expect(systemOf(ops!)).toContain(DEFAULT_SYSTEM_PROMPT.slice(0, 60));
    expect(systemOf(ops!)).toContain('You help the on-call engineer. OPS-V1');
    expect(toolsOf(ops!)).toEqual(['read_file', 'run_shell', 'write_file']);
    // general: the environment's own.
    expect(general!.model).toBe('gpt-4.1');
    expect(systemOf(general!)).not.toMatch(/SUPPORT-ONLY|OPS-V1/);
    expect(toolsOf(general!)).toEqual(expect.arrayContaining(['run_shell', 'write_file', 'fetch_url']));

    // A second turn in the support thread, asked for the shell: still not offered, and a call
    // the model makes up anyway is not run.
    b.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo hacked' } }]);
    b.llm.replyText('I cannot run commands here.');
    await b.reply(root, 'run echo hacked for me', { channel: SUPPORT });
    await waitFor(() => b.llm.requests.length === 5, 8_000);
    await b.idle();
    for (const body of bodies(b).slice(3)) expect(toolsOf(body)).not.toContain('run_shell');
    expect(JSON.stringify(bodies(b)[4]!.messages.filter((m) => m.role === 'tool'))).not.toContain('hacked\\n');
  });

  it('/status names the thread’s profile', async () => {
    const { bot: b } = await bootWithProfiles();
    const opsRoot = await answered(b, OPS, 'hi');
    const generalRoot = await answered(b, GENERAL, 'hi');
    await b.mention('/status', { channel: OPS, threadTs: opsRoot });
    await waitFor(() => whispersTo(b, OPS, ADA).length > 0);
    expect(whispersTo(b, OPS, ADA)[0]).toMatch(/Profile:\*? ops/);
    await b.mention('/status', { channel: GENERAL, threadTs: generalRoot });
    await waitFor(() => whispersTo(b, GENERAL, ADA).length > 0);
    expect(whispersTo(b, GENERAL, ADA)[0]).toMatch(/Profile:\*? default/);
  });

  it('allowedUsers: someone else’s mention in that channel is refused privately and never reaches the model', async () => {
    const { bot: b } = await bootWithProfiles();
    await b.mention('summarise the secret plans', { channel: SECRET_ROOM, user: BOB });
    await waitFor(() => whispersTo(b, SECRET_ROOM, BOB).length > 0);
    expect(whispersTo(b, SECRET_ROOM, BOB)[0]).toBe(
      'This channel is set up for a list of people, and you are not on it; ask an admin.',
    );
    expect(b.llm.requests).toHaveLength(0);
    expect(b.slack.callsOf('chat.postMessage').filter((call) => call.args.channel === SECRET_ROOM)).toEqual([]);
    // Ada, on its list, is answered.
    await answered(b, SECRET_ROOM, 'and for me?');
    expect(b.llm.requests).toHaveLength(1);
  });
});

describe('approvers per channel', () => {
  it('in ops the profile’s admin approves and the starter may not; the same admin’s click in a default thread is refused privately', async () => {
    const { bot: b } = await bootWithProfiles();
    b.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'runbook.md', content: 'restart it' } }]);
    b.llm.replyText('Written.');
    const opsRoot = await b.mention('write the runbook', { channel: OPS });
    const opsCard = await waitForCard(b, opsRoot, 'write_file', (text) => text.includes(PROMPT_ACTION), OPS);

    const refused = await b.click(opsCard.ts, { actionId: PROMPT_ACTION, choice: 'once' }, { channel: OPS, user: ADA });
    expect(JSON.stringify(await b.slack.waitForResponse(refused))).toContain('Only the bot admins can approve this.');
    expect(b.llm.requests).toHaveLength(1);
    await b.click(opsCard.ts, { actionId: PROMPT_ACTION, choice: 'once' }, { channel: OPS, user: ONCALL });
    await waitFor(() => b.llm.requests.length === 2, 8_000);
    await b.idle();
    expect(JSON.stringify(bodies(b)[1]!.messages.filter((m) => m.role === 'tool'))).toContain('bytesWritten');

    // A default thread: no admins anywhere, so its starter approves, and ops' admin may not.
    b.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes.md', content: 'mine' } }]);
    b.llm.replyText('Written too.');
    const generalRoot = await b.mention('write my notes', { channel: GENERAL });
    const generalCard = await waitForCard(
      b,
      generalRoot,
      'write_file',
      (text) => text.includes(PROMPT_ACTION),
      GENERAL,
    );
    const elsewhere = await b.click(
      generalCard.ts,
      { actionId: PROMPT_ACTION, choice: 'once' },
      { channel: GENERAL, user: ONCALL },
    );
    expect(JSON.stringify(await b.slack.waitForResponse(elsewhere))).toContain(
      'Only the person who started this thread can approve this.',
    );
    expect(b.llm.requests).toHaveLength(3);
    await b.click(generalCard.ts, { actionId: PROMPT_ACTION, choice: 'once' }, { channel: GENERAL, user: ADA });
    await waitFor(() => b.llm.requests.length === 4, 8_000);
    await b.idle();
  });
});

describe('a profile’s budgets', () => {
  it('its channel limit holds in its channel (a new request refused privately) and not in the default channel', async () => {
    // $1 per million tokens either way; ops may spend $0.05 a day, the environment sets no limit.
    const prices = JSON.stringify({
      'openai:gpt-4.1': { input: 1, output: 1 },
      'openai:gpt-4.1-mini': { input: 1, output: 1 },
    });
    const { bot: b } = await bootWithProfiles(
      profilesYaml().replace(
        `    admins: [${ONCALL}]`,
        `    admins: [${ONCALL}]\n    budgets: { channelDaily: "$0.05" }`,
      ),
      { MODEL_PRICES: prices },
    );
    for (const channel of [OPS, GENERAL]) {
      const before = b.llm.requests.length;
      b.llm.replyText('A costly answer.', { usage: { prompt_tokens: 60_000, completion_tokens: 10 } });
      await b.mention('think hard', { channel });
      await waitFor(() => b.llm.requests.length === before + 1, 8_000);
      await b.idle();
    }
    // $0.06 spent in each channel: ops is past its $0.05, general has no limit.
    await b.mention('and another thing', { channel: OPS, user: BOB });
    await waitFor(() => whispersTo(b, OPS, BOB).length > 0, 8_000);
    expect(whispersTo(b, OPS, BOB)[0]).toMatch(/^Not started: this channel's daily budget of \$0\.05 is spent/);
    expect(b.llm.requests).toHaveLength(2);
    await answered(b, GENERAL, 'and another thing');
    expect(b.llm.requests).toHaveLength(3);
  });
});

describe('the file edited while the bot runs', () => {
  it('a good edit holds from the next turn (a new thread, and an idle thread’s next turn); a broken one changes nothing', async () => {
    const { bot: b, file } = await bootWithProfiles();
    const opsRoot = await answered(b, OPS, 'first');
    expect(systemOf(bodies(b)[0]!)).toContain('OPS-V1');

    await writeFile(file, profilesYaml('You help the on-call engineer. OPS-V2'));
    expect(await b.core.profileReloader!.reload()).toEqual({ ok: true, profiles: ['support', 'ops', 'secret'] });
    b.llm.replyText('Second.');
    await b.reply(opsRoot, 'second', { channel: OPS });
    await waitFor(() => b.llm.requests.length === 2, 8_000);
    await b.idle();
    expect(systemOf(bodies(b)[1]!)).toContain('OPS-V2');
    expect(systemOf(bodies(b)[1]!)).not.toContain('OPS-V1');
    await answered(b, OPS, 'a new thread');
    expect(systemOf(bodies(b)[2]!)).toContain('OPS-V2');

    // Broken twice: an unknown key and a mode that does not exist (both logged), then a tool
    // that does not exist. V2 stays.
    await writeFile(
      file,
      profilesYaml('OPS-V3')
        .replace('    admins:', '    colour: red\n    admins:')
        .replace('instructionsMode: replace', 'instructionsMode: sideways'),
    );
    const broken = await b.core.profileReloader!.reload();
    expect(broken.ok ? [] : broken.problems).toEqual([
      expect.stringContaining('instructionsMode'),
      expect.stringContaining('"colour"'),
    ]);
    await writeFile(file, profilesYaml('OPS-V3').replace('tools: [read_file, search]', 'tools: [read_file, teleport]'));
    expect(await b.core.profileReloader!.reload()).toEqual({
      ok: false,
      problems: [expect.stringContaining('teleport')],
    });
    const errors = b.logs.lines.filter((line) => line.level === 'error').map((line) => line.message);
    for (const word of ['instructionsMode', 'colour', 'teleport'])
      expect(errors.some((msg) => msg.includes(word))).toBe(true);
    b.llm.replyText('Third.');
    await b.reply(opsRoot, 'third', { channel: OPS });
    await waitFor(() => b.llm.requests.length === 4, 8_000);
    await b.idle();
    expect(systemOf(bodies(b)[3]!)).toContain('OPS-V2');
    expect(toolsOf(bodies(b)[3]!)).toEqual(['read_file', 'run_shell', 'write_file']);
  });
});

describe('a profile’s name and icon on Slack (chat:write.customize)', () => {
  it('the bot’s posts in the profile’s channel carry its username and icon, its answers are posted (not streamed); elsewhere none', async () => {
    const { bot: b } = await bootWithProfiles();
    const opsRoot = await answered(b, OPS, 'status?');
    const supportRoot = await answered(b, SUPPORT, 'refund?');
    await answered(b, GENERAL, 'hi');
    const posts = (channel: string) =>
      b.slack.callsOf('chat.postMessage').filter((call) => call.args.channel === channel);
    const streams = (channel: string) =>
      b.slack.callsOf('chat.startStream').filter((call) => call.args.channel === channel);

    expect(posts(OPS).length).toBeGreaterThan(0);
    for (const post of posts(OPS))
      expect(post.args).toMatchObject({ username: 'Ops Bot', icon_url: 'https://example.com/ops.png' });
    for (const post of posts(OPS)) expect(post.args.icon_emoji).toBeUndefined();
    expect(b.slack.thread(OPS, opsRoot).map((m) => m.text)).toContain('Answer to status?.');
    expect(streams(OPS)).toEqual([]);

    for (const post of posts(SUPPORT))
      expect(post.args).toMatchObject({ username: 'Acme Support', icon_emoji: ':headphones:' });
    expect(b.slack.thread(SUPPORT, supportRoot).map((m) => m.text)).toContain('Answer to refund?.');

    // The default channel: the app's own name and icon, and its answer streamed natively.
    expect(streams(GENERAL).length).toBeGreaterThan(0);
    for (const call of [...posts(GENERAL), ...streams(GENERAL)]) {
      expect(call.args.username).toBeUndefined();
      expect(call.args.icon_url).toBeUndefined();
      expect(call.args.icon_emoji).toBeUndefined();
    }
  });

  it('a command’s visible answer in the channel carries it too', async () => {
    const { bot: b } = await bootWithProfiles();
    const root = await answered(b, OPS, 'hi');
    await b.mention('/model openai:gpt-4.1', { channel: OPS, threadTs: root });
    const switched = await b.slack.waitForCall(
      'chat.postMessage',
      (call) => String(call.args.text).includes('openai:gpt-4.1'),
      8_000,
    );
    expect(switched.args).toMatchObject({ channel: OPS, username: 'Ops Bot', icon_url: 'https://example.com/ops.png' });
  });
});

describe('npm start with PROFILES (the compiled bot in a child process)', () => {
  it('two channels get their own model requests and the profile’s name on its posts; a broken file stops the start with every problem', async () => {
    const fakes = await startBotFakes(cleanups);
    const file = join(fakes.dir, 'profiles.yaml');
    await writeFile(file, profilesYaml());
    const env = slackHttpEnv(fakes, 'signing-secret-4242', {
      PROFILES: file,
      MODELS: 'openai:gpt-4.1, openai:gpt-4.1-mini, openai:gpt-4o-mini',
    });
    fakes.slack.setBotToken(env.SLACK_BOT_TOKEN);
    const started = await BotProcess.start(env, fakes.dir, 60_000);
    cleanups.push(() => started.kill());
    expect(
      started
        .lines()
        .filter((line) => String(line.msg).startsWith('profiles read'))
        .map((line) => [line.msg, line.profiles]),
    ).toEqual([[`profiles read from ${file}`, ['support', 'ops', 'secret']]]);

    for (const [channel, text] of [
      [SUPPORT, 'where is my order?'],
      [OPS, 'is the deploy done?'],
    ] as const) {
      const before = fakes.llm.requests.length;
      fakes.llm.replyText(`Answer to ${text}.`);
      const mention = appMention({ text, channel });
      fakes.slack.addMessage(mention);
      expect((await sendEvent(started.eventsUrl, 'signing-secret-4242', eventCallback(mention))).status).toBe(200);
      await waitFor(() => fakes.llm.requests.length === before + 1, 20_000);
    }
    const [support, ops] = fakes.llm.requests.map((request) => request.body as Body);
    expect([support!.model, ops!.model]).toEqual(['gpt-4o-mini', 'gpt-4.1-mini']);
    expect(systemOf(support!)).toContain('SUPPORT-ONLY');
    expect(systemOf(support!)).not.toContain(DEFAULT_SYSTEM_PROMPT.slice(0, 60));
    expect(systemOf(ops!)).toContain('OPS-V1');
    expect(toolsOf(support!)).toEqual(['read_file', 'search']);
    expect(toolsOf(ops!)).toEqual(['read_file', 'run_shell', 'write_file']);
    const opsPost = await fakes.slack.waitForCall('chat.postMessage', (call) => call.args.channel === OPS, 20_000);
    expect(opsPost.args).toMatchObject({ username: 'Ops Bot', icon_url: 'https://example.com/ops.png' });
    await started.kill();

    // A broken file: the start stops, naming each problem.
    await writeFile(
      file,
      profilesYaml()
        .replace('    admins:', '    colour: red\n    admins:')
        .replace('instructionsMode: replace', 'instructionsMode: sideways'),
    );
    const refused = await BotProcess.start(env, fakes.dir, 60_000).then(
      async (bot) => {
        await bot.kill();
        return 'started';
      },
      (error: unknown) => String(error),
    );
    expect(refused).toContain('the bot exited');
    expect(refused).toContain('"colour"');
    expect(refused).toContain('instructionsMode');
  });
});
