// Discord's slash commands, end to end: registered for the server named by DISCORD_GUILD_ID,
// acknowledged with a private "thinking…", answered privately, with the same roles as Slack's.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/engine-kit.js';
import { bootDiscordBot, DISCORD_IDS, waitForBotMessage, type DiscordBot } from './discord-harness.js';

let bot: DiscordBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

/** The private answer to an interaction, once it is there (the deferred reply, edited). */
async function privateAnswer(b: DiscordBot, interactionId: string): Promise<string> {
  let content: string | undefined;
  await waitFor(() => {
    const token = b.fake.interaction(interactionId)!.token;
    const edit = b.fake.rest
      .callsTo('PATCH /webhooks/:application/:token/messages/:message')
      .find((c) => c.params.token === token);
    content = (edit?.body as { content?: string } | undefined)?.content;
    return content !== undefined;
  }, 8_000);
  return content!;
}

describe('slash commands', () => {
  it('are registered for the server in DISCORD_GUILD_ID, and /status in a thread answers privately', async () => {
    bot = await bootDiscordBot({ env: { DISCORD_GUILD_ID: DISCORD_IDS.guildId } });
    const registered = bot.fake.rest.callsTo('PUT /applications/:application/guilds/:guild/commands')[0]!;
    expect(registered.params.guild).toBe(DISCORD_IDS.guildId);
    expect((registered.body as { name: string }[]).map((c) => c.name)).toEqual([
      'status',
      'model',
      'grants',
      'revoke',
      'retry',
      'stop',
      'forget',
      'feedback',
      'usage',
      'profile',
      'schedule',
      'schedules',
      'unschedule',
      'help',
    ]);

    bot.llm.replyText('Hi.');
    const asked = bot.mention('hello');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Hi.'));
    await bot.idle();
    const status = bot.fake.runSlashCommand({ name: 'status', channelId: asked.id });
    expect(await privateAnswer(bot, status.id)).toContain('**Model:** openai:gpt-4.1');
    // Acknowledged as a deferred, ephemeral reply.
    expect(
      bot.fake.rest
        .callsTo('POST /interactions/:interaction/:token/callback')
        .find((c) => c.params.interaction === status.id)!.body,
    ).toMatchObject({ type: 5, data: { flags: 64 } });
  });

  it('/stop by someone with no part in the thread is refused privately; by the starter it stops the turn', async () => {
    bot = await bootDiscordBot();
    expect(bot.fake.rest.callsTo('PUT /applications/:application/commands')).toHaveLength(1);
    bot.llm.replyStall();
    const asked = bot.mention('think forever');
    await waitFor(() => bot!.llm.requests.length === 1);
    await waitFor(() => bot!.fake.guild.channel(asked.id) !== undefined);
    const refused = bot.fake.runSlashCommand({
      name: 'stop',
      channelId: asked.id,
      userId: DISCORD_IDS.otherHumanUserId,
    });
    expect(await privateAnswer(bot, refused.id)).toMatch(/started this thread|admin/i);
    const stop = bot.fake.runSlashCommand({ name: 'stop', channelId: asked.id });
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Stopped'));
    await bot.idle();
    expect(await privateAnswer(bot, stop.id)).toBe('Done.');
  });

  it('the same slash command delivered twice (a gateway replay) runs once and is acknowledged once', async () => {
    bot = await bootDiscordBot({ env: { MODELS: 'openai:gpt-4.1,openai:gpt-4o' } });
    bot.llm.replyText('Hi.');
    const asked = bot.mention('hello');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Hi.'));
    await bot.idle();
    const model = bot.fake.runSlashCommand({
      name: 'model',
      channelId: asked.id,
      options: [{ type: 3, name: 'model', value: 'openai:gpt-4o' }],
    });
    expect(await privateAnswer(bot, model.id)).toBe('Done.');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('openai:gpt-4o'));
    bot.fake.redeliverInteraction(model.id);
    // A later command answered means the replay, delivered before it, was handled.
    const help = bot.fake.runSlashCommand({ name: 'help', channelId: asked.id });
    await privateAnswer(bot, help.id);
    const b = bot;
    await waitFor(() =>
      b.fake.rest
        .callsTo('POST /interactions/:interaction/:token/callback')
        .some((c) => c.params.interaction === help.id),
    );
    expect(
      bot.fake.rest
        .callsTo('POST /interactions/:interaction/:token/callback')
        .filter((c) => c.params.interaction === model.id),
    ).toHaveLength(1);
    // The switch is said in the thread once.
    expect(bot.fake.thread(asked.id).filter((m) => m.content.includes('openai:gpt-4o'))).toHaveLength(1);
    expect(bot.logs.lines.some((l) => l.message.includes('could not acknowledge'))).toBe(false);
  });

  it('outside a thread, a command says where to run it; /help works anywhere', async () => {
    bot = await bootDiscordBot();
    const status = bot.fake.runSlashCommand({ name: 'status' });
    expect(await privateAnswer(bot, status.id)).toContain('Run this in a thread where I work');
    const help = bot.fake.runSlashCommand({ name: 'help' });
    expect(await privateAnswer(bot, help.id)).toContain('/model');
  });

  it('/schedule reads its when in SCHEDULE_TZ and says the schedule in the thread; /schedules lists it; /unschedule by a stranger is refused privately', async () => {
    bot = await bootDiscordBot({ env: { SCHEDULE_TZ: 'Asia/Tokyo' } });
    const desk = bot.core.schedules!;
    bot.llm.replyText('Hi.');
    const asked = bot.mention('hello');
    await waitForBotMessage(bot, asked.id, (m) => m.content.includes('Hi.'));
    await bot.idle();
    const when = { type: 3, name: 'when', value: 'every weekday at 9:00' };
    const set = bot.fake.runSlashCommand({
      name: 'schedule',
      channelId: asked.id,
      options: [when, { type: 3, name: 'task', value: '5 incidents: summarise them' }],
    });
    const said = await waitForBotMessage(bot, asked.id, (m) => m.content.includes('set schedule'));
    expect(await privateAnswer(bot, set.id)).toBe('Done.');
    const [made] = await desk.list({ platform: 'discord', workspace: DISCORD_IDS.guildId });
    // The task's first words stay the task: the when was its own option.
    expect(made).toMatchObject({
      creator: DISCORD_IDS.humanUserId,
      task: '5 incidents: summarise them',
      timezone: 'Asia/Tokyo',
      spec: { kind: 'cron', pattern: '0 9 * * 1-5', timezone: 'Asia/Tokyo' },
    });
    expect(said.content).toContain(`every weekday at 09:00 (Asia/Tokyo). Next run:`);
    expect(said.content).toContain(`\`/unschedule ${made!.id}\``);

    const listed = bot.fake.runSlashCommand({ name: 'schedules', channelId: asked.id });
    expect(await privateAnswer(bot, listed.id)).toContain(made!.id);

    const refused = bot.fake.runSlashCommand({
      name: 'unschedule',
      channelId: asked.id,
      userId: DISCORD_IDS.otherHumanUserId,
      options: [{ type: 3, name: 'id', value: made!.id }],
    });
    expect(await privateAnswer(bot, refused.id)).toContain(`Only the person who made schedule ${made!.id}`);
    expect(await desk.list({ platform: 'discord', workspace: DISCORD_IDS.guildId })).toHaveLength(1);
  });
});
