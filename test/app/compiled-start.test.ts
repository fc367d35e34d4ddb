// `npm start` runs the bot compiled (bin/start.mjs, bin/build.mjs): a build is never a step
// to remember. In a clone of the project (test/support/npm-start.ts `cloneCopy`: the tracked
// files, no dist/, this checkout's node_modules), through the real `npm start` with dash as
// npm's shell, against the fake Slack in HTTP mode and the fake model: the first start
// compiles, a second reuses the build, an edit is compiled and run by the next start, two
// first starts at once share one build, and where no build can be written the bot still starts
// from its sources through tsx, saying so in words. The bundled code still finds its project
// folder (test/slack/slack-files-process.test.ts: and the PDF reader's entry beside it).
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { slackHttpEnv, startBotFakes, type BotFakes } from '../support/bot-fakes.js';
import { waitFor } from '../support/engine-kit.js';
import { alive, cloneCopy, NpmStart, processesIn } from '../support/npm-start.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function clone(): Promise<string> {
  const copy = await cloneCopy();
  cleanups.push(copy.remove);
  return copy.path;
}

/** `npm start` in `dir` until Slack takes events; killed at clean-up if still running. */
async function start(dir: string, fakes: BotFakes, store = 'bot'): Promise<NpmStart> {
  const life = await NpmStart.start(
    dir,
    slackHttpEnv(fakes, 'secret', { STORE_URL: `sqlite://${join(fakes.dir, 'data', `${store}.sqlite`)}` }),
    60_000,
  );
  cleanups.push(() => life.kill());
  return life;
}

/** SIGTERM to npm: the bot stops cleanly. */
async function stop(life: NpmStart): Promise<void> {
  life.terminate();
  expect(await life.exited, life.stderr).toBe(0);
  await waitFor(() => !alive(life.botPid), 5_000);
}

/** The command line of the bot's own process. */
async function commandOf(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ').trim();
}

async function builds(dir: string): Promise<string[]> {
  return (await readdir(join(dir, 'dist'))).filter((name) => !name.startsWith('.'));
}

describe('npm start compiles the bot, and only when the sources changed', () => {
  it('the bundled bot still knows its project folder, which the shell sandbox hides', { timeout: 60_000 }, async () => {
    // Its code runs from dist/<stamp>/bundle/, deeper than src/sandbox/: the project folder is
    // found from the place the build tells the code it stands for (bin/build.mjs), by its package.json.
    const fakes = await startBotFakes(cleanups);
    const project = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));
    // Not spawnSync: the fake Slack it checks answers from this process.
    const doctor = await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        [join(project, 'bin', 'start.mjs'), '--check'],
        {
          cwd: fakes.dir,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: process.env.HOME ?? '',
            ...slackHttpEnv(fakes, 'secret', { WORKSPACE_DIR: project, SHELL_SANDBOX: 'bwrap' }),
          },
          timeout: 50_000,
        },
        (_error, stdout) => resolve(stdout),
      );
    });
    expect(doctor).toMatch(/✗ shell sandbox: WORKSPACE_DIR \(.+\) holds .*the bot's project folder/);
  });

  it(
    'a fresh clone compiles at its first start; the next start reuses the build; an edit is compiled and run by the start after it',
    { timeout: 180_000 },
    async () => {
      const dir = await clone();
      const fakes = await startBotFakes(cleanups);

      const first = await start(dir, fakes);
      // The bot's process runs the compiled main, with no TypeScript loader.
      expect(await commandOf(first.botPid)).toMatch(/node bin\/start\.mjs$/);
      expect(first.stderr).toBe('');
      const [built] = await builds(dir);
      expect(await builds(dir)).toEqual([built]);
      const builtAt = (await stat(join(dir, 'dist', built!))).mtimeMs;
      await stop(first);
      // Nothing left behind, the compiler's process included.
      expect(await processesIn(dir)).toEqual([]);

      const second = await start(dir, fakes);
      expect(await builds(dir)).toEqual([built]);
      expect((await stat(join(dir, 'dist', built!))).mtimeMs).toBe(builtAt);
      await stop(second);

      // An edit, as a deploy or a developer makes one: the start-up line's words change.
      const runBot = join(dir, 'src', 'app', 'run-bot.ts');
      const source = await readFile(runBot, 'utf8');
      expect(source).toContain("logger.info(whatRunsWhere(config), 'running');");
      await writeFile(
        runBot,
        source.replace(
          "logger.info(whatRunsWhere(config), 'running');",
          "logger.info(whatRunsWhere(config), 'running, edited');",
        ),
      );
      const third = await start(dir, fakes);
      await waitFor(() => third.lines().some((line) => line.msg === 'running, edited'), 10_000);
      const after = await builds(dir);
      expect(after).toHaveLength(2);
      expect(after).toContain(built);
      await stop(third);
    },
  );

  it('two first starts at once make one build and both run it', { timeout: 180_000 }, async () => {
    const dir = await clone();
    const fakes = await startBotFakes(cleanups);
    const [one, two] = await Promise.all([start(dir, fakes, 'one'), start(dir, fakes, 'two')]);
    expect([one.stderr, two.stderr]).toEqual(['', '']);
    expect(await builds(dir)).toHaveLength(1);
    // No half-made build left behind by the one that lost the race.
    expect((await readdir(join(dir, 'dist'))).filter((name) => name.startsWith('.'))).toEqual([]);
    await stop(one);
    await stop(two);
    expect(await processesIn(dir)).toEqual([]);
  });

  it(
    'where no build can be written, the bot says so in words and starts from its sources through tsx',
    { timeout: 180_000 },
    async () => {
      const dir = await clone();
      const fakes = await startBotFakes(cleanups);
      // A file where the build's folder would be: no account, root included, can build there.
      await writeFile(join(dir, 'dist'), '');
      const life = await start(dir, fakes);
      expect(life.stderr).toMatch(
        /^Could not build the bot into dist\/[0-9a-f]+: EEXIST: file already exists, mkdir '.*\/dist'\n/,
      );
      expect(life.stderr).toContain(
        'Running its TypeScript sources through tsx instead, which takes about 50 MB more memory. To fix it, run `npm run build` once as the owner of the folder.',
      );
      expect(life.lines().map((line) => line.msg)).toContain('running');
      await stop(life);
    },
  );
});
