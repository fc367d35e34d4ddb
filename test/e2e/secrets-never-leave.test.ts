// The strongest check that a configured secret never leaves: the whole bot as `npm start`
// runs it (src/main.ts in a child process, its real logger on stdout), the real Slack
// connector against the fake Slack, the real OpenAI SDK against the fake OpenAI, a real
// shell and a real MCP server. The workspace holds a copy of the bot's settings (someone
// committed it); the model runs `cat deploy.env`; an MCP server prints its token and the
// OpenAI key to stderr, which the bot logs at debug. The values appear nowhere that leaves:
// not in the model's next request, not in any Slack call, not in a log line.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { notesServerEntry } from '../mcp/fixtures/launch.js';
import { appMention, eventCallback } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';
import { startBotFakes } from '../support/bot-fakes.js';
import { threadFolder } from '../support/conversation-folders.js';

// Shaped like no token pattern the logger knows (no sk-, xoxb-, Bearer): only the exact
// configured value can find them.
const OPENAI_KEY = 'e2e-openai-key-7f3a9c1d5b';
const MCP_TOKEN = 'notes-mcp-token-31b7e2';
const SIGNING_SECRET = 'e2e-signing-secret-0d9a';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a configured secret never leaves the bot', () => {
  it(
    'a shell command that prints the OpenAI key: the model, the Slack thread and the logs get [secret]',
    { timeout: 60_000 },
    async () => {
      const { dir: home, slack, llm } = await startBotFakes(cleanups);
      const dir = { path: home };

      // The signing secret comes from a .env that other accounts can read: start-up says so.
      await writeFile(join(dir.path, '.env'), `SLACK_SIGNING_SECRET=${SIGNING_SECRET}\n`);
      await chmod(join(dir.path, '.env'), 0o644);
      // In the folder of the thread the mention below starts (WORKSPACE_SCOPE=thread).
      const mention = appMention({ text: 'what is in deploy.env?' });
      const folder = threadFolder(join(dir.path, 'workspace'), {
        platform: 'slack',
        workspace: mention.team,
        channel: mention.channel,
        thread: mention.ts,
      });
      await mkdir(folder, { recursive: true });
      await writeFile(
        join(folder, 'deploy.env'),
        `OPENAI_API_KEY=${OPENAI_KEY}\nSLACK_SIGNING_SECRET=${SIGNING_SECRET}\n`,
      );
      // The notes server gets a token (by a secret-looking name) and prints it, and the OpenAI
      // key, on stderr as it starts.
      const notes = notesServerEntry({
        NOTES_API_TOKEN: '${NOTES_TOKEN}',
        NOTES_FIXTURE_GREETING: 'token ${NOTES_TOKEN}, key ${OPENAI_API_KEY}',
      });
      await writeFile(join(dir.path, 'mcp.json'), JSON.stringify({ mcpServers: { notes } }));

      llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'cat deploy.env' } }]);
      llm.replyText('That file holds the deployment settings.');

      const bot = await BotProcess.start(
        {
          MODEL: 'openai:gpt-4.1',
          OPENAI_API_KEY: OPENAI_KEY,
          OPENAI_BASE_URL: llm.baseURL,
          SLACK_BOT_TOKEN: 'xoxb-e2e-bot-token',
          SLACK_API_URL: slack.apiUrl,
          PORT: '0',
          STORE_URL: `sqlite://${join(dir.path, 'data', 'bot.sqlite')}`,
          WORKSPACE_DIR: join(dir.path, 'workspace'),
          MCP_CONFIG: join(dir.path, 'mcp.json'),
          PERMISSION_MODE: 'auto',
          NOTES_TOKEN: MCP_TOKEN,
          LOG_LEVEL: 'debug',
        },
        dir.path,
      );
      cleanups.push(() => bot.kill());

      slack.addMessage(mention);
      const response = await sendEvent(bot.eventsUrl, SIGNING_SECRET, eventCallback(mention));
      expect(response.status).toBe(200);
      await waitFor(() => llm.requests.length === 2, 20_000);
      await waitFor(() => JSON.stringify(slack.calls.map((call) => call.args)).includes('deployment settings'), 10_000);
      await waitFor(() => bot.stdout.includes('MCP server stderr'), 10_000);
      // A graceful stop, waited for: every card update, post and log line of the bot is out.
      bot.signal('SIGTERM');
      await bot.exited;

      // The model: the tool result it got back is masked.
      const toolResult = (llm.requests[1]!.body as { messages: { role: string; content?: unknown }[] }).messages.find(
        (m) => m.role === 'tool',
      )!;
      expect(String(toolResult.content)).toContain('OPENAI_API_KEY=[secret]');
      expect(String(toolResult.content)).toContain('SLACK_SIGNING_SECRET=[secret]');
      const modelBodies = JSON.stringify(llm.requests.map((request) => request.body));

      // Slack: every Web API call body and response_url post (cards, previews, the answer).
      const slackBodies = JSON.stringify([
        slack.calls.map((call) => ({ method: call.method, args: call.args })),
        slack.responsePosts,
      ]);
      expect(slackBodies).toContain('[secret]');

      // The logs: the MCP server's stderr was logged, masked.
      const logs = bot.stdout + bot.stderr;
      const stderrLine = logs.split('\n').find((line) => line.includes('MCP server stderr') && line.includes('token'));
      expect(stderrLine).toContain('token [secret], key [secret]');
      expect(logs).toMatch(
        /\.env holds the bot's secrets but is readable by every account on this machine \(mode 644\)\. Fix: chmod 600 \.env/,
      );

      for (const secret of [OPENAI_KEY, MCP_TOKEN, SIGNING_SECRET]) {
        expect(modelBodies, 'model request').not.toContain(secret);
        expect(slackBodies, 'Slack call').not.toContain(secret);
        expect(logs, 'log output').not.toContain(secret);
      }
    },
  );
});
