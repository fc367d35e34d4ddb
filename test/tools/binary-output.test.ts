// Binary and noisy output from run_shell, as the model receives it: through the tool, and
// through the engine, where the tool message content is what is measured (50 MB
// of zeros once became a 119,607-character tool result under a 20,000-character cap).
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OUTPUT_CHARS } from '../../src/tools/output.js';
import { createPermissionPolicy } from '../../src/permissions/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith } from '../support/engine-kit.js';
import { asRecord, createSandbox, type Sandbox } from './tool-kit.js';

/** The JSON object around the output: exit code, cwd, note and keys. */
const ENVELOPE = 300;

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.cleanup();
  sandbox = undefined;
});

async function sh(command: string): Promise<Record<string, unknown>> {
  sandbox ??= await createSandbox({ shell: { kind: 'host' } });
  return asRecord(await sandbox.run('run_shell', { command }));
}

describe('run_shell: binary output is summarised, not dumped', () => {
  it('50 MB of NUL bytes: a line saying how many bytes, and how to look at them', async () => {
    const result = await sh('head -c 50000000 /dev/zero');
    expect(result).toEqual({
      exitCode: 0,
      cwd: '.',
      note: '50,000,000 bytes of binary output (not shown); pipe it through `xxd | head` or `file -` to inspect it',
      output: '[… 50,000,000 bytes of binary output not shown …]',
    });
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(DEFAULT_MAX_OUTPUT_CHARS + ENVELOPE);
  });

  it('text, then binary, then text: both texts are kept around the count', async () => {
    const result = await sh('echo "archive header"; head -c 200000 /dev/zero; echo; echo "exit status: fine"');
    expect(result.output).toBe('archive header\n[… 200,000 bytes of binary output not shown …]\nexit status: fine\n');
    expect(result.note).toContain('200,000 bytes of binary output (not shown)');
  });

  it('coloured output loses its escape codes', async () => {
    const result = await sh(
      String.raw`printf '\033[1;32mPASS\033[0m tests/a.test.ts\n\033[31mFAIL\033[39m tests/b.test.ts\n'`,
    );
    expect(result.output).toBe('PASS tests/a.test.ts\nFAIL tests/b.test.ts\n');
    expect(result).not.toHaveProperty('note');
  });

  it('a 1 MB line of \\u0001 control characters is counted as binary, and the answer stays small', async () => {
    const result = await sh(String.raw`head -c 1000000 /dev/zero | tr '\0' '\001'; echo`);
    expect(result.output).toBe('[… 1,000,000 bytes of binary output not shown …]\n');
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(DEFAULT_MAX_OUTPUT_CHARS + ENVELOPE);
  });

  it('a few control characters in text are shown as visible pictures, not JSON escapes', async () => {
    const result = await sh(String.raw`printf 'ding\a done\r\nnext\n'`);
    expect(result.output).toBe('ding␇ done\nnext\n');
    expect(JSON.stringify(result)).not.toContain('\\u00');
  });
});

describe('run_shell under the engine: the tool message is within the cap as the model gets it', () => {
  it('50 MB of NUL bytes reaches the model as a short, valid JSON answer that says binary and how many bytes', async () => {
    sandbox = await createSandbox({ shell: { kind: 'host' } });
    const { engine, provider } = engineWith(
      [callTools(call('run_shell', { command: 'head -c 50000000 /dev/zero' })), say('it printed zeros')],
      { tools: sandbox.builtin.tools, ports: { policy: createPermissionPolicy({ mode: 'auto' }) } },
    );
    await collect(engine.run('dump the zeros'));
    const sent = provider.requests[1]!.messages.find((message) => message.role === 'tool');
    const content = String(sent?.content);
    expect(content.length).toBeLessThanOrEqual(DEFAULT_MAX_OUTPUT_CHARS + ENVELOPE);
    expect(JSON.parse(content)).toMatchObject({
      exitCode: 0,
      note: expect.stringContaining('50,000,000 bytes of binary output (not shown)'),
      output: '[… 50,000,000 bytes of binary output not shown …]',
    });
  });

  it('text full of quotes and backslashes, which JSON doubles, is cut again by the engine to its cap, still valid JSON', async () => {
    sandbox = await createSandbox({ shell: { kind: 'host' } });
    const { engine, provider } = engineWith(
      [callTools(call('run_shell', { command: String.raw`yes '"\"\"\"\"' | head -n 20000` })), say('ok')],
      { tools: sandbox.builtin.tools, ports: { policy: createPermissionPolicy({ mode: 'auto' }) } },
    );
    await collect(engine.run('print quotes'));
    const content = String(provider.requests[1]!.messages.find((message) => message.role === 'tool')?.content);
    expect(content.length).toBeLessThanOrEqual(24_000);
    const answer = JSON.parse(content) as { exitCode: number; output: string };
    expect(answer.exitCode).toBe(0);
    expect(answer.output).toMatch(
      /characters cut from the middle: tool results are capped at 24,000 characters as sent/,
    );
  });
});
