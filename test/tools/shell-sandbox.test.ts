// The shell sandbox, tried as a hostile user would: every escape once observed is a test
// here, run through run_shell exactly as an approved call would run it. bwrap must be
// installed (.ci/run installs it): these tests never skip.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinTools, type BuiltinTools } from '../../src/tools/index.js';
import { waitFor } from '../support/engine-kit.js';
import {
  ENV_SECRET,
  fakeBot,
  hostProcessesWith,
  sandboxFor,
  STORE_SECRET,
  type FakeBot,
} from '../support/sandbox-kit.js';
import type { BwrapSandbox } from '../../src/sandbox/bwrap-sandbox.js';

const run = promisify(execFile);
const PROJECT = fileURLToPath(new URL('../..', import.meta.url));

let bot: FakeBot;
let sandbox: BwrapSandbox;
let builtin: BuiltinTools | undefined;
beforeAll(async () => {
  bot = await fakeBot();
  sandbox = await sandboxFor(bot, { limits: { maxProcesses: 900, maxFileBytes: 1024 * 1024 } });
});
afterAll(async () => {
  await bot.cleanup();
});
afterEach(async () => {
  await builtin?.dispose();
  builtin = undefined;
});

function tools(options: { sandbox?: BwrapSandbox; timeoutMs?: number; envNames?: string[] } = {}): BuiltinTools {
  builtin = createBuiltinTools({
    workspaceDir: bot.workspace,
    shell: { kind: 'sandbox', sandbox: options.sandbox ?? sandbox },
    shellTimeoutMs: options.timeoutMs,
    shellEnvNames: options.envNames,
  });
  return builtin;
}

async function sh(
  command: string,
  options: { signal?: AbortSignal; box?: BuiltinTools } = {},
): Promise<{
  exitCode: unknown;
  output: string;
  cwd: unknown;
  note?: unknown;
  interrupted?: unknown;
  timedOut?: unknown;
}> {
  const box = options.box ?? builtin ?? tools();
  const runShell = box.tools.find((tool) => tool.name === 'run_shell')!;
  const result = (await runShell.execute(
    { command },
    { signal: options.signal ?? new AbortController().signal, toolCallId: 'call', sessionId: 'session' },
  )) as Record<string, unknown>;
  return { ...result, output: String(result.output), exitCode: result.exitCode, cwd: result.cwd };
}

describe("the sandbox: the bot's environment and processes are out of sight", () => {
  const SECRETS = {
    OPENAI_API_KEY: 'sk-proc-environ-4b1d9e',
    SLACK_BOT_TOKEN: 'xoxb-proc-environ-77aa',
    STORE_URL: 'postgresql://bot:pg-password-31c@db/bot',
  };
  const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const CHILD = fileURLToPath(new URL('../support/shell-child.ts', import.meta.url));
  const PROBES = [
    'cat /proc/$PPID/environ | tr "\\0" "\\n"',
    'cat /proc/1/environ | tr "\\0" "\\n"',
    'env',
    'ps -eo pid,args',
    'ls /proc',
  ];

  async function inBot(mode: 'sandbox' | 'host'): Promise<string[]> {
    const request = { mode, workspace: bot.workspace, botDir: bot.dir, home: bot.home, commands: PROBES };
    const { stdout } = await run(process.execPath, ['--import', TSX, CHILD, JSON.stringify(request)], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: bot.home, ...SECRETS },
      cwd: bot.dir,
    });
    return (JSON.parse(stdout) as { output: string }[]).map((result) => result.output);
  }

  it('neither /proc/$PPID/environ, /proc/1/environ nor env shows a secret; no process of the bot is visible', async () => {
    const [parent, init, env, ps, proc] = await inBot('sandbox');
    for (const output of [parent, init, env, ps]) {
      for (const value of Object.values(SECRETS)) expect(output).not.toContain(value.slice(-10));
      expect(output).not.toMatch(/OPENAI_API_KEY|SLACK_BOT_TOKEN|STORE_URL/);
    }
    // Only the allow-list: bwrap itself was started with it.
    const names = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => line.slice(0, line.indexOf('=')));
    const allowed = [
      'PATH',
      'LANG',
      'LANGUAGE',
      'TZ',
      'HOME',
      'TERM',
      'PAGER',
      'GIT_PAGER',
      'GIT_TERMINAL_PROMPT',
      'CHAT_AGENT_CWD_FILE',
      'PWD',
      'SHLVL',
      '_',
    ];
    for (const name of [...names(parent!), ...names(init!), ...names(env!)])
      expect(allowed.includes(name) || name.startsWith('LC_')).toBe(true);
    // The process table is the sandbox's own: bwrap's reaper, bash, ps. No node, no vitest.
    expect(ps).not.toMatch(/node|vitest|tsx/);
    const pids = proc!
      .split('\n')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
    expect(pids.length).toBeGreaterThan(0);
    expect(Math.max(...pids)).toBeLessThan(50);
  });

  it('the same probes unsandboxed do show the secrets (the test above can fail)', async () => {
    const [parent] = await inBot('host');
    expect(parent).toContain(SECRETS.OPENAI_API_KEY);
  });
});

describe("the sandbox: the bot's files are not visible", () => {
  it('.env, the store, the MCP config, the home folder and the project folder cannot be read', async () => {
    tools();
    const { output } = await sh(
      [
        'cat ../.env',
        `cat ${bot.dir}/.env`,
        `cat ${bot.dir}/data/bot.sqlite`,
        `cat ${bot.dir}/mcp.json`,
        `ls -a ${bot.dir}`,
        `cat ${bot.home}/.ssh/id_ed25519`,
        `ls ${PROJECT}`,
        `cat ${path.join(PROJECT, 'package.json')}`,
        'echo done',
      ].join('; '),
    );
    expect(output).not.toContain(ENV_SECRET);
    expect(output).not.toContain(STORE_SECRET);
    expect(output).not.toContain('PRIVATE KEY');
    expect(output).not.toContain('chat-native agent'); // package.json's description
    // The bot's folder exists only as the path to the workspace.
    expect(output).toContain('.\n..\nworkspace\n');
    expect(output).toMatch(/done\n$/);
  });

  it('cd / then ls shows only the system, read-only, and a private /tmp', async () => {
    tools();
    const { output, cwd, note } = await sh(
      'cd / && ls -a && touch /usr/x /etc/x 2>&1; echo tmp > /tmp/t && cat /tmp/t',
    );
    const entries = output.split('\n').slice(0, output.split('\n').indexOf('tmp') + 1);
    const workspaceTop = bot.workspace.split('/')[1];
    for (const entry of entries)
      expect([
        '.',
        '..',
        'bin',
        'dev',
        'etc',
        'lib',
        'lib32',
        'lib64',
        'libx32',
        'proc',
        'sbin',
        'tmp',
        'usr',
        workspaceTop,
      ]).toContain(entry);
    expect(output).toMatch(/touch: cannot touch '\/usr\/x': Read-only file system/);
    expect(output).toMatch(/tmp\n$/);
    // And the shell's working directory is still confined to the workspace.
    expect(cwd).toBe('.');
    expect(String(note)).toMatch(/outside the workspace/);
  });

  it('/etc is shown without what ordinary users may not read', async () => {
    tools();
    expect(existsSync('/etc/shadow')).toBe(true); // Debian always has it, 0640
    const shadow = await sh('cat /etc/shadow 2>&1 | head -c 200');
    expect(shadow.output).not.toMatch(/^root:/m);
    expect((await sh('head -1 /etc/passwd')).output).toMatch(/^root:x:0:0:/);
    expect(sandbox.hidden).toContain('/etc/shadow');
  });

  it('the workspace is writable and a file written there is seen by the host', async () => {
    tools();
    expect(await sh('echo from-the-sandbox > made.txt && cat made.txt')).toMatchObject({
      exitCode: 0,
      output: 'from-the-sandbox\n',
    });
    expect(existsSync(path.join(bot.workspace, 'made.txt'))).toBe(true);
  });
});

describe('the sandbox: the shell still behaves as a shell', () => {
  it('the working directory persists from one sandbox to the next, and a deleted one falls back to the root', async () => {
    tools();
    expect(await sh('mkdir -p deep/er && cd deep/er')).toMatchObject({ exitCode: 0, cwd: 'deep/er' });
    expect(await sh('pwd')).toMatchObject({ cwd: 'deep/er', output: `${path.join(bot.workspace, 'deep/er')}\n` });
    const result = await sh(`rm -rf ${path.join(bot.workspace, 'deep')}; echo gone`);
    expect(result).toMatchObject({ cwd: '.', note: expect.stringContaining('no longer exists') });
    expect(await sh('pwd')).toMatchObject({ exitCode: 0, output: `${bot.workspace}\n` });
  });
});

describe('the sandbox: granted folders', () => {
  it('a folder granted through request_directory is writable from the next command; its siblings stay invisible', async () => {
    const granted = path.join(path.dirname(bot.dir), 'granted');
    const sibling = path.join(path.dirname(bot.dir), 'sibling');
    await mkdir(granted, { recursive: true });
    await mkdir(sibling, { recursive: true });
    await writeFile(path.join(sibling, 'private.txt'), 'sibling-content');
    // A root bot's commands run as another uid: a folder they are to write must be that uid's (README).
    const owner = sandbox.runAs;
    if (owner) await chown(granted, owner.uid, owner.gid);
    const box = tools();
    expect((await sh(`ls ${granted} 2>&1`)).output).toMatch(/No such file or directory/);
    box.workspace.grant(granted);
    expect(await sh(`echo shared > ${granted}/note.txt && cat ${granted}/note.txt`)).toMatchObject({
      exitCode: 0,
      output: 'shared\n',
    });
    expect(await readFile(path.join(granted, 'note.txt'), 'utf8')).toBe('shared\n');
    expect((await sh(`cat ${sibling}/private.txt 2>&1`)).output).not.toContain('sibling-content');
  });
});

describe('the sandbox: the environment is an allow-list', () => {
  it('env holds only allowed names, plus those SHELL_ENV names', async () => {
    process.env.CHAT_AGENT_TEST_PASSED = 'passed-through';
    process.env.CHAT_AGENT_TEST_KEPT_OUT = 'kept-out';
    try {
      tools({ envNames: ['CHAT_AGENT_TEST_PASSED'] });
      const { output } = await sh('env');
      expect(output).toContain('CHAT_AGENT_TEST_PASSED=passed-through');
      expect(output).not.toContain('kept-out');
      expect(output).toMatch(new RegExp(`^HOME=${bot.workspace}$`, 'm'));
    } finally {
      delete process.env.CHAT_AGENT_TEST_PASSED;
      delete process.env.CHAT_AGENT_TEST_KEPT_OUT;
    }
  });
});

describe('the sandbox: nothing a command starts outlives it', () => {
  it('setsid -f escapes no stop: gone after a 🛑', async () => {
    tools();
    const marker = '4242.101';
    const controller = new AbortController();
    const running = sh(`setsid -f sleep ${marker}; touch started; trap 'echo got-int; exit 3' INT; sleep 100 & wait`, {
      signal: controller.signal,
    });
    await waitFor(() => existsSync(path.join(bot.workspace, 'started')), 10_000);
    expect(hostProcessesWith(marker).length).toBeGreaterThan(0);
    controller.abort();
    const result = await running;
    expect(result.interrupted).toBe(true);
    await waitFor(() => hostProcessesWith(marker).length === 0, 10_000);
  });

  it('SIGINT on a stop reaches the command first', async () => {
    tools();
    const controller = new AbortController();
    const running = sh(`trap 'echo got-int; exit 3' INT; touch ready; sleep 100 & wait`, { signal: controller.signal });
    await waitFor(() => existsSync(path.join(bot.workspace, 'ready')), 10_000);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ interrupted: true });
    expect((await sh('true')).exitCode).toBe(0); // and the shell works on
    // The trap ran: SIGINT came before any kill.
    expect(result.output).toContain('got-int');
  });

  it('setsid -f escapes no timeout', async () => {
    tools({ timeoutMs: 600 });
    const marker = '4242.202';
    const result = await sh(`setsid -f sleep ${marker}; trap '' INT; sleep 100`);
    expect(result.timedOut).toBe(true);
    await waitFor(() => hostProcessesWith(marker).length === 0, 10_000);
  });

  it('a background job ends with the command that started it', async () => {
    tools();
    const marker = '4242.303';
    expect(await sh(`sleep ${marker} & setsid -f sleep ${marker}; echo started`)).toMatchObject({
      exitCode: 0,
      output: 'started\n',
    });
    await waitFor(() => hostProcessesWith(marker).length === 0, 10_000);
  });
});

describe('the sandbox: network and limits', () => {
  async function listener(): Promise<{ port: number; close: () => Promise<void> }> {
    const server = net.createServer((socket) => socket.end('hello-from-host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as net.AddressInfo).port,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }
  const connect = (port: number) => `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo no-connection`;

  it("without SHELL_NETWORK=on, a listener on the host's 127.0.0.1 cannot be reached", async () => {
    const server = await listener();
    try {
      tools();
      const { output } = await sh(connect(server.port));
      expect(output).toContain('no-connection');
      expect(output).not.toContain('hello-from-host');
    } finally {
      await server.close();
    }
  });

  it('with SHELL_NETWORK=on it can, and the approval card says so', async () => {
    const server = await listener();
    try {
      const box = tools({ sandbox: await sandboxFor(bot, { network: true }) });
      const { output } = await sh(connect(server.port), { box });
      expect(output).toContain('hello-from-host');
      const runShell = box.tools.find((tool) => tool.name === 'run_shell')!;
      expect(runShell.metadata?.confinement).toMatch(/CAN reach the network \(SHELL_NETWORK=on\)/);
    } finally {
      await server.close();
    }
  });

  it('caps processes and file size', async () => {
    tools();
    const { output } = await sh(
      'echo "processes $(ulimit -u) blocks $(ulimit -f)"; head -c 2000000 /dev/zero > big; echo "status $? size $(stat -c %s big)"',
    );
    expect(output).toContain('processes 900 blocks 1024');
    expect(output).toContain('File size limit exceeded');
    const size = /status (\d+) size (\d+)/.exec(output);
    expect(Number(size?.[1])).toBeGreaterThan(0);
    expect(Number(size?.[2])).toBeLessThanOrEqual(1024 * 1024);
  });
});
