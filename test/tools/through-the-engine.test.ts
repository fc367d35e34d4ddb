// A stop during a shell command, through a real TurnEngine: the engine waits only ~50 ms for
// a stopped tool, so the command must answer within that grace to keep its partial output.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPermissionPolicy } from '../../src/permissions/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, only, waitFor } from '../support/engine-kit.js';
import { createSandbox, type Sandbox } from './tool-kit.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.cleanup();
});

describe('run_shell under the engine', () => {
  it('a stop interrupts the running command; the result keeps its partial output; the next turn runs commands again', async () => {
    sandbox = await createSandbox();
    const box = sandbox;
    const { engine } = engineWith(
      [
        callTools(call('run_shell', { command: 'echo started; touch marker; sleep 100' })),
        callTools(call('run_shell', { command: 'echo second turn' })),
        say('done'),
      ],
      {
        tools: box.builtin.tools,
        ports: { policy: createPermissionPolicy({ mode: 'auto' }) },
        hooks: { onInterrupt: [box.builtin.interruptHook] },
      },
    );
    const stopping = waitFor(() => existsSync(path.join(box.workspace, 'marker')), 10_000).then(() =>
      engine.requestInterrupt(),
    );
    const first = await collect(engine.run('run the long thing'));
    expect(await stopping).toBe(true);
    expect(only(first, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });
    const result = engine.messages.find((m) => m.role === 'tool');
    expect(
      result?.role === 'tool' && (JSON.parse(result.content) as { interrupted: string; output: string }),
    ).toMatchObject({
      interrupted: 'interrupted by user',
      output: expect.stringContaining('"output":"started\\n"'),
    });

    const second = await collect(engine.run('try again'));
    expect(only(second, 'tool_finished')[0]).toMatchObject({
      status: 'ok',
      resultPreview: expect.stringContaining('second turn'),
    });
  });
});
