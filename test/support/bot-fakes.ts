// What a whole-bot test starts first: a folder for the bot, the fake Slack and the fake
// model, each registered for clean-up in the order that undoes it.
import { join } from 'node:path';
import { FakeDiscord } from '../fakes/discord-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { tempDir } from './test-connector.js';

export interface BotFakes {
  dir: string;
  slack: FakeSlack;
  llm: FakeOpenAI;
}

export async function startBotFakes(cleanups: (() => Promise<unknown>)[]): Promise<BotFakes> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const slack = await new FakeSlack().start();
  cleanups.push(() => slack.stop());
  const llm = await new FakeOpenAI().start();
  cleanups.push(() => llm.stop());
  return { dir: dir.path, slack, llm };
}

/**
 * The environment of a whole bot in Slack HTTP mode against these fakes: its store, workspace
 * and (absent) MCP file in `dir`, PORT=0, the given signing secret; `overrides` last.
 */
export function slackHttpEnv(
  fakes: Pick<BotFakes, 'dir' | 'slack' | 'llm'>,
  secret: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  const { dir, slack, llm } = fakes;
  return {
    MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-test-value',
    OPENAI_BASE_URL: llm.baseURL,
    SLACK_BOT_TOKEN: 'xoxb-test-value',
    SLACK_SIGNING_SECRET: secret,
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    STORE_URL: `sqlite://${join(dir, 'data', 'bot.sqlite')}`,
    WORKSPACE_DIR: join(dir, 'workspace'),
    MCP_CONFIG: join(dir, 'no-mcp.json'),
    LOG_LEVEL: 'info',
    ...overrides,
  };
}

export interface DiscordBotFakes {
  dir: string;
  fake: FakeDiscord;
  llm: FakeOpenAI;
}

/** A folder for the bot, the fake Discord and the fake model, each registered for clean-up. */
export async function startDiscordBotFakes(
  cleanups: (() => Promise<unknown>)[],
  options?: ConstructorParameters<typeof FakeDiscord>[0],
): Promise<DiscordBotFakes> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const fake = await new FakeDiscord(options).start();
  cleanups.push(() => fake.stop());
  const llm = await new FakeOpenAI().start();
  cleanups.push(() => llm.stop());
  return { dir: dir.path, fake, llm };
}

/** What `npm start` needs to run on Discord alone against these fakes; `overrides` last. */
export function discordEnv(fakes: DiscordBotFakes, overrides: Record<string, string> = {}): Record<string, string> {
  const { dir, fake, llm } = fakes;
  return {
    MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.baseURL,
    DISCORD_TOKEN: fake.token,
    DISCORD_API_URL: fake.apiUrl,
    STORE_URL: `sqlite://${join(dir, 'data', 'bot.sqlite')}`,
    WORKSPACE_DIR: join(dir, 'workspace'),
    ...overrides,
  };
}
