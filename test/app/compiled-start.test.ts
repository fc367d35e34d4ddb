// `npm start` runs the bot compiled (bin/start.mjs, bin/build.mjs): a build is never a step
// to remember. In a clone of the project (test/support/npm-start.ts `cloneCopy`: the tracked
// files, no dist/, this checkout's node_modules), through the real `npm start` with dash as
// npm's shell, against the fake Slack in HTTP mode and the fake model: the first start
// compiles, a second reuses the build, an edit is compiled and run by the next start, two
// first starts at once share one build, and where no build can be written the bot still starts
// from its sources through tsx, saying so in words. The compiled PDF reader finds its child
// process's entry (plain JavaScript, copied into the build).
import { realpathSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { build } from '../../bin/build.mjs';
import type { botPaths } from '../../src/sandbox/protected-paths.js';
import { slackHttpEnv, startBotFakes, type BotFakes } from '../support/bot-fakes.js';
import { waitFor } from '../support/engine-kit.js';
import { writeTextPdf } from '../support/file-fixtures.js';
import { alive, cloneCopy, NpmStart, processesIn } from '../support/npm-start.js';
import { tempDir } from '../support/test-connector.js';

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
  const life = await NpmStart.start(dir, slackHttpEnv(fakes, 'secret', { STORE_URL: `sqlite://${join(fakes.dir, 'data', `${store}.sqlite`)}` }), 60_000);
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
  it('the compiled bot still knows its project folder, which the shell sandbox hides', async () => {
    // dist/<stamp>/src/sandbox/ is two levels deeper than src/sandbox/: the project folder is
    // found by its package.json, not by counting levels.
    const compiled = (await import(pathToFileURL(join(await build(), 'src', 'sandbox', 'protected-paths.js')).href)) as { botPaths: typeof botPaths };
    const project = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));
    expect(compiled.botPaths({ storeUrl: 'memory://', mcpConfig: 'mcp.json', workingDir: '/tmp' }).protected).toContainEqual({ path: project, what: "the bot's project folder" });
  });

  it("the compiled bot reads a PDF's text in its reader process, whose entry the build carries beside it", { timeout: 60_000 }, async () => {
    const folder = await build();
    const compiled = (await import(pathToFileURL(join(folder, 'src', 'files', 'pdf-text.js')).href)) as typeof import('../../src/files/pdf-text.js');
    const scratch = await tempDir();
    cleanups.push(scratch.remove);
    const pdf = await writeTextPdf(join(scratch.path, 'q3.pdf'), [['Q3 report', 'Revenue: 4,213']]);
    let reader: number | undefined;
    expect(await compiled.extractPdfText(pdf, { maxChars: 1000, onReaderStart: (pid) => (reader = pid) })).toEqual({ text: 'Q3 report\nRevenue: 4,213', pages: 1, truncated: false });
    // A process of its own, running the copy in the build.
    expect(reader).toBeGreaterThan(0);
    expect(reader).not.toBe(process.pid);
    expect(await stat(join(folder, 'src', 'files', 'pdf-text-child.mjs'))).toBeTruthy();
  });

  it('a fresh clone compiles at its first start; the next start reuses the build; an edit is compiled and run by the start after it', { timeout: 180_000 }, async () => {
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
    await writeFile(runBot, source.replace("logger.info(whatRunsWhere(config), 'running');", "logger.info(whatRunsWhere(config), 'running, edited');"));
    const third = await start(dir, fakes);
    await waitFor(() => third.lines().some((line) => line.msg === 'running, edited'), 10_000);
    const after = await builds(dir);
    expect(after).toHaveLength(2);
    expect(after).toContain(built);
    await stop(third);
  });

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

  it('where no build can be written, the bot says so in words and starts from its sources through tsx', { timeout: 180_000 }, async () => {
    const dir = await clone();
    const fakes = await startBotFakes(cleanups);
    // A file where the build's folder would be: no account, root included, can build there.
    await writeFile(join(dir, 'dist'), '');
    const life = await start(dir, fakes);
    expect(life.stderr).toMatch(/^Could not build the bot into dist\/[0-9a-f]+: EEXIST: file already exists, mkdir '.*\/dist'\n/);
    expect(life.stderr).toContain('Running its TypeScript sources through tsx instead, which takes about 50 MB more memory. To fix it, run `npm run build` once as the owner of the folder.');
    expect(life.lines().map((line) => line.msg)).toContain('running');
    await stop(life);
  });
});
