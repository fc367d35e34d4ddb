// The door first, and names within bounds, through the real Bolt app and the fake Slack: a
// message from someone not allowed to use the bot is refused before anything it holds is
// looked up; a member's message costs at most 20 `users.info` calls, and an id Slack did not
// know is not asked about again for a while (400 made-up mentions once made 401
// calls, and Slack's retry of the event 401 more).
import { afterEach, describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../connectors/slack/thread-commands.js';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, SECRET, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const BOB = 'U0HUMAN002';
const OUTSIDER = 'U0OUTSIDE1';

/** 400 ids Slack has never heard of: `U0FAKE001` … `U0FAKE400`. */
const FAKE_IDS = Array.from({ length: 400 }, (_, i) => `U0FAKE${String(i + 1).padStart(3, '0')}`);
const mentionsOf = (ids: readonly string[]) => ids.map((id) => `<@${id}>`).join(' ');

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const lookups = (b: SlackBot) => b.slack.callsOf('users.info').map((call) => String(call.args.user));
const whispersTo = (b: SlackBot, user: string) =>
  b.slack
    .ephemerals(C)
    .filter((e) => e.user === user)
    .map((e) => e.text);
const lastUserText = (b: SlackBot, i: number) =>
  String((b.llm.requests[i]!.body as { messages: { content: unknown }[] }).messages.at(-1)!.content);

describe('the door comes before any lookup', () => {
  it("an outsider's message holding 400 mentions is refused privately with no users.info call, and so is Slack's retry of it", async () => {
    bot = await bootSlackBot({ env: { ALLOWED_USERS: ADA } });
    const text = `who are all these people ${mentionsOf(FAKE_IDS)}`;
    const root = await bot.mention(text, { user: OUTSIDER, eventId: 'EvOUTSIDER1' });
    await waitFor(() => whispersTo(bot!, OUTSIDER).length === 1);
    expect(whispersTo(bot, OUTSIDER)).toEqual(['You are not on the list of people who may use this bot here.']);
    expect(lookups(bot)).toEqual([]);

    // Slack did not hear back in time and sends the same event again.
    const again = appMention({ text, ts: root, user: OUTSIDER });
    const retry = await sendEvent(bot.url, SECRET, eventCallback(again, { eventId: 'EvOUTSIDER1' }), {
      retryNum: 1,
      retryReason: 'http_timeout',
    });
    expect(retry.status).toBe(200);
    await waitFor(() => whispersTo(bot!, OUTSIDER).length === 2);
    expect(lookups(bot)).toEqual([]);
    expect(bot.llm.requests).toHaveLength(0);
    expect(await bot.core.store.listSessionIds()).toEqual([]);
  });

  it('a thread command looks up no names, however many it mentions', async () => {
    bot = await bootSlackBot();
    await bot.mention(`/help ${mentionsOf(FAKE_IDS)}`);
    await waitFor(() => whispersTo(bot!, ADA).length === 1);
    expect(whispersTo(bot, ADA)).toEqual([COMMAND_HELP]);
    expect(lookups(bot)).toEqual([]);
  });
});

describe("a member's names, within bounds", () => {
  it('at most 20 lookups per message (the author first); an id that failed is not asked about again', async () => {
    bot = await bootSlackBot();
    bot.llm.replyText('That is a lot of people.');
    bot.llm.replyText('Still them.');
    const root = await bot.mention(`meet <@${BOB}> and ${mentionsOf(FAKE_IDS)}`);
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const first = lookups(bot);
    expect(first).toEqual([ADA, BOB, ...FAKE_IDS.slice(0, 18)]);
    // Known names read as names; the ids Slack did not know, and those past the budget, as ids.
    const seen = lastUserText(bot, 0);
    expect(seen).toMatch(/^meet @bob and @U0FAKE001 @U0FAKE002 /);
    expect(seen).toContain('@U0FAKE400');

    // A reply mentioning the ids that failed (and Ada and Bob, known now) asks Slack nothing.
    await bot.reply(root, `and again <@${ADA}> <@${BOB}> ${mentionsOf(FAKE_IDS.slice(0, 18))}`);
    await waitFor(() => bot!.llm.requests.length === 2);
    await bot.idle();
    expect(lookups(bot)).toHaveLength(20);
    expect(lastUserText(bot, 1)).toMatch(/@ada @bob @U0FAKE001/);
  });
});
