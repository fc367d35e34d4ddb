// The profiles as the rest of the bot reads them: the engine's view (instructions appended or
// replacing, tools, mode, allow-list, folder), the session layer's (admins, members, starting
// model, /model's menu with the profile's own model on it), the environment's own `default`
// when the file no longer has a thread's profile; `offers` (an MCP server's name covers its
// `server__tool`s); and a profile's folder, which a link cannot carry out of WORKSPACE_DIR.
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProfileBook } from '../../src/profiles/profile-book.js';
import type { Profile } from '../../src/profiles/profile-schema.js';
import { profileFolder } from '../../src/profiles/profile-setup.js';
import { offers, Profiles, type ProfileEnvironment } from '../../src/profiles/profiles.js';
import { modelMenu } from '../../src/providers/model-menu.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const env: ProfileEnvironment = {
  model: 'openai:gpt-4.1',
  models: modelMenu({ models: 'openai:gpt-4.1,openai:gpt-4.1-mini', defaultModel: 'openai:gpt-4.1' }),
  menuOf: (names, defaultModel) => modelMenu({ models: names.join(','), defaultModel }),
  systemPrompt: 'You are the bot.',
  permissionMode: 'interactive',
  shellAllowlist: ['ls'],
  workspaceScope: 'thread',
};

const OPS: Profile = {
  name: 'ops',
  match: { slackChannel: ['C0OPS'] },
  instructions: 'You help the on-call engineer.',
  model: 'anthropic:claude-sonnet-4-6',
  tools: ['read_file', 'run_shell', 'github'],
  permissionMode: 'auto',
  shellAllowlist: ['git status', 'git log *'],
  admins: ['U0ONCALL'],
  allowedUsers: ['U0ONCALL', 'U0ADA'],
  workspace: { scope: 'channel', folder: 'ops' },
};
const SUPPORT: Profile = {
  name: 'support',
  match: { slackChannel: ['C0SUP'] },
  instructions: 'Answer customers.',
  instructionsMode: 'replace',
  models: ['openai:gpt-4.1-mini', 'anthropic:claude-haiku-4-5'],
  model: 'openai:gpt-4.1',
};

const profiles = (list: Profile[] = [OPS, SUPPORT]): Profiles => new Profiles(new ProfileBook(list), env);
const key = (channel: string) => ({ platform: 'slack', workspace: 'T1', channel, thread: '1.0' });

describe("Profiles: the engine's view", () => {
  it('instructions appended to the system message, or replacing it; the rest laid over the environment', () => {
    const view = profiles();
    const ops = view.settingsOf('ops');
    expect(ops).toEqual({
      name: 'ops',
      instructions: 'You are the bot.\n\nYou help the on-call engineer.',
      tools: new Set(['read_file', 'run_shell', 'github']),
      permissionMode: 'auto',
      shellAllowlist: ['git status', 'git log *'],
      workspaceScope: 'channel',
      workspaceFolder: 'ops',
    });
    const support = view.settingsOf('support');
    expect(support.instructions).toBe('Answer customers.');
    // What support does not set is the environment's.
    expect(support).toMatchObject({ permissionMode: 'interactive', shellAllowlist: ['ls'], workspaceScope: 'thread' });
    expect(support.tools).toBeUndefined();
  });

  it("default: the environment's own, for `default`, no name, or a name the file no longer has", () => {
    const view = profiles();
    const own = {
      name: 'default',
      instructions: 'You are the bot.',
      permissionMode: 'interactive',
      shellAllowlist: ['ls'],
      workspaceScope: 'thread',
    };
    expect(view.settingsOf('default')).toEqual(own);
    expect(view.settingsOf(undefined)).toEqual(own);
    view.book.replace([SUPPORT]);
    expect(view.settingsOf('ops')).toEqual(own);
    expect(view.named('ops')).toMatchObject({ name: 'default' });
  });

  it("settingsAt follows the place, folders lists each profile's", () => {
    const view = profiles();
    expect(view.settingsAt({ platform: 'slack', workspace: 'T1', channel: 'C0OPS' }).name).toBe('ops');
    expect(view.settingsAt({ platform: 'slack', workspace: 'T1', channel: 'C0ELSE' }).name).toBe('default');
    expect(view.folders('/w')).toEqual([
      { workspaceDir: '/w', scope: 'thread' },
      { workspaceDir: '/w/ops', scope: 'channel' },
    ]);
  });
});

describe('offers', () => {
  it("a tool by its name, an MCP tool by its own name or its server's; no list offers all", () => {
    const tools = new Set(['read_file', 'github', 'jira__search']);
    expect(offers(tools, 'read_file')).toBe(true);
    expect(offers(tools, 'run_shell')).toBe(false);
    expect(offers(tools, 'github__create_issue')).toBe(true);
    expect(offers(tools, 'jira__search')).toBe(true);
    expect(offers(tools, 'jira__delete')).toBe(false);
    expect(offers(tools, '__github')).toBe(false);
    expect(offers(undefined, 'run_shell')).toBe(true);
  });
});

describe("Profiles: the session layer's view", () => {
  it("a place's profile: its admins, its narrowed members, its starting model", () => {
    const view = profiles();
    const ops = view.forPlace(key('C0OPS'));
    expect(ops.name).toBe('ops');
    expect(ops.admins).toEqual(new Set(['U0ONCALL']));
    expect(ops.allowedUsers).toEqual(new Set(['U0ONCALL', 'U0ADA']));
    expect(ops.model).toBe('anthropic:claude-sonnet-4-6');
    const elsewhere = view.forPlace(key('C0ELSE'));
    expect(elsewhere).toEqual({ name: 'default', admins: new Set(), models: env.models });
    expect(view.names()).toEqual(['default', 'ops', 'support']);
  });

  it("/model's menu: the profile's list with its own model on it, else MODELS with its model added", () => {
    const view = profiles();
    // ops has no `models`: MODELS, and its own model so a thread can switch back to it.
    const opsMenu = view.forPlace(key('C0OPS')).models!;
    expect([...opsMenu.available].sort()).toEqual([
      'anthropic:claude-sonnet-4-6',
      'openai:gpt-4.1',
      'openai:gpt-4.1-mini',
    ]);
    // support lists its own, without its model: the model is added.
    const supportMenu = view.named('support').models!;
    expect([...supportMenu.available].sort()).toEqual([
      'anthropic:claude-haiku-4-5',
      'openai:gpt-4.1',
      'openai:gpt-4.1-mini',
    ]);
    expect(supportMenu.choose('openai:gpt-4o')).toMatchObject({ ok: false });
    expect(supportMenu.choose('anthropic:claude-haiku-4-5')).toEqual({ ok: true, model: 'anthropic:claude-haiku-4-5' });
    // A profile with neither: the environment's menu.
    const plain = profiles([{ name: 'plain', match: { dm: true } }]);
    expect(plain.named('plain').models).toBe(env.models);
  });

  it('a reload makes the menus anew', () => {
    const view = profiles();
    const before = view.named('support').models!;
    view.book.replace([{ ...SUPPORT, models: ['openai:gpt-4.1-mini'] }]);
    const after = view.named('support').models!;
    expect(after).not.toBe(before);
    expect([...after.available].sort()).toEqual(['openai:gpt-4.1', 'openai:gpt-4.1-mini']);
  });
});

describe('profileFolder', () => {
  it('makes the folder under WORKSPACE_DIR; no folder is WORKSPACE_DIR itself', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const workspace = join(dir.path, 'workspace');
    expect(profileFolder(workspace, 'teams/ops')).toBe(join(realpathSync(dir.path), 'workspace', 'teams', 'ops'));
    expect(profileFolder(workspace, undefined)).toBe(workspace);
  });

  it('refuses a folder that a link carries out of WORKSPACE_DIR', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const workspace = join(dir.path, 'workspace');
    const outside = join(dir.path, 'outside');
    mkdirSync(workspace);
    mkdirSync(outside);
    symlinkSync(outside, join(workspace, 'ops'));
    expect(() => profileFolder(workspace, 'ops')).toThrow(
      /the profile folder ops leads out of WORKSPACE_DIR \(to .*outside\); remove the link/,
    );
    // A link inside the workspace to a folder inside it is refused too: the folder must be its own path.
    mkdirSync(join(workspace, 'real'));
    symlinkSync(join(workspace, 'real'), join(workspace, 'alias'));
    expect(() => profileFolder(workspace, 'alias')).toThrow(/leads out of WORKSPACE_DIR/);
  });
});
