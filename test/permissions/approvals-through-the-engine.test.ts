// The policy and the built-in tools, driven through a real TurnEngine by a scripted model.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message, PermissionRequest } from '../../src/engine/index.js';
import { createPermissionPolicy, type PermissionMode } from '../../src/permissions/index.js';
import { createBuiltinTools, type BuiltinTools } from '../../src/tools/index.js';
import { call, callTools, say, type Step } from '../fakes/scripted-provider.js';
import { collect, engineWith, only } from '../support/engine-kit.js';

let workspaceDir: string;
let builtin: BuiltinTools;
beforeEach(async () => {
  workspaceDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'chat-agent-approvals-')), 'workspace');
  builtin = createBuiltinTools({ workspaceDir });
});
afterEach(async () => {
  await builtin.dispose();
  await rm(path.dirname(workspaceDir), { recursive: true, force: true });
});

function session(steps: Step[], mode: PermissionMode, shellAllowList: string[] = []) {
  const asked: PermissionRequest[] = [];
  const { engine, provider } = engineWith(steps, {
    tools: builtin.tools,
    ports: {
      policy: createPermissionPolicy({ mode, shellAllowList }),
      approver: async (request) => {
        asked.push(request);
        return 'once';
      },
    },
    hooks: { onInterrupt: [builtin.interruptHook] },
  });
  return { engine, provider, asked };
}

function toolResults(messages: readonly Message[]): string[] {
  return messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
}

describe('the policy decides through the engine', () => {
  it('interactive: a write_file call asks the approver, then writes', async () => {
    const { engine, asked } = session(
      [callTools(call('write_file', { path: 'notes/todo.txt', content: 'buy milk' })), say('written')],
      'interactive',
    );
    const events = await collect(engine.run('note this down'));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      toolName: 'write_file',
      reason: 'write_file is write-risk (changes files in the workspace): asks unless always allowed in this thread',
      metadata: { category: 'write' },
    });
    expect(only(events, 'permission_required')).toHaveLength(1);
    expect(only(events, 'tool_finished')[0]).toMatchObject({ name: 'write_file', status: 'ok' });
    expect(await readFile(path.join(workspaceDir, 'notes/todo.txt'), 'utf8')).toBe('buy milk');
  });

  it('read-only: the same call is denied without asking, and the model reads why', async () => {
    const { engine, asked, provider } = session(
      [callTools(call('write_file', { path: 'todo.txt', content: 'x' })), say('cannot')],
      'read-only',
    );
    const events = await collect(engine.run('note this down'));
    expect(asked).toEqual([]);
    expect(only(events, 'permission_required')).toEqual([]);
    expect(only(events, 'tool_finished')[0]).toMatchObject({ name: 'write_file', status: 'denied' });
    expect(toolResults(engine.messages)[0]).toContain('read-only mode: write_file is not allowed');
    expect(existsSync(path.join(workspaceDir, 'todo.txt'))).toBe(false);
    // The model got its answer and the turn went on.
    expect(provider.requests).toHaveLength(2);
  });

  it('interactive: reads and allow-listed commands run without asking; a smuggled command asks', async () => {
    const { engine, asked } = session(
      [
        callTools(
          call('list_dir', {}),
          call('run_shell', { command: 'echo allowed' }),
          call('run_shell', { command: 'echo allowed; echo smuggled' }),
        ),
        say('done'),
      ],
      'interactive',
      ['echo allowed'],
    );
    const events = await collect(engine.run('look around'));
    expect(asked.map((request) => request.command)).toEqual(['echo allowed; echo smuggled']);
    expect(asked[0]?.reason).toMatch(/asks unless allow-listed — the command contains ";"/);
    expect(only(events, 'tool_finished').map((e) => e.status)).toEqual(['ok', 'ok', 'ok']);
  });
});
