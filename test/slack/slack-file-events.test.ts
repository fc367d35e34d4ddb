// Files shared in Slack reach the session layer as the message's attachments, through the
// real Bolt app and the fake Slack: a mention with a screenshot and a CSV, a file dropped into
// a thread the bot works in with no words (a `file_share`), and not a file in a thread the bot
// does not own or from someone the bot does not serve. The connector only describes files:
// nothing is downloaded when the event arrives (the turn that takes the message fetches them).
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/sessions/session-manager.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;
const CAROL = 'U0HUMAN003';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

/** Every message the connector delivers, recorded on its way into the real session manager. */
function recordDeliveries(b: SlackBot): InboundMessage[] {
  const delivered: InboundMessage[] = [];
  const manager = b.core.manager;
  const deliver = manager.deliver.bind(manager);
  manager.deliver = (key, message) => {
    delivered.push(message);
    return deliver(key, message);
  };
  return delivered;
}

describe("files shared in Slack become the message's attachments", () => {
  it('a mention with a PNG and a CSV delivers both, described with name, type, size and URL', async () => {
    bot = await bootSlackBot();
    const delivered = recordDeliveries(bot);
    bot.llm.replyText('Looking.');
    const shot = bot.slack.files.add({ bytes: PNG, name: 'error.png', mimetype: 'image/png' });
    const csv = bot.slack.files.add({ bytes: 'a,b\n1,2\n', name: 'data.csv', mimetype: 'text/csv' });
    await bot.mention('what is wrong here?', { files: [shot, csv] });
    await waitFor(() => delivered.length === 1);
    expect(delivered[0]).toMatchObject({
      text: 'what is wrong here?',
      attachments: [
        {
          platform: 'slack',
          id: shot.id,
          name: 'error.png',
          mimeType: 'image/png',
          size: PNG.length,
          url: shot.url_private_download,
        },
        {
          platform: 'slack',
          id: csv.id,
          name: 'data.csv',
          mimeType: 'text/csv',
          size: 8,
          url: csv.url_private_download,
        },
      ],
    });
    await bot.idle();
  });

  it('a file dropped with no words into a thread the bot works in is a message (file_share): it steers with its file', async () => {
    bot = await bootSlackBot();
    const delivered = recordDeliveries(bot);
    bot.llm.replyText('Hello Ada.');
    const root = await bot.mention('hi');
    await waitFor(() => bot!.llm.requests.length === 1);
    await bot.idle();

    const shot = bot.slack.files.add({ bytes: PNG, name: 'second.png', mimetype: 'image/png' });
    bot.llm.replyText('I see it.');
    await bot.reply(root, '', { files: [shot] });
    await waitFor(() => delivered.length === 2);
    expect(delivered[1]).toMatchObject({ text: '', userId: ADA, attachments: [{ id: shot.id, name: 'second.png' }] });
    await bot.idle();
  });

  it('a file in a thread the bot does not own is ignored, like the rest of that message', async () => {
    bot = await bootSlackBot();
    const delivered = recordDeliveries(bot);
    const someoneElses = bot.slack.addMessage({ channel: C, text: 'a thread of people' });
    const shot = bot.slack.files.add({ bytes: PNG, name: 'theirs.png', mimetype: 'image/png' });
    await bot.reply(someoneElses.ts, '', { files: [shot] });
    await bot.reply(someoneElses.ts, 'look at this', { files: [shot] });
    // Something the bot does take afterwards: once it is in, the two before were dropped.
    bot.llm.replyText('Hi.');
    await bot.mention('hello');
    await waitFor(() => delivered.length === 1);
    expect(delivered[0]!.attachments).toBeUndefined();
    await bot.idle();
    expect(bot.slack.files.downloads).toEqual([]);
  });

  it('a file from someone the bot does not serve is refused at the door: no turn, no download', async () => {
    bot = await bootSlackBot({ env: { ALLOWED_USERS: ADA } });
    const delivered = recordDeliveries(bot);
    const secret = bot.slack.files.add({ bytes: 'payload', name: 'x.csv', mimetype: 'text/csv', user: CAROL });
    await bot.mention('read this', { user: CAROL, files: [secret] });
    await waitFor(() => bot!.slack.ephemerals(C).some((e) => e.user === CAROL));
    expect(delivered).toEqual([]);
    expect(bot.slack.files.downloads).toEqual([]);
    expect(bot.llm.requests).toEqual([]);
  });

  it('a deleted file (tombstone) with no words is no message at all', async () => {
    bot = await bootSlackBot();
    const delivered = recordDeliveries(bot);
    const gone = bot.slack.files.add({ bytes: '', name: 'gone.png', mode: 'tombstone' });
    await bot.mention('', { files: [gone] });
    bot.llm.replyText('Hi.');
    await bot.mention('hello');
    await waitFor(() => delivered.length === 1);
    expect(delivered[0]!.text).toBe('hello');
    await bot.idle();
  });
});
