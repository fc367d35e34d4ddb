// A button the bot posts at a turn's end works from the moment it shows: the Retry on a
// failure's note, the Continue at the step limit, clicked while the turn that posted them
// still winds down (its end recorded, the thread's status cleared), wait for that turn and
// then act. The click is made from inside the view's drawing of the note (`onShown`), the
// earliest instant a person could see the button.
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError, type EngineEvent } from '../../src/engine/index.js';
import type { ControlResult } from '../../src/sessions/session-manager.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { lowRisk, recordingTool, waitFor } from '../support/engine-kit.js';
import { TestBot, type TestBotOptions } from '../support/test-connector.js';

let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

/** A bot whose view clicks (`controls.retry` as U1) the moment it draws an event `clickOn` picks. */
async function clickingBot(
  steps: Step[],
  clickOn: (event: EngineEvent) => boolean,
  options: Partial<TestBotOptions> = {},
) {
  const provider = new ScriptedProvider(steps);
  const clicks: Promise<ControlResult>[] = [];
  bot = await TestBot.start({
    provider,
    ...options,
    onShown: (event, shown) => {
      if (clickOn(event) && clicks.length === 0) clicks.push(shown.manager.controls.retry(shown.sessionId('T1'), 'U1'));
    },
  });
  return { bot, provider, clicks };
}

describe('a button clicked as soon as the turn that posted it shows it', () => {
  it('Retry on a provider error waits for the failed turn to end, then runs the request again', async () => {
    const { bot, provider, clicks } = await clickingBot(
      [{ error: new ProviderError('server', 'The provider had a server error.') }, say('Worked this time.')],
      (event) => event.type === 'error',
    );
    await bot.say('T1', 'U1', 'question');
    await waitFor(() => clicks.length === 1);
    expect(await clicks[0]).toEqual({ status: 'done', sessionId: bot.sessionId('T1') });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(2);
    expect(
      bot
        .events('T1')
        .filter((event) => event.type === 'turn_start')
        .map((event) => event.type === 'turn_start' && event.kind),
    ).toEqual(['run', 'retry']);
    expect((await bot.store.loadTranscript(bot.sessionId('T1'))).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'Worked this time.',
    });
  });

  it('Continue at the step limit waits for the turn to end, then lets it go on', async () => {
    const { bot, provider, clicks } = await clickingBot(
      [callTools(call('look')), say('Finished after Continue.')],
      (event) => event.type === 'turn_end' && event.status === 'max_iterations_exceeded',
      { tools: [recordingTool('look', lowRisk)], setup: { maxIterations: 1 } },
    );
    await bot.say('T1', 'U1', 'look around');
    await waitFor(() => clicks.length === 1);
    expect(await clicks[0]).toEqual({ status: 'done', sessionId: bot.sessionId('T1') });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(2);
    expect((await bot.store.loadTranscript(bot.sessionId('T1'))).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'Finished after Continue.',
    });
  });

  it('a click while a turn still works is told at once that the bot is busy (it does not wait for the turn)', async () => {
    // The second turn's model call stalls until it is stopped: only the click can end the wait early.
    const provider = new ScriptedProvider([
      { error: new ProviderError('server', 'The provider had a server error.') },
      { stallBeforeFirstToken: true },
    ]);
    bot = await TestBot.start({ provider });
    await bot.say('T1', 'U1', 'question');
    await bot.manager.idle();
    await bot.say('T1', 'U1', 'something else');
    await waitFor(() => provider.requests.length === 2);
    expect(await bot.manager.controls.retry(bot.sessionId('T1'), 'U1')).toEqual({ status: 'busy' });
    await bot.manager.interrupt(bot.sessionId('T1'), 'U1');
    await bot.manager.idle();
  });
});
