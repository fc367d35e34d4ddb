// Nothing the bot posts can mass-mention, end to end (the real Bolt app, FakeSlack recording
// every request, the real core and OpenAI SDK against FakeOpenAI): whoever wrote the text (the
// model, a tool's output, a user's words echoed back, a model name), no request the bot sends
// carries a live `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>` or a bare `@here`.
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import type { FakeSlack } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const J = '\u2060';
/** Every broadcast a model could write, in every spelling we know of. */
const HOSTILE =
  'Heads up <!channel> and @here: <!here|here>, <!everyone>, <!subteam^S0TEAM|@ops>, &lt;!channel&gt; and @everyone. Ask <@U0HUMAN001>.';

/** What Slack would read as a broadcast, in any field. */
const LIVE =
  /<!(?:channel|here|everyone|group|subteam\^)|(?<![\p{L}\p{N}_])@(?:channel|here|everyone)(?![\p{L}\p{N}_])/iu;
/** In markdown fields, an entity the renderer decodes into a broadcast counts too. */
const LIVE_AFTER_DECODING = /(?:&lt;|&#0*60;|&#x0*3c;)!(?:channel|here|everyone|group|subteam\^)/i;
/** Data Slack never shows (and hands back on a click): checked for being intact elsewhere, not here. */
const NOT_SHOWN = new Set(['value', 'action_id', 'block_id', 'metadata', 'private_metadata', 'token']);

/** Every live broadcast in every request the bot sent (Web API calls and response_url posts). */
function broadcastsSent(slack: FakeSlack): string[] {
  const found: string[] = [];
  const visit = (where: string, value: unknown, markdown: boolean): void => {
    if (typeof value === 'string') {
      if (/^\s*[[{]/.test(value)) {
        try {
          visit(where, JSON.parse(value), markdown);
          return;
        } catch {
          // Text that starts like JSON: checked as text.
        }
      }
      if (LIVE.test(value) || (markdown && LIVE_AFTER_DECODING.test(value))) found.push(`${where}: ${value}`);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => visit(`${where}[${i}]`, item, markdown));
    } else if (value && typeof value === 'object') {
      const type = (value as { type?: unknown }).type;
      const md = markdown || type === 'markdown' || type === 'markdown_text';
      for (const [key, item] of Object.entries(value))
        if (!NOT_SHOWN.has(key)) visit(`${where}.${key}`, item, md || key === 'markdown_text');
    }
  };
  for (const call of slack.calls) visit(call.method, call.args, false);
  for (const post of slack.responsePosts) visit(`response_url ${post.id}`, post.body, false);
  return found;
}

/** Everything the bot sent, as one string (to check that the text did go out, made inert). */
const everythingSent = (slack: FakeSlack) =>
  JSON.stringify([slack.calls.map((call) => call.args), slack.responsePosts.map((post) => post.body)]);

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

describe('a model answer full of broadcasts pings nobody', () => {
  it('streamed natively', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText(HOSTILE, { chunkSize: 3 });
    const root = await bot.mention('what should I tell the team?');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    expect(broadcastsSent(bot.slack)).toEqual([]);
    // The answer is all there, only made inert: it reads the same to a person.
    const answer = bot.slack.thread(C, root).find((m) => m.stream)!;
    expect(answer.text.replace(/\u2060/g, '')).toBe(HOSTILE);
    expect(answer.text).toContain('<@U0HUMAN001>');
  });

  it('streamed natively, with a broadcast split across two appends: the joined message is inert too', async () => {
    bot = await bootSlackBot();
    // One delta per append (the pause is longer than the stream's 400 ms interval), each cut
    // inside a broadcast: `Tell <!cha` | `nnel> ok @` | `here, bye.`
    bot.llm.replyText('Tell <!channel> ok @here, bye.', { chunkSize: 10, delayMs: 600 });
    const root = await bot.mention('what should I tell the team?');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const pieces = [...bot.slack.callsOf('chat.startStream'), ...bot.slack.callsOf('chat.appendStream')].map((call) =>
      typeof call.args.markdown_text === 'string' ? call.args.markdown_text : '',
    );
    expect(pieces.map((piece) => piece.replace(/\u2060/g, ''))).toEqual(['Tell <!cha', 'nnel> ok @', 'here, bye.']);
    expect(broadcastsSent(bot.slack)).toEqual([]);
    // Slack joins the pieces: what it shows must be inert, not only each request.
    const answer = bot.slack.thread(C, root).find((m) => m.stream)!;
    expect(answer.text).toBe(`Tell <!cha${J}nnel> ok @${J}here, bye.`);
    expect(answer.text).not.toMatch(LIVE);
  });

  it('posted and edited (no native streaming), in every text and block', async () => {
    bot = await bootSlackBot();
    bot.slack.failNext('chat.startStream', 'unknown_method');
    bot.llm.replyText(HOSTILE, { chunkSize: 7 });
    const root = await bot.mention('what should I tell the team?');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    expect(bot.slack.callsOf('chat.postMessage').length).toBeGreaterThanOrEqual(1);
    expect(broadcastsSent(bot.slack)).toEqual([]);
    const answer = bot.slack
      .thread(C, root)
      .filter((m) => m.user === SLACK_IDS.botUserId)
      .at(-1)!;
    expect(answer.text).toContain('&lt;!channel&gt;');
    expect(answer.text).toContain(`@${J}here`);
    expect(answer.text).toContain('<@U0HUMAN001>');
  });
});

describe('tool cards', () => {
  it('a file holding <!everyone> shows on the card, its fallback text and its result preview, inert', async () => {
    bot = await bootSlackBot({ env: { PERMISSION_MODE: 'auto' } });
    const content = 'release notes for <!everyone> and @channel, cc <!subteam^S0TEAM>';
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes.txt', content } }]);
    bot.llm.replyToolCalls([{ name: 'read_file', arguments: { path: 'notes.txt' } }]);
    bot.llm.replyText('Read it back.');
    const root = await bot.mention('write the notes and read them back');
    await waitForCard(bot, root, 'read_file', (blocks) => blocks.includes('release notes'));
    await bot.idle();

    expect(broadcastsSent(bot.slack)).toEqual([]);
    const sent = everythingSent(bot.slack);
    // The write's arguments (card text and fallback) and the read's result preview both went out.
    expect(sent).toContain('&lt;!everyone&gt;');
    expect(sent).toContain(`@${J}channel`);
  });

  it('a question whose options are broadcasts: the buttons read inert, and clicking one still answers it', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([
      {
        name: 'ask_user',
        arguments: { question: 'Whom should I tell, <!channel> or <!here>?', options: ['@here', '<!channel>'] },
      },
    ]);
    bot.llm.replyText('Told them.');
    const root = await bot.mention('announce the release');
    const card = await waitForCard(bot, root, 'ask_user', (blocks) => blocks.includes(PROMPT_ACTION));
    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: '<!channel>' });
    await bot.idle();

    expect(broadcastsSent(bot.slack)).toEqual([]);
    // The button's value came back as it was sent: the answer is the option, byte for byte.
    const toolResult = bot.llm.bodies[1]!.messages.find((m) => m.role === 'tool');
    expect(JSON.parse(toolResult!.content as string)).toEqual({ answer: '<!channel>' });
  });
});

describe('echoes of what a user typed', () => {
  it('/model with a broadcast in the name: the reply quotes it inert, whatever the answer', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('Hello.');
    const root = await bot.mention('hi');
    await bot.idle();

    // Typed literally, Slack escapes it: `&lt;!channel&gt;`. Typed as a mention, it is `<!channel>`.
    await bot.mention('/model openai:&lt;!channel&gt;', { threadTs: root });
    await bot.mention('/model openai:<!here>', { threadTs: root });
    // Each command is answered (a refusal, an error that quotes the name, or the switch itself).
    const replies = () =>
      bot!.slack.calls.filter(
        (call) =>
          ['chat.postEphemeral', 'chat.postMessage'].includes(call.method) &&
          call.args.thread_ts === root &&
          !('markdown_text' in call.args),
      );
    await waitFor(() => replies().length >= 2, 8_000);
    await bot.idle();

    expect(broadcastsSent(bot.slack)).toEqual([]);
  });

  it('a user message with &lt;!here&gt; that the model repeats comes back inert', async () => {
    bot = await bootSlackBot();
    // A model that repeats what it was told (a prompt injection's best friend).
    bot.llm.answerWith((request) => {
      const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
      return { text: `You said: ${JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)?.content)}` };
    });
    await bot.mention('please repeat &lt;!here&gt; and &lt;!channel|all&gt; and @everyone');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    // The model read what the person typed, decoded ...
    expect(JSON.stringify(bot.llm.requests[0]!.body)).toContain('<!here>');
    // ... and nothing it sent back can ping.
    expect(broadcastsSent(bot.slack)).toEqual([]);
    expect(everythingSent(bot.slack)).toContain(`<${J}!here>`);
  });

  it("an error note quoting the provider's message is inert in its text and its notification fallback", async () => {
    bot = await bootSlackBot();
    bot.llm.replyError(400, {
      error: { message: 'model <!channel> rejected @here', type: 'invalid_request_error', param: null, code: null },
    });
    await bot.mention('do the thing');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();
    await waitFor(() =>
      bot!.slack.callsOf('chat.postMessage').some((call) => JSON.stringify(call.args).includes('rejected')),
    );

    expect(broadcastsSent(bot.slack)).toEqual([]);
  });
});

describe('every way Bolt lets a listener talk to Slack', () => {
  it("respond() (response_url), say() and the listener's own client all pass the gate", async () => {
    bot = await bootSlackBot();
    // A listener on the connector's real Bolt app, as a future feature would add one: each
    // of Bolt's outbound helpers gets a broadcast to send.
    const app = (bot.connector as unknown as { app: import('@slack/bolt').App }).app;
    app.command('/probe', async ({ ack, respond, say, client, command }) => {
      await ack();
      await respond({
        response_type: 'ephemeral',
        text: 'respond <!channel>',
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'respond block <!here>' } }],
      });
      await say('say <!everyone> @here');
      await client.chat.postMessage({ channel: command.channel_id, text: 'client <!subteam^S0TEAM|@ops>' });
      await client.views
        .open({
          trigger_id: command.trigger_id,
          view: {
            type: 'modal',
            title: { type: 'plain_text', text: 'Modal @channel' },
            blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'modal <!channel>' } }],
          },
        })
        .catch(() => undefined);
    });
    const { sendSlashCommand } = await import('../fakes/slack-signer.js');
    const { slashCommand } = await import('../fakes/slack-payloads.js');
    const response = await sendSlashCommand(
      bot.url,
      'test-signing-secret',
      slashCommand({ command: '/probe', text: '', responseUrl: bot.slack.responseUrl('probe') }),
    );
    expect(response.status).toBe(200);
    await bot.slack.waitForResponse('probe');
    await waitFor(() => bot!.slack.calls.some((call) => call.method === 'views.open'));
    await waitFor(() => bot!.slack.callsOf('chat.postMessage').length >= 2);

    expect(broadcastsSent(bot.slack)).toEqual([]);
    const sent = everythingSent(bot.slack);
    for (const text of [
      'respond &lt;!channel&gt;',
      'respond block &lt;!here&gt;',
      `say &lt;!everyone&gt; @${J}here`,
      'client &lt;!subteam^S0TEAM|@ops&gt;',
      `Modal @${J}channel`,
      'modal &lt;!channel&gt;',
    ]) {
      expect(sent).toContain(text);
    }
  });
});
