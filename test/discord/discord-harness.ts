// The whole bot against fakes, for Discord: the real discord.js client against the fake
// Discord (gateway + REST), the real core with the real OpenAI provider against a fake OpenAI
// server, and a SQLite store in a temporary folder. Scenarios act as the people in the guild
// (`fake.sendMessage`, `fake.react`, `fake.clickButton`) and read what the bot did.
import type { APIMessage } from 'discord.js';
import { DiscordConnector } from '../../connectors/discord/discord-connector.js';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { DISCORD_IDS, mention } from '../fakes/discord-payloads.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

export { DISCORD_IDS, mention };

export interface DiscordBot {
  fake: FakeDiscord;
  llm: FakeOpenAI;
  core: Core;
  connector: DiscordConnector;
  logs: ReturnType<typeof memoryLogger>;
  /** ada (or `authorId`) mentions the bot in #general; returns her message (the thread gets its id). */
  mention(text: string, options?: { authorId?: string }): APIMessage;
  idle(): Promise<void>;
  /** The folder the bot's store and workspace live in (boot another bot on it to play a restart). */
  dir: string;
  /**
   * The process dies: its gateway connection is gone and nothing is shut down (a turn waiting
   * for a click stays waiting). Boot another bot on the same `dir`, `fake` and `llm`.
   */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

export interface DiscordBootOptions {
  env?: Record<string, string>;
  /** Share these with an earlier bot (a restart); the first bot's `stop` releases them. */
  dir?: string;
  fake?: FakeDiscord;
  llm?: FakeOpenAI;
  /** Between two edits of a streamed answer: 50 ms keeps tests quick; the bench uses the real default. */
  answerIntervalMs?: number;
}

export async function bootDiscordBot(options: DiscordBootOptions = {}): Promise<DiscordBot> {
  const own = options.dir === undefined ? await tempDir() : undefined;
  const dir = { path: options.dir ?? own!.path };
  const fake = options.fake ?? (await new FakeDiscord().start());
  const llm = options.llm ?? (await new FakeOpenAI().start());
  const logs = memoryLogger();
  const config = loadConfig({
    ...coreTestEnv(dir.path, llm),
    DISCORD_TOKEN: fake.token,
    DISCORD_API_URL: fake.apiUrl,
    ...options.env,
  });
  const core = await startCore(config, { logger: logs });
  const connector = DiscordConnector.create({
    config,
    core,
    logger: logs,
    ...(options.answerIntervalMs === undefined
      ? { answerIntervalMs: 50 }
      : options.answerIntervalMs > 0
        ? { answerIntervalMs: options.answerIntervalMs }
        : {}),
  });
  await core.recover();
  await connector.start();
  let crashed = false;
  return {
    fake,
    llm,
    core,
    connector,
    logs,
    mention: (text, o = {}) =>
      fake.sendMessage({
        content: `${mention(DISCORD_IDS.botUserId)} ${text}`,
        ...(o.authorId ? { authorId: o.authorId } : {}),
      }),
    idle: () => core.manager.idle(),
    dir: dir.path,
    async crash() {
      crashed = true;
      await connector.stop();
    },
    async stop() {
      // A dead process has no turns: end the abandoned ones at once.
      if (crashed) await core.manager.shutdown(0);
      else await connector.stop();
      await core.close();
      if (!options.fake) await fake.stop();
      if (!options.llm) await llm.stop();
      await own?.remove();
    },
  };
}

/** The bot's messages in a channel or thread. */
export function botMessages(bot: DiscordBot, channelId: string): APIMessage[] {
  return bot.fake.thread(channelId).filter((m) => m.author.id === DISCORD_IDS.botUserId);
}

/** The bot's first message in `channelId` that matches, once it is there. */
export async function waitForBotMessage(
  bot: DiscordBot,
  channelId: string,
  predicate: (message: APIMessage) => boolean,
  timeoutMs = 15_000,
): Promise<APIMessage> {
  let found: APIMessage | undefined;
  await waitFor(() => {
    found = botMessages(bot, channelId).find(predicate);
    return found !== undefined;
  }, timeoutMs);
  return found!;
}

/** What `barrier` asks, and what the model answers it. */
export const BARRIER = { ask: 'barrier: are you there?', answer: 'Barrier reached.' };

/**
 * For a check that nothing happened: a later mention in #general, answered in full, then no
 * turn running. discord.js hands the bot gateway events in order, and a whole turn (a thread,
 * the model, the answer) is far more work than what is left of anything sent before: once the
 * answer is in, what came before has been handled. The model gets one more request (BARRIER.ask),
 * and the thread one answer.
 */
export async function barrier(bot: DiscordBot): Promise<void> {
  bot.llm.replyText(BARRIER.answer);
  const asked = bot.mention(BARRIER.ask);
  await waitForBotMessage(bot, asked.id, (message) => message.content.includes(BARRIER.answer), 15_000);
  await bot.idle();
}

/** The custom ids of a message's buttons. */
export function buttonsOf(message: APIMessage): { label: string; customId: string }[] {
  return (message.components ?? []).flatMap((row) =>
    ((row as { components?: { label?: string; custom_id?: string }[] }).components ?? []).map((b) => ({
      label: b.label ?? '',
      customId: b.custom_id ?? '',
    })),
  );
}
