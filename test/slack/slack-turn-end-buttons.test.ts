// The buttons a turn posts as it ends (Retry after a provider error, Continue at the step
// limit, 👍 / 👎 under its answer) work from the moment they show. The person clicks the instant the note is in the
// thread, before the bot has even heard back from posting it: FakeSlack holds the answer to
// that post until the click is on the socket and acked (the ack is the first thing the
// click's listener does), so the click reaches the session layer while the turn that posted
// the button is still winding down. In Socket Mode, as the ack is the barrier (in HTTP mode
// Bolt answers a click only after its work, which here waits for that very turn).
import { afterEach, describe, expect, it } from 'vitest';
import { RETRY_ACTION } from '../../connectors/slack/actions.js';
import { blockActions, SLACK_IDS } from '../fakes/slack-payloads.js';
import type { SlackCall } from '../fakes/slack-server.js';
import { waitFor } from '../support/engine-kit.js';
import { feedbackClick } from './slack-harness-feedback.js';
import { bootSocketBot, type SocketBot } from './slack-socket-harness.js';

const C = SLACK_IDS.channelId;
const ADA = SLACK_IDS.humanUserId;

let bot: SocketBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const hasNoteButton = (call: SlackCall) => JSON.stringify(call.args.blocks ?? []).includes(RETRY_ACTION);

/**
 * Arrange the click: when the note with the Retry / Continue button is posted, its poster is
 * kept waiting while ada clicks the button and the click is acked. Resolves with the note's ts
 * and the id of the click's response_url.
 */
function clickNoteAsSoonAsPosted(b: SocketBot): Promise<{ ts: string; responseId: string }> {
  return new Promise((resolve, reject) => {
    b.slack.onceAnswered('chat.postMessage', hasNoteButton, async (call) => {
      try {
        const ts = (call.answer as { ts: string }).ts;
        const blocks = call.args.blocks as { elements?: { action_id?: string; value?: string }[] }[];
        const button = blocks
          .flatMap((block) => block.elements ?? [])
          .find((element) => element.action_id === RETRY_ACTION)!;
        await b.socket.deliverInteractive(
          blockActions({
            actionId: RETRY_ACTION,
            value: button.value!,
            messageTs: ts,
            threadTs: String(call.args.thread_ts),
            channel: C,
            user: ADA,
            responseUrl: b.slack.responseUrl('click'),
            messageText: typeof call.args.text === 'string' ? call.args.text : '',
            messageBlocks: blocks,
          }),
        );
        resolve({ ts, responseId: 'click' });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

describe('a button at the end of a turn, clicked the moment it shows', () => {
  it('Retry after a provider error runs the request again (not "I am already working in this thread")', async () => {
    bot = await bootSocketBot();
    bot.llm.replyError(500).replyError(500).replyError(500);
    bot.llm.replyText('Worked this time.');
    const clicked = clickNoteAsSoonAsPosted(bot);
    const { root } = await bot.mention('question');
    const note = await clicked;

    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('Worked this time.')), 15_000);
    await bot.core.manager.idle();
    await waitFor(() => JSON.stringify(bot!.slack.message(C, note.ts)?.blocks ?? []).includes(`retried by <@${ADA}>`));
    expect(JSON.stringify(bot.slack.message(C, note.ts)!.blocks)).not.toContain(RETRY_ACTION);
    // Nothing was said to ada privately: the click simply worked.
    expect(bot.slack.responsePosts.filter((post) => post.id === note.responseId)).toEqual([]);
  });

  it('Continue at the step limit lets the turn go on', async () => {
    bot = await bootSocketBot({ MAX_ITERATIONS: '1' });
    bot.llm.replyToolCalls([{ name: 'list_dir', arguments: { path: '.' } }]);
    bot.llm.replyText('The workspace is empty.');
    const clicked = clickNoteAsSoonAsPosted(bot);
    const { root } = await bot.mention('look around the workspace');
    const note = await clicked;
    expect(bot.slack.message(C, note.ts)!.text).toBe('Reached the step limit');

    await waitFor(() => bot!.slack.thread(C, root).some((m) => m.text.includes('The workspace is empty.')), 15_000);
    await bot.core.manager.idle();
    expect(bot.llm.requests).toHaveLength(2);
    await waitFor(() => JSON.stringify(bot!.slack.message(C, note.ts)?.blocks ?? []).includes(`retried by <@${ADA}>`));
    expect(bot.slack.responsePosts.filter((post) => post.id === note.responseId)).toEqual([]);
  });

  it('👍 under the answer counts the vote (not "That answer is no longer kept")', async () => {
    bot = await bootSocketBot();
    bot.llm.replyText('Here is the answer.');
    const b = bot;
    // The buttons come with the stream's end; ada clicks before the bot hears back from it.
    const voted = new Promise<void>((resolve, reject) => {
      b.slack.onceAnswered(
        'chat.stopStream',
        (call) => JSON.stringify(call.args.blocks ?? []).includes('feedback_buttons'),
        async (call) => {
          try {
            await b.socket.deliverInteractive(
              feedbackClick(b.slack, String(call.args.ts), 'up', { responseUrl: b.slack.responseUrl('vote') }),
            );
            resolve();
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        },
      );
    });
    await bot.mention('a question');
    await voted;
    expect((await bot.slack.waitForResponse('vote')).body).toMatchObject({
      response_type: 'ephemeral',
      text: 'Thanks for the :+1:: it is counted.',
    });
    await bot.core.manager.idle();
    expect(await bot.core.feedback.totals()).toMatchObject({ up: 1, down: 0 });
  });
});
