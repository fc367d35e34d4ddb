// The schedule commands in the playground: the shared thread commands with the page's markup,
// read in SCHEDULE_TZ (the page's person has no platform time zone), said in the thread, listed
// and ended by the local user (who runs the bot, so sees every schedule of its one channel).
import { afterEach, describe, expect, it } from 'vitest';
import { bootWebBot, type WebBot } from './web-harness.js';

let bot: WebBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const botLines = (b: WebBot, thread: string): string[] =>
  b.connector.threads.get(thread)!.messages.flatMap((m) => (m.kind === 'bot' ? [m.text] : []));

describe('schedules in the playground', () => {
  it('/schedule in SCHEDULE_TZ said in the thread, /schedules whispered, /unschedule said in the thread', async () => {
    bot = await bootWebBot({ env: { SCHEDULE_TZ: 'America/New_York' } });
    const desk = bot.core.schedules!;
    const live = await bot.stream();
    bot.llm.replyText('Hello.');
    const thread = (await bot.act('/api/messages', { text: '@bot hello' })).body.thread as string;
    await bot.idle();

    expect(
      (await bot.act('/api/messages', { text: '/schedule every monday at 8:30 plan the *week*', thread })).body.status,
    ).toBe('command');
    const [made] = await desk.list({ platform: 'web', workspace: 'playground' });
    expect(made).toMatchObject({
      creator: 'local',
      task: 'plan the *week*',
      timezone: 'America/New_York',
      spec: { kind: 'cron', pattern: '30 8 * * 1', timezone: 'America/New_York' },
    });
    const said = botLines(bot, thread).find((text) => text.includes('set schedule'))!;
    // The person's words escaped for the page's markdown; the author named as the page names them.
    expect(said).toContain('plan the \\*week\\*');
    expect(said).toContain('@you set schedule');
    expect(said).toContain('every Monday at 08:30 (America/New\\_York). Next run: Mon');

    await bot.act('/api/messages', { text: '/schedules', thread });
    const listed = await live.next((e) => e.event === 'whisper' && String(e.data.text).includes(made!.id));
    expect(listed.data.text).toContain('every schedule in this channel');

    await bot.act('/api/messages', { text: `/unschedule ${made!.id}`, thread });
    expect(
      botLines(bot, thread).some(
        (text) => text.includes(`Schedule \`${made!.id}\``) && text.includes('was ended by @you'),
      ),
    ).toBe(true);
    expect(await desk.list({ platform: 'web', workspace: 'playground' })).toEqual([]);
  });

  it('/schedule in 2 hours says its one time once: no "next run" repeating it', async () => {
    bot = await bootWebBot({ env: { SCHEDULE_TZ: 'UTC' } });
    bot.llm.replyText('Hello.');
    const thread = (await bot.act('/api/messages', { text: '@bot hello' })).body.thread as string;
    await bot.idle();

    await bot.act('/api/messages', { text: '/schedule in 2 hours check the deploy', thread });
    const [made] = await bot.core.schedules!.list({ platform: 'web', workspace: 'playground' });
    expect(made).toMatchObject({ spec: { kind: 'once' } });
    const said = botLines(bot, thread).find((text) => text.includes('set schedule'))!;
    const at = /once, (\w{3} \d+ \w{3} \d{4}, \d\d:\d\d \(UTC\))/.exec(said)?.[1];
    expect(at).toBeDefined();
    // The time once, and what to do before it comes.
    expect(said.split(at!).length - 1).toBe(1);
    expect(said).not.toMatch(/next run/i);
    expect(said).toContain(`End it before then with \`/unschedule ${made!.id}\`.`);
  });
});
