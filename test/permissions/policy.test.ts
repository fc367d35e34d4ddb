import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  SessionGrants,
  type PolicyDecision,
  type ToolDefinition,
  type ToolMetadata,
} from '../../src/engine/index.js';
import { createPermissionPolicy, type PermissionMode } from '../../src/permissions/index.js';

function tool(name: string, metadata: ToolMetadata | undefined): ToolDefinition {
  return defineTool({
    name,
    description: name,
    schema: z.object({ command: z.string().optional() }),
    metadata,
    commandOf: ({ command }) => command,
    execute: async () => 'ran',
  });
}

const readFile = tool('read_file', { risk: 'low', category: 'read', idempotent: true });
const writeFile = tool('write_file', { risk: 'medium', category: 'write' });
const runShell = tool('run_shell', { risk: 'high', category: 'exec' });
const fetchUrl = tool('fetch_url', { risk: 'high', category: 'external' });
const bare = tool('mystery', undefined);
const oddCategory = tool('odd', { risk: 'low', category: 'network' });
const noCategory = tool('uncategorised', { risk: 'low' });
const insistingRead = tool('peek_secrets', { risk: 'low', category: 'read', requiresApproval: true });

const ADA = 'U0ADA';
const BOB = 'U0BOB';

function decide(
  mode: PermissionMode,
  subject: ToolDefinition,
  options: {
    command?: string;
    grants?: SessionGrants;
    allowList?: string[];
    requesters?: (string | undefined)[];
    grantScope?: 'thread' | 'channel';
  } = {},
): PolicyDecision {
  const policy = createPermissionPolicy({
    mode,
    shellAllowList: options.allowList ?? [],
    ...(options.grantScope ? { grantScope: options.grantScope } : {}),
  });
  return policy.evaluate({
    tool: subject,
    arguments: options.command === undefined ? {} : { command: options.command },
    command: options.command,
    grants: options.grants ?? new SessionGrants(),
    requesters: options.requesters ?? [ADA],
  });
}

describe('interactive mode (the default): reads run, the rest asks', () => {
  it('is the mode a policy gets when none is given', () => {
    expect(createPermissionPolicy().mode).toBe('interactive');
  });

  it('a read runs without asking', () => {
    expect(decide('interactive', readFile).decision).toBe('allow');
  });

  it.each([
    [
      'write_file',
      writeFile,
      'write_file is write-risk (changes files in the workspace): asks unless always allowed in this thread',
    ],
    [
      'fetch_url',
      fetchUrl,
      'fetch_url is external-risk (reaches the network or other channels): asks unless always allowed in this thread',
    ],
  ])('%s asks, and the card says why', (_name, subject, reason) => {
    expect(decide('interactive', subject)).toEqual({ decision: 'needs_user', reason });
  });

  it('the reason names where an "always" applies in the words of the card\'s buttons (GRANT_SCOPE), never "for this session"', () => {
    expect(decide('interactive', writeFile).reason).toMatch(/asks unless always allowed in this thread$/);
    expect(decide('interactive', writeFile, { grantScope: 'channel' }).reason).toMatch(
      /asks unless always allowed in this channel$/,
    );
    expect(decide('interactive', writeFile).reason).not.toMatch(/session/);
  });

  it('a shell command asks unless allow-listed, and the card says why this one is not', () => {
    expect(decide('interactive', runShell, { command: 'rm -rf build', allowList: ['git status'] })).toEqual({
      decision: 'needs_user',
      reason:
        'run_shell is exec-risk (runs shell commands): asks unless allow-listed — no shell allow-list entry matches it',
    });
    expect(
      decide('interactive', runShell, { command: 'git status; rm -rf ~', allowList: ['git status'] }).reason,
    ).toMatch(/asks unless allow-listed — the command contains ";"/);
  });

  it('an allow-listed shell command runs without asking, marked as let through by the allow-list', () => {
    expect(decide('interactive', runShell, { command: 'git status', allowList: ['git status'] })).toEqual({
      decision: 'allow',
      reason: 'allow-listed: `git status` matches `git status`',
      via: 'allowlist',
    });
    expect(decide('interactive', runShell, { command: 'git log HEAD~2', allowList: ['git log *'] })).toMatchObject({
      decision: 'allow',
      via: 'allowlist',
    });
  });

  it('an entry covers its command exactly: an extra option asks, and the card says why', () => {
    expect(decide('interactive', runShell, { command: 'git status -s', allowList: ['git status'] })).toEqual({
      decision: 'needs_user',
      reason:
        'run_shell is exec-risk (runs shell commands): asks unless allow-listed — `git status` is allow-listed exactly as written, without further arguments (an entry ending in " *" would allow plain ones)',
    });
    expect(
      decide('interactive', runShell, { command: 'git log --output=../victim.txt', allowList: ['git log *'] }).reason,
    ).toMatch(
      /asks unless allow-listed — `git log \*` allows plain extra arguments, but `--output=\.\.\/victim\.txt` is an option/,
    );
  });

  it('absolute paths are judged against the workspace the policy was given', () => {
    const policy = createPermissionPolicy({ shellAllowList: ['cat *'], workspaceDir: '/srv/bot/workspace' });
    const judge = (command: string) =>
      policy.evaluate({
        tool: runShell,
        arguments: { command },
        command,
        grants: new SessionGrants(),
        requesters: [ADA],
      });
    expect(judge('cat /srv/bot/workspace/notes.txt')).toMatchObject({ decision: 'allow', via: 'allowlist' });
    expect(judge('cat /srv/bot/.env')).toMatchObject({
      decision: 'needs_user',
      reason: expect.stringMatching(/is a path outside the workspace/),
    });
  });

  it('the allow-list is for shell tools: it never lets a write or a network call through', () => {
    expect(decide('interactive', writeFile, { command: 'git status', allowList: ['git status'] }).decision).toBe(
      'needs_user',
    );
    expect(decide('interactive', fetchUrl, { command: 'git status', allowList: ['git status'] }).decision).toBe(
      'needs_user',
    );
  });

  it('a tool without metadata, or with a category nobody knows, asks (unknown = careful)', () => {
    expect(decide('interactive', bare)).toEqual({
      decision: 'needs_user',
      reason: 'mystery declares no risk class, so it is treated as risky: asks unless always allowed in this thread',
    });
    expect(decide('interactive', oddCategory).reason).toMatch(/odd has an unrecognised risk class "network"/);
    expect(decide('interactive', noCategory).decision).toBe('needs_user');
  });

  it('a tool that requires approval asks even when it is a low-risk read', () => {
    expect(decide('interactive', insistingRead)).toEqual({
      decision: 'needs_user',
      reason: 'peek_secrets asks before every call: the tool requires approval',
    });
  });

  it('a tool that requires approval is not lifted by the shell allow-list', () => {
    const insistingShell = tool('run_shell', { risk: 'high', category: 'exec', requiresApproval: true });
    expect(decide('interactive', insistingShell, { command: 'git status', allowList: ['git status'] }).decision).toBe(
      'needs_user',
    );
  });
});

describe('grants in interactive mode', () => {
  it('"always allow <tool>" lets that tool run, and only that tool', () => {
    const grants = new SessionGrants();
    grants.allowTool('write_file', { by: ADA });
    expect(decide('interactive', writeFile, { grants })).toEqual({
      decision: 'allow',
      reason: `always allowed by ${ADA}: write_file`,
    });
    expect(decide('interactive', fetchUrl, { grants }).decision).toBe('needs_user');
  });

  it('"always allow this command" covers exactly that command', () => {
    const grants = new SessionGrants();
    grants.allowCommand('run_shell', 'npm run build', { by: ADA });
    expect(decide('interactive', runShell, { grants, command: 'npm run build' }).decision).toBe('allow');
    expect(decide('interactive', runShell, { grants, command: 'npm run build -- --watch' }).decision).toBe(
      'needs_user',
    );
  });

  it('a grant covers a tool that requires approval: the human has already answered "always"', () => {
    const grants = new SessionGrants({ tools: [{ tool: 'peek_secrets', by: ADA }], commands: [] });
    expect(decide('interactive', insistingRead, { grants }).decision).toBe('allow');
  });

  it('a grant covers a tool of unknown risk', () => {
    const grants = new SessionGrants({ tools: [{ tool: 'mystery', by: ADA }], commands: [] });
    expect(decide('interactive', bare, { grants }).decision).toBe('allow');
  });
});

describe('grants belong to people', () => {
  const grants = new SessionGrants();
  grants.allowTool('run_shell', { by: ADA });
  grants.allowCommand('write_file', 'x', { by: ADA });

  it("Ada's grant covers turns Ada asked for, never Bob's", () => {
    expect(decide('interactive', runShell, { grants, command: 'cat ../.env', requesters: [ADA] }).decision).toBe(
      'allow',
    );
    expect(decide('interactive', runShell, { grants, command: 'cat ../.env', requesters: [BOB] }).decision).toBe(
      'needs_user',
    );
  });

  it("nor Ada's turn once Bob steered it", () => {
    expect(decide('interactive', runShell, { grants, command: 'cat ../.env', requesters: [BOB, ADA] }).decision).toBe(
      'needs_user',
    );
  });

  it("an admin's grant for everyone covers everyone's turns", () => {
    const shared = new SessionGrants();
    shared.allowTool('run_shell', { by: 'U0ADMIN', everyone: true });
    expect(decide('interactive', runShell, { grants: shared, command: 'ls', requesters: [BOB, ADA] })).toEqual({
      decision: 'allow',
      reason: 'always allowed for everyone by U0ADMIN: run_shell',
    });
  });

  it("a grant stored before grants had owners covers no one's turn", () => {
    const legacy = new SessionGrants({ tools: [{ tool: 'run_shell' }], commands: [] });
    expect(decide('interactive', runShell, { grants: legacy, command: 'ls', requesters: [ADA] }).decision).toBe(
      'needs_user',
    );
  });

  it('no requesters (no user message in the turn) is covered by no personal grant', () => {
    expect(decide('interactive', runShell, { grants, command: 'ls', requesters: [] }).decision).toBe('needs_user');
  });
});

describe('auto mode: everything runs', () => {
  it.each(
    [readFile, writeFile, runShell, fetchUrl, bare, oddCategory, insistingRead].map(
      (subject) => [subject.name, subject] as const,
    ),
  )('%s runs without asking', (_name, subject) => {
    expect(decide('auto', subject, { command: 'rm -rf build' })).toEqual({
      decision: 'allow',
      reason: `auto mode: ${subject.name} runs without asking`,
    });
  });
});

describe('read-only mode: only reads run, everything else is refused without asking', () => {
  it('a read runs', () => {
    expect(decide('read-only', readFile).decision).toBe('allow');
  });

  it.each([
    [
      'write_file',
      writeFile,
      'read-only mode: write_file is not allowed: it is write-risk (changes files in the workspace), and only tools that read run in this mode',
    ],
    [
      'run_shell',
      runShell,
      'read-only mode: run_shell is not allowed: it is exec-risk (runs shell commands), and only tools that read run in this mode',
    ],
    [
      'fetch_url',
      fetchUrl,
      'read-only mode: fetch_url is not allowed: it is external-risk (reaches the network or other channels), and only tools that read run in this mode',
    ],
  ])('%s is denied with a clear reason', (_name, subject, reason) => {
    expect(decide('read-only', subject)).toEqual({ decision: 'deny', reason });
  });

  it('a tool of unknown risk is denied', () => {
    expect(decide('read-only', bare).decision).toBe('deny');
    expect(decide('read-only', oddCategory).decision).toBe('deny');
  });

  it('grants do not override it', () => {
    const grants = new SessionGrants({
      tools: [
        { tool: 'write_file', by: ADA },
        { tool: 'run_shell', by: ADA },
      ],
      commands: [{ tool: 'run_shell', command: 'git status', by: ADA }],
    });
    expect(decide('read-only', writeFile, { grants }).decision).toBe('deny');
    expect(decide('read-only', runShell, { grants, command: 'git status' }).decision).toBe('deny');
  });

  it('neither does the shell allow-list', () => {
    expect(decide('read-only', runShell, { command: 'git status', allowList: ['git status'] }).decision).toBe('deny');
  });

  it('a read that requires approval still asks', () => {
    expect(decide('read-only', insistingRead).decision).toBe('needs_user');
  });
});
