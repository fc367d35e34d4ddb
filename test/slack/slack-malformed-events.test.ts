// Payloads Slack should never send, but might: each is answered 200 (an error answer would make
// Slack send it again), reported once at warn with its type and never its text, and starts
// nothing. Some trip our listeners; others (a null `item`, a null `event`, a click without
// `user` or `actions`) trip Bolt itself before any listener runs, which answered 500 or, for a
// click it could not route, 404 after 3 seconds.
import { afterEach, describe, expect, it } from 'vitest';
import { RETRY_ACTION } from '../../connectors/slack/actions.js';
import {
  appMention,
  blockActions,
  dmMessage,
  eventCallback,
  nextTs,
  reactionAdded,
  SLACK_IDS,
} from '../fakes/slack-payloads.js';
import { sendEvent, sendInteraction, type SlackDelivery } from '../fakes/slack-signer.js';
import { bootSlackBot, SECRET, type SlackBot } from './slack-harness.js';

const SECRET_WORDS = 'the launch code is 0000';
const DROPPED = 'dropped a malformed Slack payload (acknowledged, so Slack does not send it again)';

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

function without<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const copy = { ...value };
  delete copy[key];
  return copy;
}

const event = (b: SlackBot, payload: unknown) =>
  sendEvent(b.url, SECRET, { ...eventCallback({ type: 'placeholder' }), event: payload as { type: string } });
const click = (b: SlackBot, change: (payload: Record<string, unknown>) => void) => {
  const payload = blockActions({
    actionId: RETRY_ACTION,
    value: '{"session":"slack:x"}',
    messageTs: nextTs(),
    responseUrl: b.slack.responseUrl('click'),
    messageText: SECRET_WORDS,
  }) as unknown as Record<string, unknown>;
  change(payload);
  return sendInteraction(b.url, SECRET, payload as { type: string });
};

const cases: { name: string; type: string; send: (b: SlackBot) => Promise<SlackDelivery> }[] = [
  {
    name: 'an app_mention without channel',
    type: 'app_mention',
    send: (b) => event(b, without(appMention({ text: SECRET_WORDS }), 'channel')),
  },
  { name: 'a DM without ts', type: 'message', send: (b) => event(b, without(dmMessage({ text: SECRET_WORDS }), 'ts')) },
  {
    name: 'a DM whose text is an object',
    type: 'message',
    send: (b) => event(b, { ...dmMessage({ text: 'x' }), text: { said: SECRET_WORDS } }),
  },
  {
    name: 'a 🛑 reaction_added without item',
    type: 'reaction_added',
    send: (b) => event(b, without(reactionAdded({ reaction: 'octagonal_sign', ts: nextTs() }), 'item')),
  },
  {
    name: 'a 🛑 reaction_added on a message without ts',
    type: 'reaction_added',
    send: (b) =>
      event(b, {
        ...reactionAdded({ reaction: 'octagonal_sign', ts: '1' }),
        item: { type: 'message', channel: SLACK_IDS.channelId },
      }),
  },
  // These never reach a listener: Bolt reads them first.
  {
    name: 'a reaction_added whose item is null',
    type: 'reaction_added',
    send: (b) => event(b, { ...reactionAdded({ reaction: 'octagonal_sign', ts: nextTs() }), item: null }),
  },
  { name: 'an event that is null', type: 'event_callback', send: (b) => event(b, null) },
  {
    name: 'a block_actions without actions',
    type: 'block_actions',
    send: (b) => click(b, (payload) => delete payload.actions),
  },
  {
    name: 'a block_actions whose action has no action_id',
    type: 'block_actions',
    send: (b) => click(b, (payload) => (payload.actions = [{ type: 'button', value: SECRET_WORDS }])),
  },
  {
    name: 'a block_actions without user or team',
    type: 'block_actions',
    send: (b) =>
      click(b, (payload) => {
        delete payload.user;
        delete payload.team;
      }),
  },
];

describe('a malformed payload is acknowledged, reported once, and starts nothing', () => {
  it.each(cases)('$name', async ({ type, send }) => {
    bot = await bootSlackBot();
    const before = bot.logs.lines.length;
    const answer = await send(bot);
    // Acknowledged: not Bolt's 404 after 3 s of "nobody acknowledged".
    expect(answer.status).toBe(200);
    const calls = bot.slack.calls.length;
    await bot.barrier();

    const logged = bot.logs.lines.slice(before).filter((line) => line.level === 'warn' || line.level === 'error');
    expect(logged).toEqual([{ level: 'warn', message: DROPPED, details: expect.objectContaining({ type }) }]);
    expect(JSON.stringify(bot.logs.lines)).not.toContain(SECRET_WORDS);
    expect(bot.llm.requests).toHaveLength(0);
    expect(await bot.core.store.listSessionIds()).toEqual([]);
    // Nothing posted or looked up for the payload (the barrier's private answer comes after).
    expect(
      bot.slack.calls.slice(0, calls).filter((call) => call.method.startsWith('chat.') || call.method === 'users.info'),
    ).toEqual([]);
    expect(bot.slack.calls.slice(calls).map((call) => call.method)).toEqual(['chat.postEphemeral']);
  });
});

describe('what is not for the bot is ignored quietly', () => {
  it("an edit, a bot's post and a 👍 on a file are answered 200 with no warning", async () => {
    bot = await bootSlackBot();
    const before = bot.logs.lines.length;
    const edited = {
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: SLACK_IDS.dmChannelId,
      ts: nextTs(),
      message: { type: 'message', user: SLACK_IDS.humanUserId, text: 'edited', ts: nextTs() },
    };
    const botPost = {
      type: 'message',
      bot_id: SLACK_IDS.otherBotId,
      text: 'beep',
      ts: nextTs(),
      channel: SLACK_IDS.dmChannelId,
      channel_type: 'im',
    };
    const onFile = { ...reactionAdded({ reaction: '+1', ts: nextTs() }), item: { type: 'file', file: 'F0FILE0001' } };
    for (const payload of [edited, botPost, onFile]) expect((await event(bot, payload)).status).toBe(200);
    await bot.barrier();
    expect(bot.logs.lines.slice(before).filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    expect(bot.llm.requests).toHaveLength(0);
    expect(await bot.core.store.listSessionIds()).toEqual([]);
  });
});
