// The whole bot in Socket Mode: the real Bolt app with SLACK_APP_TOKEN (no signing secret, no
// HTTP listener) connects to FakeSlackSocket through `apps.connections.open`; events, clicks
// and slash commands arrive as envelopes and are acked on the socket; the Web API, the core,
// the real OpenAI SDK (against FakeOpenAI) and the SQLite store are the same as in HTTP mode.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HELP_TEXT } from '../../connectors/slack/agent-command.js';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import {
  blockActions,
  eventCallback,
  nextTs,
  reactionAdded,
  slashCommand,
  SLACK_IDS,
} from '../fakes/slack-payloads.js';
import type { StoredMessage } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { bootSocketBot, type SocketBot } from './slack-socket-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;

let bot: SocketBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const botReply = (b: SocketBot, root: string): StoredMessage | undefined =>
  b.slack.thread(C, root).find((m) => m.user === SLACK_IDS.botUserId);

describe('Slack in Socket Mode', () => {
  it('connects with the app token, and a mention delivered on the socket is acked and answered in its thread', async () => {
    bot = await bootSocketBot();
    expect(bot.socket.connections).toBe(1);
    const open = bot.slack.callsOf('apps.connections.open');
    expect(open).toHaveLength(1);
    expect(open[0]!.headers.authorization).toBe('Bearer xapp-test');
    expect(bot.slack.callsOf('auth.test')[0]!.headers.authorization).toBe('Bearer xoxb-test');
    expect(bot.connector.port).toBeUndefined(); // no HTTP listener in Socket Mode

    bot.llm.replyText('Hello over the socket.');
    const { root, ack } = await bot.mention('hello socket');
    expect(ack).toMatchObject({ envelope_id: bot.socket.envelopes[0]!.envelope_id });
    // Acknowledged only once recorded: the session and its message are in the store already.
    const [sessionId] = await bot.core.store.listSessionIds();
    expect(sessionId).toContain(root);
    const recorded = [
      ...(await bot.core.store.getPendingInputs(sessionId!)),
      ...(await bot.core.store.loadTranscript(sessionId!)),
    ];
    expect(JSON.stringify(recorded)).toContain('hello socket');

    await waitFor(() => bot!.slack.callsOf('chat.stopStream').length === 1, 8_000);
    await bot.core.manager.idle();
    expect(String((bot.llm.bodies[0]!.messages.at(-1) as { content?: unknown }).content)).toMatch(/^hello socket/);
    expect(bot.slack.callsOf('chat.startStream')[0]!.args).toMatchObject({
      channel: C,
      thread_ts: root,
      recipient_user_id: ADA,
    });
    expect(botReply(bot, root)!.text).toContain('Hello over the socket.');
    expect(bot.slack.reactionsOn(C, root).map((r) => r.name)).toContain('eyes');
  });

  it('an Approve click arrives as an interactive envelope, is acked, and runs the write_file call', async () => {
    bot = await bootSocketBot();
    bot.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'a.txt', content: 'written over the socket' } }]);
    bot.llm.replyText('Written.');
    const { root } = await bot.mention('write a.txt');

    let card: StoredMessage | undefined;
    await waitFor(() => {
      card = bot!.slack
        .thread(C, root)
        .find((m) => m.user === SLACK_IDS.botUserId && JSON.stringify(m.blocks ?? []).includes(PROMPT_ACTION));
      return card !== undefined;
    }, 8_000);
    expect(JSON.stringify(card!.blocks)).toContain('*write_file*');
    const buttons = card!.blocks!.flatMap(
      (block) =>
        ((block as { elements?: unknown[] }).elements ?? []) as { type?: string; action_id?: string; value?: string }[],
    );
    const approve = buttons.find(
      (b) =>
        b.type === 'button' &&
        b.action_id?.startsWith(PROMPT_ACTION) &&
        (JSON.parse(b.value ?? '{}') as { choice?: string }).choice === 'once',
    );
    expect(approve).toBeDefined();

    const ack = await bot.socket.deliverInteractive(
      blockActions({
        actionId: approve!.action_id!,
        value: approve!.value!,
        messageTs: card!.ts,
        threadTs: root,
        responseUrl: bot.slack.responseUrl('click'),
      }),
    );
    expect(ack).toMatchObject({ envelope_id: bot.socket.envelopes.at(-1)!.envelope_id });
    expect(bot.socket.envelopes.at(-1)).toMatchObject({ type: 'interactive', accepts_response_payload: false });

    await waitFor(() => bot!.llm.requests.length === 2, 8_000);
    await bot.core.manager.idle();
    expect(await readFile(inOnlyConversation(join(bot.dir, 'workspace'), 'a.txt'), 'utf8')).toBe(
      'written over the socket',
    );
    const final = JSON.stringify(bot.slack.message(C, card!.ts)!.blocks);
    expect(final).not.toContain(PROMPT_ACTION);
    expect(final).toContain(`Approved by <@${ADA}>`);
    expect(final).toContain('Done');
    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Written.')));
  });

  it('a slash command arrives as a slash_commands envelope and is answered privately at its response_url', async () => {
    bot = await bootSocketBot();
    const ack = await bot.socket.deliverSlashCommand(
      slashCommand({ command: '/agent', text: '', responseUrl: bot.slack.responseUrl('help') }),
    );
    expect(ack).toEqual({ envelope_id: bot.socket.envelopes[0]!.envelope_id, payload: {} });
    const post = await bot.slack.waitForResponse('help');
    expect(post.body).toMatchObject({ response_type: 'ephemeral', text: HELP_TEXT });
  });

  it('malformed envelopes are acknowledged (so Slack does not redeliver them), reported once each, and start nothing', async () => {
    bot = await bootSocketBot();
    const before = bot.logs.lines.length;
    // Our listener reads this one; Bolt itself trips on the other two.
    const { item: _item, ...reactionWithoutItem } = reactionAdded({ reaction: 'octagonal_sign', ts: nextTs() });
    const reactionWithNullItem = { ...reactionAdded({ reaction: 'octagonal_sign', ts: nextTs() }), item: null };
    const { actions: _actions, ...clickWithoutActions } = blockActions({
      actionId: PROMPT_ACTION,
      value: '{}',
      messageTs: nextTs(),
      responseUrl: bot.slack.responseUrl('x'),
    });
    const acks = [
      await bot.socket.deliverEvent(eventCallback(reactionWithoutItem)),
      await bot.socket.deliverEvent({ ...eventCallback({ type: 'reaction_added' }), event: reactionWithNullItem }),
      await bot.socket.deliverInteractive(clickWithoutActions),
    ];
    expect(acks.map((ack) => ack.envelope_id)).toEqual(bot.socket.envelopes.map((envelope) => envelope.envelope_id));
    const reported = bot.logs.lines.slice(before).filter((line) => line.level === 'warn' || line.level === 'error');
    expect(reported.map((line) => [line.level, (line.details as { type?: string }).type])).toEqual([
      ['warn', 'reaction_added'],
      ['warn', 'reaction_added'],
      ['warn', 'block_actions'],
    ]);
    expect(bot.llm.requests).toHaveLength(0);
    expect(await bot.core.store.listSessionIds()).toEqual([]);
  });

  it('after a refresh_requested disconnect the client opens a new connection and events still work', async () => {
    bot = await bootSocketBot();
    await bot.socket.disconnect();
    expect(bot.socket.connections).toBe(0);
    // The client waits its clientPingTimeout (5 s) before it reconnects.
    await bot.socket.waitForConnection(2, 12_000);
    expect(bot.slack.callsOf('apps.connections.open')).toHaveLength(2);
    expect(bot.socket.accepted).toEqual(['/socket?ticket=1', '/socket?ticket=2']);
    expect(bot.socket.connections).toBe(1);

    bot.llm.replyText('Still here after the refresh.');
    const { root, ack } = await bot.mention('are you there?');
    expect(ack.payload).toEqual({});
    await waitFor(() => botReply(bot!, root)?.text.includes('Still here after the refresh.') === true, 8_000);
    await bot.core.manager.idle();
  }, 25_000);
});
