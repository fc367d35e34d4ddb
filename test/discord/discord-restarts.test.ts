// A restart while a call waits for approval, on Discord: the buttons carry only ids
// (custom-ids.ts), so the click on the old card, received by the new process, resumes the
// turn, runs the call exactly once, and the same card is brought up to date.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/engine-kit.js';
import {
  botMessages,
  bootDiscordBot,
  buttonsOf,
  DISCORD_IDS,
  waitForBotMessage,
  type DiscordBot,
} from './discord-harness.js';
import { inOnlyConversation } from '../support/conversation-folders.js';

const bots: DiscordBot[] = [];
afterEach(async () => {
  // The later bots share the first one's fakes and folder: stop them first.
  while (bots.length) await bots.pop()!.stop();
});

describe('a restart while an approval is pending', () => {
  it('the click after the restart runs the call exactly once and updates the same card', async () => {
    const first = await bootDiscordBot();
    bots.push(first);
    first.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'runs.txt', content: 'ran\n' } }]);
    const asked = first.mention('write runs.txt');
    const card = await waitForBotMessage(first, asked.id, (m) => buttonsOf(m).length > 0);

    await first.crash();
    first.llm.replyText('Noted.');
    const second = await bootDiscordBot({ dir: first.dir, fake: first.fake, llm: first.llm });
    bots.push(second);
    expect(first.llm.requests).toHaveLength(1);

    const approve = buttonsOf(card).find((b) => b.label === 'Approve')!;
    first.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: approve.customId });
    await waitForBotMessage(second, asked.id, (m) => m.content.includes('Noted.'));
    await second.idle();
    expect(await readFile(inOnlyConversation(join(first.dir, 'workspace'), 'runs.txt'), 'utf8')).toBe('ran\n');
    expect(first.llm.requests).toHaveLength(2);
    await waitFor(() => bot(second, asked.id, card.id).content.includes('Done'));
    const final = bot(second, asked.id, card.id);
    expect(final.content).toContain(`Approved by <@${DISCORD_IDS.humanUserId}>`);
    expect(buttonsOf(final)).toEqual([]);
    // One card for the call, not a second one posted by the new process.
    expect(botMessages(second, asked.id).filter((m) => m.content.includes('write_file'))).toHaveLength(1);
  });
});

describe('a crash between posting a card and recording it', () => {
  it('the next process finds the card Discord holds (same nonce) and updates it in place: one card', async () => {
    const first = await bootDiscordBot();
    bots.push(first);
    // The process dies right after Discord created the card: "posting" is stored, "posted" never is.
    const store = first.core.store;
    const update = store.updateMessageRef.bind(store);
    store.updateMessageRef = async (key, ref) => (key.startsWith('discord-card:') ? undefined : update(key, ref));
    first.llm.replyToolCalls([{ name: 'write_file', arguments: { path: 'once.txt', content: 'once\n' } }]);
    const asked = first.mention('write once.txt');
    const card = await waitForBotMessage(first, asked.id, (m) => buttonsOf(m).length > 0);
    const cardPost = first.fake.rest
      .callsTo('POST /channels/:channel/messages')
      .find((c) => (c.body as { content?: string }).content?.includes('write_file'))!;
    expect(cardPost.body).toMatchObject({ nonce: expect.any(String), enforce_nonce: true });
    expect((cardPost.body as { nonce: string }).nonce.length).toBeLessThanOrEqual(25);
    // As on Discord, a fetched message carries no nonce: there is nothing to search for.
    expect(first.fake.message(asked.id, card.id)).not.toHaveProperty('nonce');

    await first.crash();
    first.llm.replyText('Written once.');
    const second = await bootDiscordBot({ dir: first.dir, fake: first.fake, llm: first.llm });
    bots.push(second);

    const approve = buttonsOf(card).find((b) => b.label === 'Approve')!;
    first.fake.clickButton({ channelId: asked.id, messageId: card.id, customId: approve.customId });
    await waitForBotMessage(second, asked.id, (m) => m.content.includes('Written once.'));
    await second.idle();
    expect(await readFile(inOnlyConversation(join(first.dir, 'workspace'), 'once.txt'), 'utf8')).toBe('once\n');
    const cards = botMessages(second, asked.id).filter((m) => m.content.includes('write_file'));
    expect(cards.map((m) => m.id)).toEqual([card.id]);
    const final = bot(second, asked.id, card.id);
    expect(final.content).toContain(`Approved by <@${DISCORD_IDS.humanUserId}>`);
    expect(buttonsOf(final)).toEqual([]);
  });
});

function bot(b: DiscordBot, channelId: string, messageId: string) {
  return b.fake.message(channelId, messageId)!;
}
