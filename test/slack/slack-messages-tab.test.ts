// The Messages tab through the real bot: a new assistant thread and the tab itself get the
// suggested prompts (ours, or SUGGESTED_PROMPTS); the channel the person views beside the
// conversation reaches the model as context — for that thread, or for the person's own DM —
// and never as that channel's content, nor into a channel thread others share.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SUGGESTED_PROMPTS, PROMPTS_TITLE } from '../../connectors/slack/messages-tab.js';
import { dmMessage, nextTs, SLACK_IDS } from '../fakes/slack-payloads.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, type SlackBot } from './slack-harness.js';

const bots: SlackBot[] = [];
afterEach(async () => {
  for (const bot of bots.splice(0)) await bot.stop();
});

async function boot(env: Record<string, string> = {}): Promise<SlackBot> {
  const bot = await bootSlackBot({ env });
  bots.push(bot);
  return bot;
}

const VIEWED = 'C0VIEWED01';

function threadStarted(threadTs: string, context: Record<string, unknown> = {}) {
  return {
    type: 'assistant_thread_started',
    assistant_thread: {
      user_id: SLACK_IDS.humanUserId,
      context,
      channel_id: SLACK_IDS.dmChannelId,
      thread_ts: threadTs,
    },
    event_ts: nextTs(),
  };
}

/** Deliver any event body, as Slack would. */
function send(bot: SlackBot, event: { type: string } & Record<string, unknown>): Promise<void> {
  return bot.deliver(event);
}

/** The text of the last user message of the model's latest request. */
function lastUserText(bot: SlackBot): string {
  const body = bot.llm.bodies.at(-1)!;
  const user = [...body.messages].reverse().find((message) => message.role === 'user')!;
  return typeof user.content === 'string' ? user.content : JSON.stringify(user.content);
}

describe('the Messages tab', () => {
  it('offers our four prompts on a new assistant thread, and on opening the tab itself', async () => {
    const bot = await boot();
    const threadTs = nextTs();
    await bot.deliver(threadStarted(threadTs));
    await waitFor(() => bot.slack.assistantThread(SLACK_IDS.dmChannelId, threadTs)?.prompts !== undefined);
    const thread = bot.slack.assistantThread(SLACK_IDS.dmChannelId, threadTs)!;
    expect(thread.prompts).toEqual(DEFAULT_SUGGESTED_PROMPTS);
    expect(thread.promptsTitle).toBe(PROMPTS_TITLE);

    await send(bot, {
      type: 'app_home_opened',
      user: SLACK_IDS.humanUserId,
      channel: SLACK_IDS.dmChannelId,
      tab: 'home',
      event_ts: nextTs(),
    });
    expect(bot.slack.tabPrompts(SLACK_IDS.dmChannelId)).toBeUndefined();
    await send(bot, {
      type: 'app_home_opened',
      user: SLACK_IDS.humanUserId,
      channel: SLACK_IDS.dmChannelId,
      tab: 'messages',
      event_ts: nextTs(),
    });
    await waitFor(() => bot.slack.tabPrompts(SLACK_IDS.dmChannelId) !== undefined);
    expect(bot.slack.tabPrompts(SLACK_IDS.dmChannelId)!.prompts).toHaveLength(4);
  });

  it('offers the operator’s SUGGESTED_PROMPTS instead', async () => {
    const prompts = [{ title: 'Triage', message: 'Triage the newest incident, please' }];
    const bot = await boot({ SUGGESTED_PROMPTS: JSON.stringify(prompts) });
    const threadTs = nextTs();
    await bot.deliver(threadStarted(threadTs));
    await waitFor(() => bot.slack.assistantThread(SLACK_IDS.dmChannelId, threadTs)?.prompts !== undefined);
    expect(bot.slack.assistantThread(SLACK_IDS.dmChannelId, threadTs)!.prompts).toEqual(prompts);
  });

  it('drops a malformed event (acknowledged) and offers nothing for it', async () => {
    const bot = await boot();
    await send(bot, {
      type: 'assistant_thread_started',
      assistant_thread: { user_id: 'not an id', channel_id: SLACK_IDS.dmChannelId },
      event_ts: nextTs(),
    });
    expect(bot.slack.callsOf('assistant.threads.setSuggestedPrompts')).toEqual([]);
    expect(
      bot.logs.lines.some(
        (line) =>
          /dropped a malformed Slack payload/.test(line.message) &&
          JSON.stringify(line).includes('assistant_thread_started'),
      ),
    ).toBe(true);
  });

  it('tells the model which channel the person views in that thread, without reading it', async () => {
    const bot = await boot();
    bot.llm.replyText('Noted.').replyText('Still noted.');
    const threadTs = nextTs();
    await bot.deliver(threadStarted(threadTs, { channel_id: VIEWED, team_id: SLACK_IDS.teamId }));
    await bot.deliver(dmMessage({ text: 'what am I looking at?', threadTs }));
    await waitFor(() => bot.llm.bodies.length === 1);
    await bot.idle();
    expect(lastUserText(bot)).toMatch(new RegExp(`<system-context>[\\s\\S]*<#${VIEWED}>[\\s\\S]*you have not read it`));

    // The person moves to another channel: the next call says so.
    await send(bot, {
      ...threadStarted(threadTs, { channel_id: 'C0OTHER001' }),
      type: 'assistant_thread_context_changed',
    });
    await bot.deliver(dmMessage({ text: 'and now?', threadTs }));
    await waitFor(() => bot.llm.bodies.length === 2);
    await bot.idle();
    expect(lastUserText(bot)).toContain('<#C0OTHER001>');
    expect(lastUserText(bot)).not.toContain(VIEWED);
    // That channel was never read.
    const reads = [...bot.slack.callsOf('conversations.history'), ...bot.slack.callsOf('conversations.replies')];
    expect(
      reads.filter(
        (call) => JSON.stringify(call.args).includes(VIEWED) || JSON.stringify(call.args).includes('C0OTHER001'),
      ),
    ).toEqual([]);
  });

  it('carries a person’s view (agent messaging experience) into their own DM, never into a channel thread', async () => {
    const bot = await boot();
    bot.llm.replyText('In your DM.').replyText('In the channel.');
    // As in Slack's reference example: no channel or user on the event; the person is the human authorization.
    await send(bot, {
      type: 'app_context_changed',
      context: { entities: [{ type: 'slack#/types/channel_id', value: VIEWED, team_id: SLACK_IDS.teamId }] },
      event_ts: nextTs(),
    });
    expect(bot.llm.bodies).toHaveLength(0);
    await send(bot, {
      type: 'app_context_changed',
      user: SLACK_IDS.humanUserId,
      context: {
        entities: [
          { type: 'slack#/types/unknown_kind', value: 'x' },
          { type: 'slack#/types/channel_id', value: VIEWED },
        ],
      },
      event_ts: nextTs(),
    });
    await bot.dm('hello');
    await waitFor(() => bot.llm.bodies.length === 1);
    await bot.idle();
    expect(lastUserText(bot)).toContain(`<#${VIEWED}>`);

    await bot.mention('hello from the channel');
    await waitFor(() => bot.llm.bodies.length === 2);
    await bot.idle();
    expect(lastUserText(bot)).not.toContain(VIEWED);
  });
});
