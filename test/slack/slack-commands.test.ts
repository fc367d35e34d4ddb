// Thread commands: a mention whose text starts with `/word`.
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_ACTION } from '../../connectors/slack/actions.js';
import { SLACK_IDS } from '../fakes/slack-payloads.js';
import { waitFor } from '../support/engine-kit.js';
import { bootSlackBot, waitForCard, type SlackBot } from './slack-harness.js';

const C = SLACK_IDS.channelId;
let bot: SlackBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const lastWhisper = (b: SlackBot) => b.slack.ephemerals(C).at(-1)?.text ?? '';

describe('thread commands', () => {
  it('/status, /grants and /revoke show and change what the thread allows, privately', async () => {
    bot = await bootSlackBot();
    bot.llm.replyToolCalls([{ name: 'run_shell', arguments: { command: 'echo hi' } }]);
    bot.llm.replyText('done');
    const root = await bot.mention('say hi');
    const card = await waitForCard(bot, root, 'run_shell', (text) => text.includes(PROMPT_ACTION));
    await bot.click(card.ts, { actionId: PROMPT_ACTION, choice: 'always_command' });
    await bot.idle();

    await bot.mention('/status', { threadTs: root });
    await waitFor(() => lastWhisper(bot!).includes('*Model:*'));
    expect(lastWhisper(bot)).toMatch(
      /openai:gpt-4\.1[\s\S]*`echo hi` in run_shell \(by <@U0HUMAN001>, for their own requests\)/,
    );

    await bot.mention('/grants', { threadTs: root });
    await waitFor(() => lastWhisper(bot!).startsWith('Always allowed in this thread'));
    // Who granted what, and whose turns it covers.
    expect(lastWhisper(bot)).toContain(
      `\`echo hi\` in run_shell (by <@${SLACK_IDS.humanUserId}>, for their own requests)`,
    );

    await bot.mention('/revoke run_shell echo hi', { threadTs: root });
    await waitFor(() => lastWhisper(bot!).startsWith('Revoked'));
    expect(
      await bot.core.manager.controls.listGrants((await bot.core.store.listSessionIds())[0]!, SLACK_IDS.humanUserId),
    ).toMatchObject({ value: { thread: { commands: [] } } });

    await bot.mention('/dance', { threadTs: root });
    await waitFor(() => lastWhisper(bot!).includes('I do not know `/dance`'));
    // None of these reached the model.
    expect(bot.llm.requests).toHaveLength(2);
  });

  it('/agent answers with help, privately', async () => {
    bot = await bootSlackBot();
    const { sendSlashCommand } = await import('../fakes/slack-signer.js');
    const { slashCommand } = await import('../fakes/slack-payloads.js');
    const response = await sendSlashCommand(
      bot.url,
      'test-signing-secret',
      slashCommand({ command: '/agent', text: 'help', responseUrl: bot.slack.responseUrl('help') }),
    );
    expect(response.status).toBe(200);
    const posted = await bot.slack.waitForResponse('help');
    expect(JSON.stringify(posted)).toContain('How to use me');
  });
});
