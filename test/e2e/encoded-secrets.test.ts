// A configured secret in a form other than its exact text, through the whole bot as `npm
// start` runs it: the real Slack connector against the fake Slack, the real OpenAI SDK against
// the fake OpenAI, run_shell on the host (SHELL_SANDBOX=off, as where a tool runs outside the
// sandbox: an MCP server, a bot without bwrap). The model has the shell print the OpenAI key
// as base64 (its own, and shifted inside a longer blob, in base64url), percent-encoded with
// `%2D` and `%2d` and every byte encoded, as hex, folded over lines, and cut in two across two
// results; then it streams the key back in its answer, a few characters per delta. Neither
// the model's next request nor anything the thread shows holds the key in any of those forms.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appMention, eventCallback } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';

// Its base64 holds `+` and `/` at some offsets (from `~`, `?`, `>`), so base64url differs.
const KEY = 'e2e-openai-key~7f3a?9c1d>5b-end';
const SIGNING_SECRET = 'encoded-signing-secret-5e1';

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

const bytes = Buffer.from(KEY);
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
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a secret in an encoded form never leaves the bot', () => {
  it('base64, base64url, %2D / %2d / every byte, hex, folded, cut across two results, and streamed in pieces: the model and the thread get [secret]', { timeout: 90_000 }, async () => {
    // The test's own premise: base64url is not base64 here, so both are exercised.
    expect(Buffer.from(`KEY=${KEY}`).toString('base64url')).not.toBe(Buffer.from(`KEY=${KEY}`).toString('base64').replace(/=+$/, ''));

    const fakes = await startBotFakes(cleanups);
    const { dir, slack, llm } = fakes;
    await mkdir(join(dir, 'workspace'));
    await writeFile(join(dir, 'workspace', 'key.txt'), KEY);

    llm.replyToolCalls(Object.values(COMMANDS).map((command) => ({ name: 'run_shell', arguments: { command } })));
    // The key in the answer, four characters a delta: no delta holds it whole.
    llm.replyText(`Done. The key is ${KEY} and nothing else.`, { chunkSize: 4 });

    const bot = await BotProcess.start(
      slackHttpEnv(fakes, SIGNING_SECRET, { OPENAI_API_KEY: KEY, PERMISSION_MODE: 'auto', SHELL_SANDBOX: 'off', MAX_TOOL_CALLS_PER_RESPONSE: '20' }),
      dir,
    );
    cleanups.push(() => bot.kill());

    const mention = appMention({ text: 'show me the key in every encoding' });
    slack.addMessage(mention);
    const response = await sendEvent(bot.eventsUrl, SIGNING_SECRET, eventCallback(mention));
    expect(response.status).toBe(200);
    await waitFor(() => llm.requests.length === 2, 60_000);
    const threadText = () => slack.thread(mention.channel, mention.ts).map((message) => message.text).join('\n');
    await waitFor(() => threadText().includes('nothing else.'), 20_000);
    // Let the last card updates land.
    await waitFor(() => slack.thread(mention.channel, mention.ts).every((message) => message.stream?.state !== 'streaming'), 20_000);

    // The model: each tool result it got back says [secret] where the key was.
    const messages = (llm.requests[1]!.body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] }).messages;
    const results = messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
    expect(results).toHaveLength(Object.keys(COMMANDS).length);
    // The thread: the streamed answer, the cards, every Slack call's body.
    const modelBodies = JSON.stringify(llm.requests.map((request) => request.body));
    const threadShown = JSON.stringify([slack.thread(mention.channel, mention.ts), slack.calls.map((call) => call.args), slack.responsePosts]);
    // Listed whole, so a failure names every form that got through.
    const problems = [
      ...Object.keys(COMMANDS).flatMap((name, index) => (results[index]!.includes('[secret]') ? [] : [`result not masked: ${name}`])),
      ...Object.entries(LEAKS).flatMap(([form, leak]) => [
        ...(modelBodies.includes(leak) ? [`model request: ${form}`] : []),
        ...(threadShown.includes(leak) ? [`thread: ${form}`] : []),
      ]),
      ...(threadText().includes('The key is [secret] and nothing else.') ? [] : ['streamed answer not masked']),
    ];
    expect(problems).toEqual([]);
  });
});
