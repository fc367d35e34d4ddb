// The whole bot in Socket Mode (the real Bolt app with SLACK_APP_TOKEN) against FakeSlack and
// FakeSlackSocket: events, clicks and slash commands arrive as envelopes on the socket and
// are acked there, which a test can wait for (the ack is the first thing a click's listener
// does, before its work). The Web API, the core, the real OpenAI SDK (against FakeOpenAI)
// and the SQLite store are the same as in HTTP mode (slack-harness.ts).
import { join } from 'node:path';
import { SlackConnector } from '../../connectors/slack/slack-connector.js';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { FakeSlackSocket, type SocketAck } from '../fakes/slack-socket.js';
import { memoryLogger } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

const ADA = SLACK_IDS.humanUserId;

export interface SocketBot {
  slack: FakeSlack;
  socket: FakeSlackSocket;
  llm: FakeOpenAI;
  core: Core;
  connector: SlackConnector;
  dir: string;
  logs: ReturnType<typeof memoryLogger>;
  /** A user mentions the bot; returns the root ts and the ack of the `events_api` envelope. */
  mention(text: string): Promise<{ root: string; ack: SocketAck }>;
  stop(): Promise<void>;
}

/** `bootSlackBot` of the harness, in Socket Mode. */
export async function bootSocketBot(env: Record<string, string> = {}): Promise<SocketBot> {
  const dir = await tempDir();
  const slack = await new FakeSlack({
    users: [{ id: ADA, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada' }],
  }).start();
  const socket = new FakeSlackSocket(slack);
  const llm = await new FakeOpenAI().start();
  const logs = memoryLogger();
  const config = loadConfig({
    MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.baseURL,
    STORE_URL: `sqlite://${dir.path}/data/bot.sqlite`,
    WORKSPACE_DIR: join(dir.path, 'workspace'),
    MCP_CONFIG: join(dir.path, 'mcp.json'),
    SLACK_BOT_TOKEN: 'xoxb-test',
    SLACK_APP_TOKEN: 'xapp-test',
    SLACK_API_URL: slack.apiUrl,
    ...env,
  });
  const core = await startCore(config, { logger: logs });
  let connector: SlackConnector | undefined;
  try {
    connector = await SlackConnector.create({ config, core, logger: logs });
    await core.recover();
    await connector.start(); // resolves on `hello`
  } catch (error) {
    await connector?.stop().catch(() => undefined);
    await core.close();
    await socket.close();
    await Promise.all([slack.stop(), llm.stop()]);
    await dir.remove();
    throw error;
  }
  const started = connector;
  return {
    slack,
    socket,
    llm,
    core,
    connector: started,
    dir: dir.path,
    logs,
    async mention(text) {
      const event = appMention({ text, user: ADA });
      slack.addMessage(event);
      const ack = await socket.deliverEvent(eventCallback(event));
      return { root: event.ts, ack };
    },
    async stop() {
      await started.stop();
      // Bolt's receiver does not wait for the close handshake: wait here, so nothing is left open.
      await socket.waitForNoConnections();
      await core.close();
      await socket.close();
      await Promise.all([slack.stop(), llm.stop()]);
      await dir.remove();
    },
  };
}
