// What a whole-bot test starts first: a folder for the bot, the fake Slack and the fake
// model, each registered for clean-up in the order that undoes it.
import { FakeOpenAI } from '../fakes/openai-server.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { tempDir } from './test-connector.js';

export interface BotFakes {
  dir: string;
  slack: FakeSlack;
  llm: FakeOpenAI;
}

export async function startBotFakes(cleanups: (() => Promise<void>)[]): Promise<BotFakes> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const slack = await new FakeSlack().start();
  cleanups.push(() => slack.stop());
  const llm = await new FakeOpenAI().start();
  cleanups.push(() => llm.stop());
  return { dir: dir.path, slack, llm };
}
