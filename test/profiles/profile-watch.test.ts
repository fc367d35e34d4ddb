// The PROFILES file reloaded without a restart: the real file on disk, the real fs.watch on its
// folder, the real reader and checks. An edit (written in place, or by an editor's
// rename-over) changes the book; a broken edit keeps the last good profiles and logs every
// problem; the fix then applies. Waits are bounded by what happens (the version), never slept.
import { writeFileSync } from 'node:fs';
import { appendFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { knownNames } from '../../src/profiles/known-names.js';
import { profilesFrom } from '../../src/profiles/profile-setup.js';
import { ProfileWatch } from '../../src/profiles/profile-watch.js';
import { modelMenu } from '../../src/providers/model-menu.js';
import { bootSlackBot } from '../slack/slack-harness.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const WAIT_MS = 20_000;

function yamlWith(instructions: string): string {
  return [
    'profiles:',
    '  - name: ops',
    '    match: { slackChannel: C0OPS }',
    `    instructions: "${instructions}"`,
    '    tools: [read_file, run_shell]',
    '',
  ].join('\n');
}

async function watched(text: string, debounceMs?: number) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const path = join(dir.path, 'profiles.yaml');
  await writeFile(path, text);
  const logger = memoryLogger();
  const setup = await profilesFrom(path, {
    logger,
    env: {
      model: 'openai:gpt-4.1',
      models: modelMenu({ defaultModel: 'openai:gpt-4.1' }),
      menuOf: (names, defaultModel) => modelMenu({ models: names.join(','), defaultModel }),
      systemPrompt: 'You are the bot.',
      permissionMode: 'interactive',
      shellAllowlist: [],
      workspaceScope: 'thread',
    },
    known: knownNames({
      mcpServers: ['github'],
      policy: { mode: 'interactive', shellAllowList: [] },
      workspaceRoot: dir.path,
      settings: { OPENAI_API_KEY: 'sk-test' },
    }),
  });
  let reads = 0;
  const reloader = setup.reloader!;
  const counted = { path: reloader.path, reload: () => (reads++, reloader.reload()) };
  const watch = new ProfileWatch(counted, { logger, ...(debounceMs ? { debounceMs } : {}) }).start();
  cleanups.push(() => watch.stop());
  const instructions = (): string => setup.profiles.settingsOf('ops').instructions;
  return { dir: dir.path, path, logger, profiles: setup.profiles, watch, instructions, reads: () => reads };
}

describe('the PROFILES file, watched', () => {
  it("an edit in place and an editor's rename-over each change the profiles without a restart", async () => {
    const { dir, path, profiles, instructions } = await watched(yamlWith('first'));
    expect(profiles.version).toBe(1);
    expect(instructions()).toBe('You are the bot.\n\nfirst');

    await writeFile(path, yamlWith('second'));
    await waitFor(() => profiles.version === 2, WAIT_MS);
    expect(instructions()).toBe('You are the bot.\n\nsecond');

    // How vim and most editors save: a new file renamed over the old one (a new inode).
    const saved = join(dir, '.profiles.yaml.swp');
    await writeFile(saved, yamlWith('third'));
    await rename(saved, path);
    await waitFor(() => instructions().endsWith('third'), WAIT_MS);
    // And the watch still sees the file after the rename.
    await writeFile(path, yamlWith('fourth'));
    await waitFor(() => instructions().endsWith('fourth'), WAIT_MS);
  });

  it('a broken edit keeps the last good profiles and logs every problem; the fix then applies', async () => {
    const { path, profiles, logger, instructions } = await watched(yamlWith('good'));
    const broken = [
      'profiles:',
      '  - name: ops',
      '    match: { slackChannel: C0OPS }',
      '    instructions: "broken"',
      '    tools: [read_file, no_such_tool]',
      '    colour: blue',
      '',
    ].join('\n');
    writeFileSync(path, broken);
    await waitFor(
      () => logger.lines.some((line) => line.message.startsWith('the profiles file has problems')),
      WAIT_MS,
    );
    expect(profiles.version).toBe(1);
    expect(instructions()).toBe('You are the bot.\n\ngood');
    // Logged, naming the profile and the key: the schema's problem and the check's together.
    const errors = logger.lines.filter((line) => line.level === 'error').map((line) => line.message);
    expect(errors).toEqual([
      'PROFILES: profile "ops": unknown key "colour"',
      expect.stringMatching(/^PROFILES: profile "ops": tools: "no_such_tool" is neither a tool nor an MCP server/),
    ]);

    // Fixed but for the tool: the check's problem is logged, the profiles still stay.
    logger.lines.length = 0;
    writeFileSync(path, broken.replace('    colour: blue\n', ''));
    await waitFor(
      () => logger.lines.some((line) => line.message.startsWith('the profiles file has problems')),
      WAIT_MS,
    );
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      expect.stringMatching(
        /^PROFILES: profile "ops": tools: "no_such_tool" is neither a tool nor an MCP server \(tools: .*run_shell.*; MCP servers: github\)$/,
      ),
    ]);
    expect(profiles.version).toBe(1);

    writeFileSync(path, yamlWith('fixed'));
    await waitFor(() => profiles.version === 2, WAIT_MS);
    expect(instructions()).toBe('You are the bot.\n\nfixed');
  });

  it("a read that catches a half-written file reports it, and the writer's next event reads it whole", async () => {
    const { path, profiles, logger, instructions } = await watched(yamlWith('whole'));
    const next = yamlWith('finished');
    const half = next.indexOf('match:') + 'match: { slackCh'.length;
    await writeFile(path, next.slice(0, half));
    await waitFor(
      () => logger.lines.some((line) => line.message.startsWith('the profiles file has problems')),
      WAIT_MS,
    );
    expect(profiles.version).toBe(1);
    expect(instructions()).toBe('You are the bot.\n\nwhole');
    await appendFile(path, next.slice(half));
    await waitFor(() => profiles.version === 2, WAIT_MS);
    expect(instructions()).toBe('You are the bot.\n\nfinished');
  });

  it('a burst of events reads the file once', async () => {
    // A generous debounce: the burst's events all land inside it however busy the machine is.
    const { path, profiles, instructions, reads } = await watched(yamlWith('start'), 1_000);
    // Written without yielding: every event of the burst is queued before the first is seen.
    for (let i = 0; i < 20; i++) writeFileSync(path, yamlWith(`burst ${i}`));
    await waitFor(() => profiles.version === 2, WAIT_MS);
    expect(instructions()).toBe('You are the bot.\n\nburst 19');
    // One more edit: if the burst had left a second read behind, the count would show it.
    writeFileSync(path, yamlWith('after'));
    await waitFor(() => profiles.version === 3, WAIT_MS);
    expect(instructions()).toBe('You are the bot.\n\nafter');
    expect(reads()).toBe(2);
  });

  it('stop: later edits change nothing', async () => {
    const { path, profiles, watch, logger, reads } = await watched(yamlWith('kept'));
    await watch.stop();
    await writeFile(path, yamlWith('ignored'));
    watch.reloadNow('after the stop');
    // A second watch on the same file, started after the edit, sees the next one: by the time
    // it has read, a read the stopped watch still had due would have come first (same debounce).
    let seen = 0;
    const witness = new ProfileWatch({ path, reload: async () => void seen++ }, { logger }).start();
    cleanups.push(() => witness.stop());
    await writeFile(path, yamlWith('ignored too'));
    await waitFor(() => seen > 0, WAIT_MS);
    expect(reads()).toBe(0);
    expect(profiles.version).toBe(1);
  });
});

describe('the core watches PROFILES', () => {
  it("an edit changes the place's profile for new threads; after close, edits change nothing", async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const path = join(dir.path, 'profiles.yaml');
    await writeFile(path, yamlWith('one'));
    const bot = await bootSlackBot({ dir: dir.path, env: { PROFILES: path } });
    let stopped = false;
    cleanups.push(() => (stopped ? Promise.resolve() : bot.stop()));
    const place = { platform: 'slack', workspace: 'T1', channel: 'C0OPS', thread: '1.0' };
    expect(bot.core.profiles.forPlace(place).name).toBe('ops');

    writeFileSync(path, yamlWith('two').replace('name: ops', 'name: ops2'));
    await waitFor(() => bot.core.profiles.version === 2, WAIT_MS);
    expect(bot.core.profiles.forPlace(place).name).toBe('ops2');
    expect(bot.core.profileWatch).toBeDefined();

    await bot.stop();
    stopped = true;
    // The watch is closed with the core: a later edit is not read (a witness watch sees it).
    let seen = 0;
    const witness = new ProfileWatch({ path, reload: async () => void seen++ }, { logger: memoryLogger() }).start();
    cleanups.push(() => witness.stop());
    writeFileSync(path, yamlWith('three'));
    await waitFor(() => seen > 0, WAIT_MS);
    // A second edit and its debounce: a read the core's watch had begun for the first would be done by now.
    writeFileSync(path, yamlWith('four'));
    await waitFor(() => seen > 1, WAIT_MS);
    expect(bot.core.profiles.version).toBe(2);
  }, 60_000);
});

describe('SIGHUP', () => {
  it('the running bot reads the PROFILES file again on SIGHUP (a change the folder watch cannot see)', async () => {
    const fakes = await startBotFakes(cleanups);
    // PROFILES is a link: the watch is on the link's folder, the edits are in the target's.
    const elsewhere = await tempDir();
    cleanups.push(elsewhere.remove);
    const target = join(elsewhere.path, 'real.yaml');
    await writeFile(target, yamlWith('before'));
    const link = join(fakes.dir, 'profiles.yaml');
    await symlink(target, link);
    const bot = await BotProcess.start(slackHttpEnv(fakes, 'sighup-secret', { PROFILES: link }), fakes.dir, 30_000);
    cleanups.push(() => bot.kill());
    const reloaded = () => bot.lines().filter((line) => line.msg === 'profiles reloaded: new turns run under them');

    await writeFile(
      target,
      [
        'profiles:',
        '  - name: ops',
        '    match: { slackChannel: C0OPS }',
        '  - name: support',
        '    match: { slackChannel: C0SUP }',
        '',
      ].join('\n'),
    );
    bot.signal('SIGHUP');
    await waitFor(() => reloaded().length === 1, WAIT_MS);
    expect(reloaded()[0]!.profiles).toEqual(['ops', 'support']);
    expect(bot.alive).toBe(true);

    // A broken edit on SIGHUP: every problem logged, the bot keeps running on the last good.
    await writeFile(target, 'profiles:\n  - name: ops\n    match: {}\n    tools: [nope]\n');
    bot.signal('SIGHUP');
    await waitFor(
      () => bot.lines().some((line) => String(line.msg).startsWith('the profiles file has problems')),
      WAIT_MS,
    );
    expect(
      bot
        .lines()
        .filter((line) => Number(line.level) === 50 && String(line.msg).startsWith('PROFILES: '))
        .map((line) => line.msg),
    ).toEqual([
      'PROFILES: profile "ops": match: names no place: give slackChannel, slackTeam, discordChannel, discordGuild, dm: true or playground: true',
      expect.stringMatching(/^PROFILES: profile "ops": tools: "nope" is neither a tool nor an MCP server/),
    ]);
    expect(bot.alive).toBe(true);
  }, 60_000);
});
