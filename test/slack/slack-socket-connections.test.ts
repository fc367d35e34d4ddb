// Socket Mode with more than one connection: Slack spreads an app's events over every open
// Socket Mode connection (up to 10), so a second instance (or a forgotten process with the
// same app token) quietly takes a share of them. Slack's `hello` says how many are open
// (`num_connections`); the bot warns when it is more than one, once per change, and warns at
// start when it runs in cluster mode with Socket Mode (HTTP mode is the multi-instance mode).
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectionCountWarner, socketConnectionsWarning } from '../../connectors/slack/record-first-receiver.js';
import { SlackConnector, SOCKET_MODE_CLUSTER_WARNING } from '../../connectors/slack/slack-connector.js';
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { FakeSlackSocket } from '../fakes/slack-socket.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { RedisServer } from '../support/redis-server.js';
import { tempDir } from '../support/test-connector.js';

const ADA = SLACK_IDS.humanUserId;

interface Platform {
  slack: FakeSlack;
  socket: FakeSlackSocket;
  llm: FakeOpenAI;
}

interface SocketInstance {
  core: Core;
  connector: SlackConnector;
  logs: ReturnType<typeof memoryLogger>;
  stop(): Promise<void>;
}

let platform: Platform | undefined;
const instances: SocketInstance[] = [];
let redis: RedisServer | undefined;

beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
});
afterEach(async () => {
  for (const instance of instances.splice(0).reverse()) await instance.stop();
  if (platform) {
    await platform.socket.waitForNoConnections();
    await platform.socket.close();
    await Promise.all([platform.slack.stop(), platform.llm.stop()]);
  }
  platform = undefined;
});

async function fakes(): Promise<Platform> {
  const slack = await new FakeSlack({
    users: [{ id: ADA, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada' }],
  }).start();
  platform = { slack, socket: new FakeSlackSocket(slack), llm: await new FakeOpenAI().start() };
  return platform;
}

/** One bot in Socket Mode on the shared fakes; `env` adds settings (STORE_URL=redis:// for cluster mode). */
async function bootInstance(p: Platform, env: Record<string, string> = {}): Promise<SocketInstance> {
  const dir = await tempDir();
  const logs = memoryLogger();
  const config = loadConfig({
    MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: p.llm.baseURL,
    STORE_URL: `sqlite://${dir.path}/data/bot.sqlite`,
    WORKSPACE_DIR: join(dir.path, 'workspace'),
    MCP_CONFIG: join(dir.path, 'mcp.json'),
    SLACK_BOT_TOKEN: 'xoxb-test',
    SLACK_APP_TOKEN: 'xapp-test',
    SLACK_API_URL: p.slack.apiUrl,
    ...env,
  });
  const core = await startCore(config, { logger: logs });
  const connector = await SlackConnector.create({ config, core, logger: logs });
  await core.recover();
  await connector.start(); // resolves on `hello`
  const instance: SocketInstance = {
    core,
    connector,
    logs,
    async stop() {
      await connector.stop();
      await core.close();
      await dir.remove();
    },
  };
  instances.push(instance);
  return instance;
}

const warnings = (instance: SocketInstance, text: string): string[] =>
  instance.logs.lines
    .filter((line) => line.level === 'warn' && line.message.includes(text))
    .map((line) => line.message);

describe('Slack Socket Mode with several connections', () => {
  it('one connection: no warning', async () => {
    const p = await fakes();
    const bot = await bootInstance(p);
    expect(p.socket.helloCounts).toEqual([1]);
    expect(warnings(bot, 'Slack Socket Mode')).toEqual([]);
  });

  it('a second instance on the same app token is told that Slack spreads the events over both connections', async () => {
    const p = await fakes();
    const first = await bootInstance(p);
    const second = await bootInstance(p);
    expect(p.socket.helloCounts).toEqual([1, 2]);
    await waitFor(() => warnings(second, 'connections are open').length > 0, 2_000);
    expect(warnings(second, 'Slack Socket Mode:')).toEqual([
      'Slack Socket Mode: 2 connections are open for this app; Slack spreads events over them. Run several instances in HTTP mode (README: Several instances), or at most 10 in Socket Mode.',
    ]);
    expect(warnings(first, 'Slack Socket Mode:')).toEqual([]);
  });

  it('connections held elsewhere count too: the hello’s number is what the warning says', async () => {
    const p = await fakes();
    p.socket.otherConnections = 3;
    const bot = await bootInstance(p);
    expect(p.socket.helloCounts).toEqual([4]);
    await waitFor(() => warnings(bot, 'connections are open').length > 0, 2_000);
    expect(warnings(bot, 'Slack Socket Mode:')).toEqual([socketConnectionsWarning(4)]);
  });

  it('warns once per change of the count, and again after it went back to one', () => {
    const logs = memoryLogger();
    const observe = connectionCountWarner(logs);
    for (const count of [1, 2, 2, 2, 3, 3, 1, 1, 2]) observe(count);
    expect(logs.lines.map((line) => line.details)).toEqual([
      { numConnections: 2 },
      { numConnections: 3 },
      { numConnections: 2 },
    ]);
  });

  it('in cluster mode, Socket Mode is warned about once at start', async () => {
    const p = await fakes();
    const bot = await bootInstance(p, { STORE_URL: redis!.url });
    expect(warnings(bot, 'Slack Socket Mode in cluster mode')).toEqual([SOCKET_MODE_CLUSTER_WARNING]);
  });
});
