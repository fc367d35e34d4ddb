// Who may stop a thread, as the session layer judges a 🛑 or /stop: the starter and the
// people who took part only while they may still use the bot there. Someone taken off
// ALLOWED_USERS (a restart with the new list) or off a profile's `allowedUsers` (the file
// reloaded while a turn runs) is refused with the reason, and the turn runs on; the admins
// and the members still on the list stop it as before.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/engine/index.js';
import { ProfileBook } from '../../src/profiles/profile-book.js';
import type { Profile } from '../../src/profiles/profile-schema.js';
import { Profiles, type ProfileEnvironment } from '../../src/profiles/profiles.js';
import { modelMenu } from '../../src/providers/model-menu.js';
import { sessionIdOf, type SessionKey } from '../../src/store/session-store.js';
import { call, callTools, say, ScriptedProvider } from '../fakes/scripted-provider.js';
import { lowRisk, waitFor } from '../support/engine-kit.js';
import { TestBot } from '../support/test-connector.js';

const bots: TestBot[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const bot of bots.splice(0)) await bot.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const env: ProfileEnvironment = {
  model: 'openai:gpt-4.1',
  models: modelMenu({ models: 'openai:gpt-4.1', defaultModel: 'openai:gpt-4.1' }),
  menuOf: (names, defaultModel) => modelMenu({ models: names.join(','), defaultModel }),
  systemPrompt: 'base prompt',
  permissionMode: 'interactive',
  shellAllowlist: [],
  workspaceScope: 'thread',
};

/** A tool whose every run works until the test lets the running ones finish (or the turn is stopped). */
function gatedTool(): { tool: ReturnType<typeof defineTool>; release: () => void } {
  const running = new Set<() => void>();
  const tool = defineTool({
    name: 'long_job',
    description: 'a long job',
    schema: z.object({}),
    metadata: lowRisk,
    execute: async (_args, { signal }) => {
      await new Promise<void>((resolve) => {
        running.add(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      return signal.aborted ? 'stopped' : 'finished';
    },
  });
  return {
    tool,
    release: () => {
      for (const resolve of running) resolve();
      running.clear();
    },
  };
}

describe('stopping a thread after losing access', () => {
  it("taken off a profile's allowedUsers while a turn runs: their 🛑 is refused with the reason and the turn runs on; the starter still stops", async () => {
    const ROOM: Profile = { name: 'room', match: { slackChannel: ['C0ROOM'] }, allowedUsers: ['U1', 'U2'] };
    const book = new ProfileBook([ROOM]);
    const { tool, release } = gatedTool();
    const provider = new ScriptedProvider([callTools(call('long_job')), say('done'), callTools(call('long_job'))]);
    const bot = await TestBot.start({
      provider,
      tools: [tool],
      admins: 'A1',
      manager: { profiles: new Profiles(book, env) },
    });
    bots.push(bot);
    const key: SessionKey = { platform: 'slack', workspace: 'T1', channel: 'C0ROOM', thread: 't1' };
    const id = sessionIdOf(key);
    expect(await bot.manager.deliver(key, { text: 'run the job', userId: 'U1', eventId: 'e1' })).toMatchObject({
      status: 'started',
    });
    await waitForTool(bot, id, 1);
    // Bob takes part: he is a participant, who may stop the thread while he is on the list.
    expect(
      await bot.manager.deliver(key, { text: 'and tell me when it is done', userId: 'U2', eventId: 'e2' }),
    ).toMatchObject({ status: 'queued' });
    expect((await bot.store.getSession(id))!.steerers).toContain('U2');

    book.replace([{ ...ROOM, allowedUsers: ['U1'] }]);
    expect(await bot.manager.interrupt(id, 'U2')).toEqual({
      status: 'refused',
      reason: expect.stringContaining('not on it'),
    });
    expect(bot.manager.isWorking(id)).toBe(true);
    release();
    await bot.manager.idle();
    expect(
      bot.shown
        .filter((s) => s.sessionId === id)
        .map((s) => s.event)
        .filter((e) => e.type === 'turn_end'),
    ).toEqual([expect.objectContaining({ status: 'completed' })]);

    // The starter, still on the list, stops the next turn.
    expect(await bot.manager.deliver(key, { text: 'once more', userId: 'U1', eventId: 'e3' })).toMatchObject({
      status: 'started',
    });
    await waitForTool(bot, id, 2);
    expect(await bot.manager.interrupt(id, 'U1')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
  });

  it('taken off ALLOWED_USERS (the bot restarted with the new list): a participant and even the starter are refused; an admin stops', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stop-access-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const storeUrl = `sqlite://${join(dir, 'bot.sqlite')}`;
    const first = await TestBot.start({
      provider: new ScriptedProvider([say('hello'), say('noted')]),
      storeUrl,
      allowedUsers: 'U1,U2',
      admins: 'A1',
    });
    bots.push(first);
    await first.say('T1', 'U1', 'hi');
    await first.manager.idle();
    await first.say('T1', 'U2', 'me too');
    await first.manager.idle();
    expect((await first.store.getSession(first.sessionId('T1')))!.steerers).toContain('U2');
    await first.stop();
    bots.splice(bots.indexOf(first), 1);

    const { tool, release } = gatedTool();
    const second = await TestBot.start({
      provider: new ScriptedProvider([callTools(call('long_job')), say('done')]),
      tools: [tool],
      storeUrl,
      allowedUsers: 'U3',
      admins: 'A1',
    });
    bots.push(second);
    const id = second.sessionId('T1');
    // An admin starts a turn in the thread; neither of the two removed people may stop it.
    expect(await second.say('T1', 'A1', 'run the job')).toMatchObject({ status: 'started' });
    await waitForTool(second, id, 1);
    expect(await second.manager.interrupt(id, 'U2')).toEqual({
      status: 'refused',
      reason: 'You are not on the list of people who may use this bot here.',
    });
    expect(await second.manager.interrupt(id, 'U1')).toEqual({
      status: 'refused',
      reason: 'You are not on the list of people who may use this bot here.',
    });
    expect(second.manager.isWorking(id)).toBe(true);
    expect(await second.manager.interrupt(id, 'A1')).toMatchObject({ status: 'done' });
    await second.manager.idle();
    release();
  });
});

function waitForTool(bot: TestBot, sessionId: string, count: number): Promise<void> {
  return waitFor(
    () => bot.shown.filter((s) => s.sessionId === sessionId && s.event.type === 'tool_started').length >= count,
    20_000,
  );
}
