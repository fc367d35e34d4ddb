// A configured secret in a form other than its exact text, through the whole bot as `npm
// start` runs it: the real Slack connector against the fake Slack, the real OpenAI SDK against
// the fake OpenAI, run_shell on the host (SHELL_SANDBOX=off, as where a tool runs outside the
// sandbox: an MCP server, a bot without bwrap). The model has the shell print the OpenAI key
// as base64 (its own, and shifted inside a longer blob, in base64url), percent-encoded with
// `%2D` and `%2d` and every byte encoded, as hex, folded over lines, and cut in two across two
// results; an MCP server (outside any sandbox) returns the token it was started with in the
// same encodings; then the model streams the key back in its answer, a few characters per
// delta. Neither the model's next request nor anything the thread shows holds either secret
// in any of those forms.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialServerEntry } from '../mcp/fixtures/launch.js';
import { appMention, eventCallback } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';

// Its base64 holds `+` and `/` at some offsets (from `~`, `?`, `>`), so base64url differs.
const KEY = 'e2e-openai-key~7f3a?9c1d>5b-end';
const SIGNING_SECRET = 'encoded-signing-secret-5e1';
const MCP_TOKEN = 'mcp-token_Zq9/x+Lw-3141';

/** The shell commands, each a result of its own, and what each would print unmasked. */
const COMMANDS = {
  base64: 'base64 key.txt',
  base64urlShifted: "{ printf 'KEY='; cat key.txt; } | base64 -w0 | tr '+/' '-_' | tr -d '='",
  percentUpper: "sed 's/-/%2D/g' key.txt",
  percentLower: "sed 's/-/%2d/g' key.txt",
  percentEveryByte: "od -An -v -tx1 key.txt | tr -d '\\n' | sed 's/ /%/g'",
  hex: "od -An -v -tx1 key.txt | tr -d ' \\n'",
  folded: 'fold -w 10 key.txt',
  firstPiece: 'head -c 13 key.txt',
  restPiece: 'tail -c +14 key.txt',
} as const;

/** The MCP tool's encodings, each a result of its own. */
const MCP_ENCODINGS = ['base64', 'base64url', 'hex', 'percent', 'folded'] as const;

const bytes = Buffer.from(KEY);
const mcpBytes = Buffer.from(MCP_TOKEN);
/** The middle of an encoded form: any of it left would say a part of the key. */
const middle = (form: string) => form.slice(6, -4);
const LEAKS: Record<string, string> = {
  exact: KEY,
  base64: middle(bytes.toString('base64')),
  base64urlShifted: middle(Buffer.from(`KEY=${KEY}`).toString('base64url').slice(6)),
  percentUpper: KEY.replaceAll('-', '%2D'),
  percentLower: KEY.replaceAll('-', '%2d'),
  percentEveryByte: middle([...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')),
  hex: middle(bytes.toString('hex')),
  foldedLine1: KEY.slice(0, 10),
  foldedLine2: KEY.slice(10, 20),
  firstPiece: KEY.slice(0, 13),
  restPiece: KEY.slice(13),
  mcpExact: MCP_TOKEN,
  mcpBase64: middle(mcpBytes.toString('base64')),
  mcpBase64url: middle(mcpBytes.toString('base64url')),
  mcpHex: middle(mcpBytes.toString('hex')),
  mcpPercent: middle([...mcpBytes].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('')),
  mcpFolded1: MCP_TOKEN.slice(0, 7),
  mcpFolded2: MCP_TOKEN.slice(7, 14),
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a secret in an encoded form never leaves the bot', () => {
  it(
    'base64, base64url, %2D / %2d / every byte, hex, folded, cut across two results, from a shell on the host and an MCP server, and streamed in pieces: the model and the thread get [secret]',
    { timeout: 90_000 },
    async () => {
      // The test's own premise: base64url is not base64 here, so both are exercised.
      expect(Buffer.from(`KEY=${KEY}`).toString('base64url')).not.toBe(
        Buffer.from(`KEY=${KEY}`).toString('base64').replace(/=+$/, ''),
      );

      const fakes = await startBotFakes(cleanups);
      const { dir, slack, llm } = fakes;
      await mkdir(join(dir, 'workspace'));
      await writeFile(join(dir, 'workspace', 'key.txt'), KEY);
      await writeFile(
        join(dir, 'mcp.json'),
        JSON.stringify({ mcpServers: { credential: credentialServerEntry({ CREDENTIAL_API_TOKEN: MCP_TOKEN }) } }),
      );

      llm.replyToolCalls([
        ...Object.values(COMMANDS).map((command) => ({ name: 'run_shell', arguments: { command } })),
        ...MCP_ENCODINGS.map((encoding) => ({ name: 'credential__show_credential', arguments: { encoding } })),
      ]);
      // The key in the answer, four characters a delta: no delta holds it whole.
      llm.replyText(`Done. The key is ${KEY} and nothing else.`, { chunkSize: 4 });

      const bot = await BotProcess.start(
        // Shared scope: key.txt, put in WORKSPACE_DIR before the thread exists, is where the commands start.
        slackHttpEnv(fakes, SIGNING_SECRET, {
          OPENAI_API_KEY: KEY,
          PERMISSION_MODE: 'auto',
          SHELL_SANDBOX: 'off',
          WORKSPACE_SCOPE: 'shared',
          MCP_CONFIG: join(dir, 'mcp.json'),
        }),
        dir,
      );
      cleanups.push(() => bot.kill());

      const mention = appMention({ text: 'show me the key in every encoding' });
      slack.addMessage(mention);
      const response = await sendEvent(bot.eventsUrl, SIGNING_SECRET, eventCallback(mention));
      expect(response.status).toBe(200);
      await waitFor(() => llm.requests.length === 2, 60_000);
      const threadText = () =>
        slack
          .thread(mention.channel, mention.ts)
          .map((message) => message.text)
          .join('\n');
      await waitFor(() => threadText().includes('nothing else.'), 20_000);
      // Let the last card updates land.
      await waitFor(
        () => slack.thread(mention.channel, mention.ts).every((message) => message.stream?.state !== 'streaming'),
        20_000,
      );

      // The model: each tool result it got back says [secret] where the key was.
      const messages = (
        llm.requests[1]!.body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] }
      ).messages;
      const results = messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
      const names = [...Object.keys(COMMANDS), ...MCP_ENCODINGS.map((encoding) => `mcp ${encoding}`)];
      expect(results).toHaveLength(names.length);
      // The thread: the streamed answer, the cards, every Slack call's body.
      const modelBodies = JSON.stringify(llm.requests.map((request) => request.body));
      const threadShown = JSON.stringify([
        slack.thread(mention.channel, mention.ts),
        slack.calls.map((call) => call.args),
        slack.responsePosts,
      ]);
      // Listed whole, so a failure names every form that got through.
      const problems = [
        ...names.flatMap((name, index) => (results[index]!.includes('[secret]') ? [] : [`result not masked: ${name}`])),
        ...Object.entries(LEAKS).flatMap(([form, leak]) => [
          ...(modelBodies.includes(leak) ? [`model request: ${form}`] : []),
          ...(threadShown.includes(leak) ? [`thread: ${form}`] : []),
        ]),
        ...(threadText().includes('The key is [secret] and nothing else.') ? [] : ['streamed answer not masked']),
      ];
      expect(problems).toEqual([]);
    },
  );
});
