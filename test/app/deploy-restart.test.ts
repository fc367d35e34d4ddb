// Issue 13 point 3: a deploy never costs a user their approval or their answer. The bot runs
// as production runs it (test/support/npm-start.ts: `npm ci --omit=dev` in a copy of the
// project, then `npm start` with dash as npm's shell), against the fake Slack in HTTP mode and
// the fake model. SIGTERM goes to the npm process only. Checked: the signal reaches the bot,
// which logs "stopping…" and "stopped", exits 0 and leaves no process behind; a card left
// pending by the stop still approves after the restart and runs its call once; an answer cut
// mid-stream is closed with a note and the turn carries on after the restart.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RESTARTING_NOTE } from '../../connectors/shared/card-words.js';
import { appMention, blockActions, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendEvent, sendInteraction } from '../fakes/slack-signer.js';
import { waitFor } from '../support/engine-kit.js';
import { alive, NpmStart, processesIn, productionCopy } from '../support/npm-start.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { inOnlyConversation } from '../support/conversation-folders.js';
import { approveButtonOf } from '../support/slack-approve.js';

const SECRET = 'signing-secret';
const C = SLACK_IDS.channelId;

let copy: { path: string; remove: () => Promise<void> };
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  copy = await productionCopy();
}, 300_000);
afterAll(async () => {
  await copy?.remove();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(extraEnv: Record<string, string> = {}) {
  const fakes = await startBotFakes(cleanups);
  const { dir, slack, llm } = fakes;
  const env = slackHttpEnv(fakes, SECRET, { PERMISSION_MODE: 'interactive', ...extraEnv });
  const lives: NpmStart[] = [];
  cleanups.push(async () => {
    for (const life of lives) await life.kill();
  });
  const start = async () => {
    const life = await NpmStart.start(copy.path, env);
    lives.push(life);
    return life;
  };
  return { dir, slack, llm, start };
}

/** SIGTERM to npm; the bot must stop cleanly, say so, and leave nothing running. */
async function stopCleanly(life: NpmStart, workspace?: string): Promise<void> {
  life.terminate();
  const code = await Promise.race([
    life.exited,
    new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000)),
  ]);
  const story = `\nstdout:\n${life.stdout.slice(-3000)}\nstderr:\n${life.stderr.slice(-3000)}`;
  expect(code, `npm start's exit code${story}`).toBe(0);
  const messages = life.lines().map((line) => line.msg);
  expect(messages, story).toContain('stopping…');
  expect(messages, story).toContain('stopped');
  expect(
    life.lines().filter((line) => Number(line.level) >= 50),
    `no error was logged${story}`,
  ).toEqual([]);
  // A production install (no dev dependencies) compiles the bot at its first start and runs it compiled.
  expect(life.stderr, story).not.toContain('Could not build the bot');
  await waitFor(() => !alive(life.botPid), 5_000);
  expect(await processesIn(copy.path)).toEqual([]);
  // A command the bot ran (its cwd is the workspace) must not outlive it either.
  if (workspace) expect(await processesIn(workspace)).toEqual([]);
}

describe('npm start in a production install, SIGTERM to npm, npm start again', () => {
  it(
    'keeps a pending approval: after the restart its card still approves, and the call runs once',
    { timeout: 120_000 },
    async () => {
      const { dir, slack, llm, start } = await setup();
      llm.replyToolCalls([
        { name: 'write_file', arguments: { path: 'deployed.txt', content: 'written once\n' }, id: 'call_deploy_1' },
      ]);
      const first = await start();
      const mention = appMention({ text: 'write deployed.txt please' });
      slack.addMessage(mention);
      expect((await sendEvent(first.eventsUrl, SECRET, eventCallback(mention))).status).toBe(200);
      const cardWithButton = () =>
        slack.thread(C, mention.ts).find((m) => m.user === SLACK_IDS.botUserId && approveButtonOf(m));
      await waitFor(() => cardWithButton() !== undefined, 20_000);

      await stopCleanly(first);
      // Nothing was closed or stopped on the way out: the card still offers its buttons, and no note says "Stopped".
      const card = cardWithButton()!;
      expect(approveButtonOf(card)).toBeDefined();
      expect(
        slack
          .thread(C, mention.ts)
          .map((m) => m.text)
          .join('\n'),
      ).not.toMatch(/Stopped|Closed/);

      llm.replyText('The file is written.');
      const second = await start();
      const button = approveButtonOf(card)!;
      const click = blockActions({
        actionId: button.actionId,
        value: button.value,
        messageTs: card.ts,
        threadTs: mention.ts,
        channel: C,
        responseUrl: slack.responseUrl('deploy-click'),
        messageText: card.text,
        ...(card.blocks ? { messageBlocks: card.blocks } : {}),
      });
      expect((await sendInteraction(second.eventsUrl, SECRET, click)).status).toBe(200);
      await waitFor(
        () =>
          slack
            .thread(C, mention.ts)
            .some((m) => m.user === SLACK_IDS.botUserId && m.text.includes('The file is written.')),
        20_000,
      );
      expect(await readFile(inOnlyConversation(join(dir, 'workspace'), 'deployed.txt'), 'utf8')).toBe('written once\n');
      // The model got the call's result once, from the run after the click (not "interrupted").
      const last = llm.bodies.at(-1)!.messages;
      const results = last.filter((m) => m.role === 'tool');
      expect(results.map((m) => m.tool_call_id)).toEqual(['call_deploy_1']);
      expect(JSON.stringify(results[0]!.content)).not.toMatch(/interrupted/i);
      await stopCleanly(second);
    },
  );

  it(
    'gives a command running at the stop the same treatment as a crash: ended, reported as cut by the restart, never run again',
    { timeout: 120_000 },
    async () => {
      const { dir, slack, llm, start } = await setup({ PERMISSION_MODE: 'auto', SHELL_SANDBOX: 'bwrap' });
      const script = 'echo started >> side-effect.txt; sleep 60; echo finished >> side-effect.txt';
      llm.replyToolCalls([{ name: 'run_shell', arguments: { command: script }, id: 'call_deploy_shell' }]);
      const first = await start();
      const mention = appMention({ text: 'run the long job' });
      slack.addMessage(mention);
      expect((await sendEvent(first.eventsUrl, SECRET, eventCallback(mention))).status).toBe(200);
      const sideEffect = () =>
        readFile(inOnlyConversation(join(dir, 'workspace'), 'side-effect.txt'), 'utf8').catch(() => '');
      for (let started = ''; !started.includes('started'); started = await sideEffect())
        await new Promise((resolve) => setTimeout(resolve, 50));

      await stopCleanly(first, join(dir, 'workspace'));
      const botText = () =>
        slack
          .thread(C, mention.ts)
          .filter((m) => m.user === SLACK_IDS.botUserId)
          .map((m) => m.text)
          .join('\n');
      expect(botText()).toContain(RESTARTING_NOTE);

      llm.replyText('The job was cut by the restart; I will not run it again unasked.');
      const second = await start();
      await waitFor(() => botText().includes('I will not run it again unasked.'), 20_000);
      // Ran once, cut once: the model was told so, and the card says so.
      expect(await sideEffect()).toBe('started\n');
      const results = llm.bodies.at(-1)!.messages.filter((m) => m.role === 'tool');
      expect(results.map((m) => m.tool_call_id)).toEqual(['call_deploy_shell']);
      expect(JSON.stringify(results[0]!.content)).toContain('interrupted by a restart');
      await stopCleanly(second);
    },
  );

  it(
    'closes an answer cut mid-stream with a note, and the turn carries on after the restart',
    { timeout: 120_000 },
    async () => {
      const { slack, llm, start } = await setup();
      llm.replyStallAfter(4, { text: 'Here is the first part of a long answer, and then' });
      const first = await start();
      const mention = appMention({ text: 'tell me something long' });
      slack.addMessage(mention);
      expect((await sendEvent(first.eventsUrl, SECRET, eventCallback(mention))).status).toBe(200);
      const botText = () =>
        slack
          .thread(C, mention.ts)
          .filter((m) => m.user === SLACK_IDS.botUserId)
          .map((m) => m.text)
          .join('\n');
      await waitFor(() => botText().includes('Here is'), 20_000);

      await stopCleanly(first);
      expect(botText()).toContain(RESTARTING_NOTE);
      // The stream was closed, not left open for Slack to time out.
      expect(slack.thread(C, mention.ts).filter((m) => m.stream && m.stream.state !== 'stopped')).toEqual([]);

      llm.replyText('The whole answer, after the restart.');
      const second = await start();
      await waitFor(() => botText().includes('The whole answer, after the restart.'), 20_000);
      expect(llm.requests).toHaveLength(2);
      // Asked again for the same answer: the user's message last, nothing half-written before it.
      const again = llm.bodies[1]!.messages;
      expect(again.at(-1)).toMatchObject({ role: 'user' });
      expect(JSON.stringify(again.at(-1))).toContain('tell me something long');
      await stopCleanly(second);
    },
  );
});
