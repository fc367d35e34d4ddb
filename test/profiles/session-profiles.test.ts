// Profiles as the session layer applies them (src/sessions/, src/profiles/profiles.ts): a new
// thread keeps its place's profile and starts with its model; a profile's approvers approve
// and manage its threads (the starter no longer does), and only there; `allowedUsers` narrows
// who may start, never widens it; /model offers the profile's list; only an admin moves a
// thread to another profile; a changed file rebuilds an idle thread's engine for its next turn.
import { afterEach, describe, expect, it } from 'vitest';
import { ProfileBook } from '../../src/profiles/profile-book.js';
import { Profiles, type ProfileEnvironment } from '../../src/profiles/profiles.js';
import type { Profile } from '../../src/profiles/profile-schema.js';
import { modelMenu } from '../../src/providers/model-menu.js';
import { sessionIdOf, type SessionKey } from '../../src/store/session-store.js';
import { call, callTools, say, ScriptedProvider } from '../fakes/scripted-provider.js';
import { recordingTool, risky } from '../support/engine-kit.js';
import { TestBot } from '../support/test-connector.js';

let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const env: ProfileEnvironment = {
  model: 'openai:gpt-4.1',
  models: modelMenu({ models: 'openai:gpt-4.1,openai:gpt-4.1-mini', defaultModel: 'openai:gpt-4.1' }),
  menuOf: (names, defaultModel) => modelMenu({ models: names.join(','), defaultModel }),
  systemPrompt: 'base prompt',
  permissionMode: 'interactive',
  shellAllowlist: [],
  workspaceScope: 'thread',
};

const OPS: Profile = {
  name: 'ops',
  match: { slackChannel: ['C0OPS'] },
  admins: ['U_ONCALL'],
  model: 'anthropic:claude-sonnet-4-6',
  models: ['anthropic:claude-sonnet-4-6'],
};
const VIP: Profile = { name: 'vip', match: { slackChannel: ['C0VIP'] }, allowedUsers: ['U_VIP'] };

const slack = (channel: string, thread: string): SessionKey => ({
  platform: 'slack',
  workspace: 'T1',
  channel,
  thread,
});

async function start(profiles: Profile[], steps = [say('done')], setups?: { count: number }) {
  const book = new ProfileBook(profiles);
  const view = new Profiles(book, env);
  const provider = new ScriptedProvider(steps);
  bot = await TestBot.start({
    provider,
    tools: [recordingTool('write_file', risky)],
    admins: 'A1',
    manager: {
      profiles: view,
      models: env.models,
      engineSetup: (session) => {
        if (setups) setups.count++;
        return {
          provider,
          tools: [recordingTool('write_file', risky)],
          instructions: view.settingsOf(session.profile).instructions,
        };
      },
    },
  });
  return { bot, book, view, provider };
}

const deliver = (b: TestBot, key: SessionKey, userId: string, text: string) =>
  b.manager.deliver(key, { text, userId, eventId: `${key.thread}-${userId}-${text}` });

describe('profiles in the session layer', () => {
  it("a new thread keeps its place's profile and model; /status names it; elsewhere the default", async () => {
    const { bot } = await start([OPS]);
    await deliver(bot, slack('C0OPS', 't1'), 'U1', 'hi');
    await deliver(bot, slack('C0GEN', 't2'), 'U1', 'hi');
    await bot.manager.idle();
    const ops = await bot.store.getSession(sessionIdOf(slack('C0OPS', 't1')));
    const general = await bot.store.getSession(sessionIdOf(slack('C0GEN', 't2')));
    expect(ops).toMatchObject({ profile: 'ops', model: 'anthropic:claude-sonnet-4-6' });
    expect(general).toMatchObject({ profile: 'default', model: 'scripted-model' });
    expect(await bot.manager.controls.status(sessionIdOf(slack('C0OPS', 't1')), 'U1')).toMatchObject({
      status: 'done',
      value: { profile: 'ops' },
    });
    expect(await bot.manager.controls.modelsOffered(sessionIdOf(slack('C0OPS', 't1')))).toEqual([
      'anthropic:claude-sonnet-4-6',
    ]);
    expect(await bot.manager.controls.modelsOffered(sessionIdOf(slack('C0GEN', 't2')))).toEqual([
      'openai:gpt-4.1',
      'openai:gpt-4.1-mini',
    ]);
    expect(
      await bot.manager.controls.switchModel(sessionIdOf(slack('C0OPS', 't1')), 'openai:gpt-4.1', 'U1'),
    ).toMatchObject({ status: 'refused' });
  });

  it("a profile's approvers approve its threads and the starter does not; the same person is refused in another channel", async () => {
    const { bot } = await start(
      [OPS],
      [
        callTools(call('write_file', { path: 'a' })),
        say('written'),
        callTools(call('write_file', { path: 'b' })),
        say('written'),
      ],
    );
    const opsKey = slack('C0OPS', 't1');
    await deliver(bot, opsKey, 'U1', 'write a');
    const prompt = await waitPrompt(bot, sessionIdOf(opsKey));
    expect(await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U1')).toMatchObject({
      ok: false,
      reason: 'refused',
    });
    expect(await bot.manager.resolve(prompt.id, { choice: 'once' }, 'U_ONCALL')).toMatchObject({ ok: true });
    await bot.manager.idle();

    // In a channel without that profile, ADMINS alone approve: the on-call engineer is a bystander.
    const otherKey = slack('C0GEN', 't2');
    await deliver(bot, otherKey, 'U1', 'write b');
    const other = await waitPrompt(bot, sessionIdOf(otherKey));
    expect(await bot.manager.resolve(other.id, { choice: 'once' }, 'U_ONCALL')).toMatchObject({
      ok: false,
      reason: 'refused',
    });
    expect(await bot.manager.resolve(other.id, { choice: 'once' }, 'A1')).toMatchObject({ ok: true });
    await bot.manager.idle();
  });

  it('allowedUsers narrows who may start: others are refused with a reason, admins pass', async () => {
    const { bot } = await start([VIP]);
    expect(await deliver(bot, slack('C0VIP', 't1'), 'U1', 'hi')).toMatchObject({
      status: 'refused',
      reason: expect.stringContaining('list of people'),
    });
    expect(await bot.store.getSession(sessionIdOf(slack('C0VIP', 't1')))).toBeUndefined();
    expect(await deliver(bot, slack('C0VIP', 't2'), 'U_VIP', 'hi')).toMatchObject({ status: 'started' });
    expect(await deliver(bot, slack('C0VIP', 't3'), 'A1', 'hi')).toMatchObject({ status: 'started' });
    await bot.manager.idle();
  });

  it('a profile cannot make a non-member a member', async () => {
    const book = new ProfileBook([{ ...OPS, allowedUsers: ['U_OUT'] }]);
    const provider = new ScriptedProvider([say('done')]);
    bot = await TestBot.start({ provider, allowedUsers: 'U1', manager: { profiles: new Profiles(book, env) } });
    expect(await deliver(bot, slack('C0OPS', 't1'), 'U_OUT', 'hi')).toMatchObject({ status: 'refused' });
    // Listed as the profile's approver, but not a member under ALLOWED_USERS: no approver either.
    expect(await deliver(bot, slack('C0OPS', 't2'), 'U_ONCALL', 'hi')).toMatchObject({ status: 'refused' });
  });

  it('only an admin moves a thread to another profile; its model follows; the next turn is built under it', async () => {
    const setups = { count: 0 };
    const { bot, provider } = await start([OPS], [say('one'), say('two')], setups);
    const key = slack('C0GEN', 't1');
    await deliver(bot, key, 'U1', 'hi');
    await bot.manager.idle();
    const id = sessionIdOf(key);
    expect(await bot.manager.controls.switchProfile(id, 'ops', 'U1')).toMatchObject({
      status: 'refused',
      reason: expect.stringContaining('admins'),
    });
    expect(await bot.manager.controls.switchProfile(id, 'nope', 'A1')).toMatchObject({
      status: 'refused',
      reason: expect.stringContaining('no profile "nope"'),
    });
    expect(await bot.manager.controls.switchProfile(id, 'ops', 'A1')).toMatchObject({ status: 'done', profile: 'ops' });
    expect(await bot.store.getSession(id)).toMatchObject({ profile: 'ops', model: 'anthropic:claude-sonnet-4-6' });
    const before = setups.count;
    await deliver(bot, key, 'U1', 'again');
    await bot.manager.idle();
    expect(setups.count).toBe(before + 1);
    expect(provider.requests.at(-1)?.model).toBe('anthropic:claude-sonnet-4-6');
  });

  it("a changed file: an idle thread's next turn is built from it; the thread keeps its profile by name", async () => {
    const setups = { count: 0 };
    const { bot, book, provider } = await start(
      [{ ...OPS, instructions: 'first words' }],
      [say('one'), say('two')],
      setups,
    );
    const key = slack('C0OPS', 't1');
    await deliver(bot, key, 'U1', 'hi');
    await bot.manager.idle();
    expect(provider.requests[0]?.messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('first words'),
    });
    book.replace([{ ...OPS, instructions: 'second words' }]);
    await deliver(bot, key, 'U1', 'again');
    await bot.manager.idle();
    expect(setups.count).toBe(2);
    expect(provider.requests[1]?.messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('second words'),
    });
    expect(provider.requests[1]?.messages[0]).not.toMatchObject({ content: expect.stringContaining('first words') });
  });
});

async function waitPrompt(b: TestBot, sessionId: string) {
  for (let i = 0; i < 2_000; i++) {
    const pending = await b.inbox.pending(sessionId);
    if (pending.length > 0) return pending[0]!;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('no prompt');
}
