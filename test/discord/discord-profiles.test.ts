// Profiles per place through the real bot on Discord: discord.js against the fake
// Discord, the OpenAI SDK against the fake model, a PROFILES file with a profile for #general
// (ops: the shell, an approver) and one for #random (support: its own prompt and model, no
// shell, a list of who may use it), DMs under the environment's default. What each place's
// model requests carry, who approves where, the file edited while the bot runs, /status, the
// narrowed channel; and the same through `npm start` in a child process.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { APIMessage } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeDiscord } from '../fakes/discord-server.js';
import { DEFAULT_SYSTEM_PROMPT } from '../../src/system-prompt.js';
import { discordEnv, startDiscordBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';
import {
  bootDiscordBot,
  buttonsOf,
  DISCORD_IDS,
  mention,
  waitForBotMessage,
  type DiscordBot,
} from './discord-harness.js';
import { tempDir } from '../support/test-connector.js';

const GENERAL = DISCORD_IDS.generalChannelId;
const RANDOM = DISCORD_IDS.randomChannelId;
const ADA = DISCORD_IDS.humanUserId;
const GRACE = DISCORD_IDS.otherHumanUserId;
const CAROL = '300000000000000003';

const profilesYaml = (opsInstructions = 'You help the on-call engineer. OPS-V1') => `profiles:
  - name: ops
    match: { discordChannel: "${GENERAL}" }
    instructions: "${opsInstructions}"
    model: openai:gpt-4.1-mini
    tools: [read_file, write_file, run_shell]
    admins: ["${GRACE}"]
  - name: support
    match: { discordChannel: "${RANDOM}" }
    instructions: "You answer Acme's customers, kindly. SUPPORT-ONLY"
    instructionsMode: replace
    model: openai:gpt-4o-mini
    tools: [read_file, search, write_file]
    allowedUsers: ["${ADA}", "${GRACE}"]
`;
const MODELS = 'openai:gpt-4.1, openai:gpt-4.1-mini, openai:gpt-4o-mini';

interface Body {
  model: string;
  messages: { role: string; content: unknown }[];
  tools?: { function: { name: string } }[];
}
const bodiesOf = (requests: { body: unknown }[]) => requests.map((request) => request.body as Body);
const systemOf = (body: Body) => String(body.messages.find((m) => m.role === 'system')?.content);
const toolsOf = (body: Body) => (body.tools ?? []).map((tool) => tool.function.name).sort();

let bot: DiscordBot | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  while (cleanups.length) await cleanups.pop()!();
});

async function bootWithProfiles(): Promise<{ bot: DiscordBot; file: string }> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const file = join(dir.path, 'profiles.yaml');
  await writeFile(file, profilesYaml());
  const fake = await new FakeDiscord({ users: [{ id: CAROL, username: 'carol', globalName: 'Carol' }] }).start();
  cleanups.push(() => fake.stop());
  bot = await bootDiscordBot({ fake, env: { PROFILES: file, MODELS, DISCORD_GUILD_ID: DISCORD_IDS.guildId } });
  return { bot, file };
}

/** `author` mentions the bot in `channelId`; the message (its id is the thread's). */
function ask(b: DiscordBot, channelId: string, text: string, author = ADA): APIMessage {
  return b.fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} ${text}`, channelId, authorId: author });
}

/** A new thread whose one turn is a text answer. */
async function answered(b: DiscordBot, channelId: string, text: string): Promise<APIMessage> {
  b.llm.replyText(`Answer to ${text}.`);
  const asked = ask(b, channelId, text);
  await waitForBotMessage(b, asked.id, (m) => m.content.includes(`Answer to ${text}.`));
  await b.idle();
  return asked;
}

/** The private answer to a slash command (the deferred reply, edited). */
async function privateAnswer(b: DiscordBot, interactionId: string): Promise<string> {
  let content: string | undefined;
  await waitFor(() => {
    const token = b.fake.interaction(interactionId)!.token;
    const edit = b.fake.rest
      .callsTo('PATCH /webhooks/:application/:token/messages/:message')
      .find((c) => c.params.token === token);
    content = (edit?.body as { content?: string } | undefined)?.content;
    return content !== undefined;
  }, 8_000);
  return content!;
}

/** The private follow-up to a button click. */
async function clickRefusal(b: DiscordBot, interactionId: string): Promise<string> {
  let content: string | undefined;
  await waitFor(() => {
    const stored = b.fake.interaction(interactionId)!;
    if (stored.followUpIds.length === 0) return false;
    const post = b.fake.rest.callsTo('POST /webhooks/:application/:token').find((c) => c.params.token === stored.token);
    content = (post?.body as { content?: string; flags?: number } | undefined)?.content;
    expect((post?.body as { flags?: number }).flags).toBe(64);
    return content !== undefined;
  }, 8_000);
  return content!;
}

describe('two Discord channels with their own profiles, DMs under the default', () => {
  it('each place’s requests carry its instructions, model and tools; #random never offers run_shell', async () => {
    const { bot: b } = await bootWithProfiles();
    await answered(b, GENERAL, 'is the deploy done?');
    const supportThread = await answered(b, RANDOM, 'where is my order?');
    b.llm.replyText('Answer to hello.');
    const dm = b.fake.sendDirectMessage({ content: 'hello' });
    await waitForBotMessage(b, dm.channel_id, (m) => m.content.includes('Answer to hello.'));
    await b.idle();
    const [ops, support, direct] = bodiesOf(b.llm.requests);

    expect(ops!.model).toBe('gpt-4.1-mini');
    expect(systemOf(ops!)).toContain(DEFAULT_SYSTEM_PROMPT.slice(0, 60));
    expect(systemOf(ops!)).toContain('OPS-V1');
    expect(toolsOf(ops!)).toEqual(['read_file', 'run_shell', 'write_file']);
    expect(support!.model).toBe('gpt-4o-mini');
    expect(systemOf(support!)).toContain('SUPPORT-ONLY');
    expect(systemOf(support!)).not.toContain(DEFAULT_SYSTEM_PROMPT.slice(0, 60));
    expect(toolsOf(support!)).toEqual(['read_file', 'search', 'write_file']);
    expect(direct!.model).toBe('gpt-4.1');
    expect(systemOf(direct!)).not.toMatch(/OPS-V1|SUPPORT-ONLY/);
    expect(toolsOf(direct!)).toEqual(expect.arrayContaining(['run_shell', 'fetch_url']));

    // Asked for the shell in #random's thread: not offered, and a made-up call does not run.
    b.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo hacked' } }]);
    b.llm.replyText('I cannot run commands here.');
    b.fake.sendMessage({ content: 'run echo hacked', channelId: supportThread.id });
    await waitForBotMessage(b, supportThread.id, (m) => m.content.includes('I cannot run commands here.'));
    await b.idle();
    for (const body of bodiesOf(b.llm.requests).slice(3)) expect(toolsOf(body)).not.toContain('run_shell');
    expect(JSON.stringify(bodiesOf(b.llm.requests)[4]!.messages.filter((m) => m.role === 'tool'))).not.toContain(
      'hacked\\n',
    );

    // /status names each thread's profile.
    const opsThread = b.fake.thread(GENERAL).find((m) => m.content.includes('is the deploy done?'))!;
    for (const [thread, name] of [
      [opsThread.id, 'ops'],
      [supportThread.id, 'support'],
    ] as const) {
      const status = b.fake.runSlashCommand({ name: 'status', channelId: thread });
      expect(await privateAnswer(b, status.id)).toContain(`**Profile:** ${name}`);
    }
  });

  it('allowedUsers: Carol’s mention in #random is refused privately (a DM) and never reaches the model', async () => {
    const { bot: b } = await bootWithProfiles();
    ask(b, RANDOM, 'show me the customer list', CAROL);
    await waitFor(() => b.fake.rest.callsTo('POST /users/@me/channels').length === 1, 8_000);
    const refusal = await waitForBotMessage(b, b.fake.guild.dmChannelFor(CAROL).id, (m) => m.content.length > 0);
    expect(refusal.content).toContain(
      'This channel is set up for a list of people, and you are not on it; ask an admin.',
    );
    expect(b.llm.requests).toHaveLength(0);
  });
});

describe('approvers per Discord channel', () => {
  it('in #general the profile’s admin approves and the starter may not; the same admin’s click in #random is refused privately', async () => {
    const { bot: b } = await bootWithProfiles();
    b.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'runbook.md', content: 'restart it' } }]);
    b.llm.replyText('Written.');
    const opsAsk = ask(b, GENERAL, 'write the runbook');
    const opsCard = await waitForBotMessage(b, opsAsk.id, (m) => buttonsOf(m).length > 0);
    const approve = buttonsOf(opsCard).find((button) => button.label === 'Approve')!;
    const starter = b.fake.clickButton({
      channelId: opsAsk.id,
      messageId: opsCard.id,
      customId: approve.customId,
      userId: ADA,
    });
    expect(await clickRefusal(b, starter.id)).toContain('Only the bot admins can approve this.');
    expect(b.llm.requests).toHaveLength(1);
    b.fake.clickButton({ channelId: opsAsk.id, messageId: opsCard.id, customId: approve.customId, userId: GRACE });
    await waitForBotMessage(b, opsAsk.id, (m) => m.content.includes('Written.'));
    await b.idle();
    expect(b.fake.message(opsAsk.id, opsCard.id)!.content).toContain(`Approved by <@${GRACE}>`);

    // #random has no approvers of its own: its starter approves, and ops' admin may not.
    b.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes.md', content: 'mine' } }]);
    b.llm.replyText('Written too.');
    const supportAsk = ask(b, RANDOM, 'write my notes');
    const supportCard = await waitForBotMessage(b, supportAsk.id, (m) => buttonsOf(m).length > 0);
    const supportApprove = buttonsOf(supportCard).find((button) => button.label === 'Approve')!;
    const elsewhere = b.fake.clickButton({
      channelId: supportAsk.id,
      messageId: supportCard.id,
      customId: supportApprove.customId,
      userId: GRACE,
    });
    expect(await clickRefusal(b, elsewhere.id)).toContain('Only the person who started this thread can approve this.');
    expect(b.llm.requests).toHaveLength(3);
    b.fake.clickButton({
      channelId: supportAsk.id,
      messageId: supportCard.id,
      customId: supportApprove.customId,
      userId: ADA,
    });
    await waitForBotMessage(b, supportAsk.id, (m) => m.content.includes('Written too.'));
    await b.idle();
  });
});

describe('the file edited while the Discord bot runs', () => {
  it('a good edit holds from the next turn in an idle thread and a new one; a broken edit changes nothing', async () => {
    const { bot: b, file } = await bootWithProfiles();
    const first = await answered(b, GENERAL, 'first');
    expect(systemOf(bodiesOf(b.llm.requests)[0]!)).toContain('OPS-V1');

    await writeFile(file, profilesYaml('You help the on-call engineer. OPS-V2'));
    expect(await b.core.profileReloader!.reload()).toEqual({ ok: true, profiles: ['ops', 'support'] });
    b.llm.replyText('Second.');
    b.fake.sendMessage({ content: 'second', channelId: first.id });
    await waitForBotMessage(b, first.id, (m) => m.content.includes('Second.'));
    await b.idle();
    expect(systemOf(bodiesOf(b.llm.requests)[1]!)).toContain('OPS-V2');
    expect(systemOf(bodiesOf(b.llm.requests)[1]!)).not.toContain('OPS-V1');
    await answered(b, GENERAL, 'a new thread');
    expect(systemOf(bodiesOf(b.llm.requests)[2]!)).toContain('OPS-V2');

    await writeFile(
      file,
      profilesYaml('OPS-V3').replace('tools: [read_file, write_file, run_shell]', 'tools: [read_file, teleport]'),
    );
    expect(await b.core.profileReloader!.reload()).toEqual({
      ok: false,
      problems: [expect.stringContaining('teleport')],
    });
    b.llm.replyText('Third.');
    b.fake.sendMessage({ content: 'third', channelId: first.id });
    await waitForBotMessage(b, first.id, (m) => m.content.includes('Third.'));
    await b.idle();
    expect(systemOf(bodiesOf(b.llm.requests)[3]!)).toContain('OPS-V2');
    expect(toolsOf(bodiesOf(b.llm.requests)[3]!)).toEqual(['read_file', 'run_shell', 'write_file']);
  });
});

describe('npm start with PROFILES on Discord (the compiled bot in a child process)', () => {
  it('#general and #random get their own model requests', async () => {
    const fakes = await startDiscordBotFakes(cleanups);
    const file = join(fakes.dir, 'profiles.yaml');
    await writeFile(file, profilesYaml());
    const started = await BotProcess.start(discordEnv(fakes, { PROFILES: file, MODELS }), fakes.dir, 60_000, {
      waitFor: 'discord',
    });
    cleanups.push(() => started.kill());
    for (const [channelId, text] of [
      [GENERAL, 'is the deploy done?'],
      [RANDOM, 'where is my order?'],
    ] as const) {
      const before = fakes.llm.requests.length;
      fakes.llm.replyText(`Answer to ${text}.`);
      fakes.fake.sendMessage({ content: `${mention(DISCORD_IDS.botUserId)} ${text}`, channelId });
      await waitFor(() => fakes.llm.requests.length === before + 1, 20_000);
    }
    const [ops, support] = bodiesOf(fakes.llm.requests);
    expect([ops!.model, support!.model]).toEqual(['gpt-4.1-mini', 'gpt-4o-mini']);
    expect(systemOf(ops!)).toContain('OPS-V1');
    expect(systemOf(support!)).toContain('SUPPORT-ONLY');
    expect(toolsOf(ops!)).toContain('run_shell');
    expect(toolsOf(support!)).not.toContain('run_shell');
  });
});
