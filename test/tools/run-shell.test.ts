import { existsSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shellEnvironment } from '../../src/sandbox/shell-environment.js';
import { waitFor } from '../support/engine-kit.js';
import { asRecord, createSandbox, processGone, type Sandbox } from './tool-kit.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.cleanup();
  sandbox = undefined;
});

async function shell(
  options: Parameters<typeof createSandbox>[0] = {},
): Promise<{ sh: (command: string, signal?: AbortSignal) => Promise<Record<string, unknown>>; box: Sandbox }> {
  const box = await createSandbox(options);
  sandbox = box;
  return { box, sh: async (command, signal) => asRecord(await box.run('run_shell', { command }, signal)) };
}

function pidsIn(output: unknown, label: string): number {
  const match = new RegExp(`${label}=(\\d+)`).exec(String(output));
  if (!match) throw new Error(`no ${label}= in ${String(output)}`);
  return Number(match[1]);
}

/**
 * "Promptly", against the `sleep 100` each stopped command would otherwise run: generous for a
 * machine so busy that a signalled process takes seconds to be scheduled and reaped.
 */
const PROMPTLY_MS = 10_000;

/** Settles with 'late' if `promise` takes longer than `ms`: a generous bound, not a measurement. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('run_shell: exit codes and output', () => {
  it('returns the exit code, the cwd and stdout and stderr interleaved', async () => {
    const { sh } = await shell();
    expect(await sh('echo one; echo two >&2; echo three')).toEqual({
      exitCode: 0,
      cwd: '.',
      output: 'one\ntwo\nthree\n',
    });
    expect(await sh('exit 3')).toMatchObject({ exitCode: 3 });
    expect(await sh('false')).toMatchObject({ exitCode: 1 });
    expect(await sh('no-such-command-here')).toMatchObject({
      exitCode: 127,
      output: expect.stringContaining('command not found'),
    });
    expect(await sh('mkdir -p kept && cd kept\nif then')).toMatchObject({
      exitCode: 2,
      output: expect.stringContaining('syntax error'),
    });
  });

  it('trims long output from the middle and says how much was cut', async () => {
    const { sh } = await shell({ maxOutputChars: 2_000 });
    const result = await sh('seq 1 20000');
    const output = String(result.output);
    expect(result.exitCode).toBe(0);
    expect(output.length).toBeLessThanOrEqual(2_000);
    expect(output.startsWith('1\n2\n3\n')).toBe(true);
    expect(output.endsWith('19999\n20000\n')).toBe(true);
    const cut = /\[… ([\d,]+) characters cut from the middle …\]/.exec(output);
    expect(cut).not.toBeNull();
    // seq 1 20000 prints 108,894 characters: everything not shown is accounted for.
    const shown = output.length - cut![0].length - 2;
    expect(Number(cut![1]!.replaceAll(',', '')) + shown).toBe(108_894);
  });

  it('has no stdin, so a command that reads it does not hang', async () => {
    const { sh } = await shell();
    expect(await sh('read line; echo "got [$line] $?"')).toMatchObject({ output: 'got [] 1\n' });
  });

  it("hands commands an environment built from an allow-list, never the bot's own", () => {
    const env = shellEnvironment(
      {
        PATH: '/usr/bin',
        LANG: 'C.UTF-8',
        LC_ALL: 'C',
        OPENAI_API_KEY: 'sk-1',
        STORE_URL: 'postgresql://bot:hunter2@db/x',
        HOME: '/home/x',
        EXTRA: 'yes',
        OTHER: 'no',
      },
      { home: '/work/ws', pass: ['EXTRA'] },
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      EXTRA: 'yes',
      HOME: '/work/ws',
      TERM: 'dumb',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
    });
  });
});

describe('run_shell: the working directory persists, inside the workspace', () => {
  it('a cd in one command holds for the next', async () => {
    const { sh, box } = await shell();
    expect(await sh('mkdir -p sub/deeper && cd sub')).toMatchObject({ exitCode: 0, cwd: 'sub' });
    expect(await sh('pwd')).toMatchObject({ cwd: 'sub', output: `${path.join(box.workspace, 'sub')}\n` });
    expect(await sh('cd deeper')).toMatchObject({ cwd: 'sub/deeper' });
    expect(await sh('cd ../.. && pwd')).toMatchObject({ cwd: '.', output: `${box.workspace}\n` });
  });

  it('a command that exits early still keeps its cd', async () => {
    const { sh } = await shell();
    expect(await sh('mkdir -p a && cd a && exit 4')).toMatchObject({ exitCode: 4, cwd: 'a' });
  });

  it('a cd out of the workspace is undone, and the result says so', async () => {
    const { sh, box } = await shell();
    const escaped = await sh('cd .. && pwd');
    expect(escaped).toMatchObject({ exitCode: 0, cwd: '.' });
    expect(escaped.note).toMatch(/outside the workspace; the working directory is back at the workspace root/);
    expect(await sh('pwd')).toMatchObject({ output: `${box.workspace}\n`, cwd: '.' });
    expect((await sh('cd /tmp')).note).toMatch(/the command moved to \/tmp/);
  });

  it('a cd through a symlink that points outside is undone', async () => {
    const { sh, box } = await shell();
    await symlink(box.outside, path.join(box.workspace, 'out'));
    expect(await sh('cd out')).toMatchObject({ cwd: '.', note: expect.stringContaining('outside the workspace') });
  });

  it('a working directory that was deleted falls back to the root', async () => {
    const { sh, box } = await shell();
    await mkdir(path.join(box.workspace, 'doomed'));
    await sh('cd doomed');
    const result = await sh(`rm -rf ${JSON.stringify(path.join(box.workspace, 'doomed'))}; echo done`);
    expect(result).toMatchObject({ cwd: '.', note: expect.stringContaining('no longer exists') });
    expect(await sh('pwd')).toMatchObject({ exitCode: 0, cwd: '.', output: `${box.workspace}\n` });
  });
});

describe('run_shell: stopping a command', () => {
  it('a timeout stops the whole process group, background children included', async () => {
    const { sh } = await shell({ shellTimeoutMs: 500 });
    const result = await sh('sleep 100 & echo bg=$!; sleep 100 & echo fg=$!; wait');
    expect(result).toMatchObject({ timedOut: true, note: expect.stringContaining('timed out') });
    const background = pidsIn(result.output, 'bg');
    const foreground = pidsIn(result.output, 'fg');
    // Background jobs ignore SIGINT in a non-interactive shell: the SIGKILL after the grace gets them.
    await waitFor(() => processGone(background) && processGone(foreground), 10_000);
  });

  it('an abort stops a long command promptly, with its partial output, and the next command works', async () => {
    const { sh, box } = await shell();
    const controller = new AbortController();
    const running = sh('echo started; touch marker; sleep 100; echo never', controller.signal);
    await waitFor(() => existsSync(path.join(box.workspace, 'marker')), 10_000);
    controller.abort();
    const result = await within(running, PROMPTLY_MS);
    expect(result).not.toBe('late');
    expect(result).toMatchObject({ interrupted: true, output: 'started\n', cwd: '.' });
    expect(await sh('echo again')).toEqual({ exitCode: 0, cwd: '.', output: 'again\n' });
  });

  it('a command that ignores SIGINT is answered at once and killed after the grace', async () => {
    const { sh, box } = await shell();
    const controller = new AbortController();
    const running = sh("trap '' INT; sleep 100 & echo child=$!; touch marker; wait", controller.signal);
    await waitFor(() => existsSync(path.join(box.workspace, 'marker')), 10_000);
    controller.abort();
    const result = await within(running, PROMPTLY_MS);
    expect(result).not.toBe('late');
    if (result === 'late') return;
    expect(result).toMatchObject({ interrupted: true, exitCode: null });
    expect(result.note).toMatch(/is killed if still running after 2 s/);
    await waitFor(() => processGone(pidsIn(result.output, 'child')), 10_000);
    expect(await sh('echo still here')).toMatchObject({ exitCode: 0, output: 'still here\n' });
  });

  it('the interrupt hook stops the running command', async () => {
    const { sh, box } = await shell();
    const running = sh('echo working; touch marker; sleep 100');
    await waitFor(() => existsSync(path.join(box.workspace, 'marker')), 10_000);
    box.builtin.interruptHook();
    const result = await within(running, PROMPTLY_MS);
    expect(result).toMatchObject({ interrupted: true, output: 'working\n' });
    expect(await sh('echo next')).toMatchObject({ exitCode: 0, output: 'next\n' });
  });

  it('an abort before the command starts runs nothing', async () => {
    const { sh, box } = await shell();
    const controller = new AbortController();
    controller.abort();
    expect(await sh('touch ran', controller.signal)).toMatchObject({ interrupted: true, output: '' });
    expect(existsSync(path.join(box.workspace, 'ran'))).toBe(false);
  });

  it('background jobs outlive their command, and dispose stops them', async () => {
    const { sh, box } = await shell();
    const result = await sh('sleep 100 & echo bg=$!');
    expect(result).toMatchObject({ exitCode: 0 });
    const background = pidsIn(result.output, 'bg');
    expect(processGone(background)).toBe(false);
    await box.builtin.dispose();
    await waitFor(() => processGone(background), 10_000);
    await expect(sh('echo after')).rejects.toThrow(/the shell session has ended/);
  });
});
