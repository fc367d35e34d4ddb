// `npm test` on a machine without the system packages the suites need: one line, before
// anything runs, naming what is missing and how to install it (check-system.ts).
import { spawnSync } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CHROMIUM, missingPackagesLine, missingSystemPackages } from './check-system.js';
import { tempDir } from './test-connector.js';

const SCRIPT = fileURLToPath(new URL('./check-system.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A folder for a fake PATH, holding the named programs (executable unless told otherwise). */
async function bin(programs: Record<string, 'executable' | 'plain'> = {}): Promise<string> {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  for (const [name, kind] of Object.entries(programs)) {
    await writeFile(join(dir.path, name), '#!/bin/sh\nexit 0\n');
    await chmod(join(dir.path, name), kind === 'executable' ? 0o755 : 0o644);
  }
  return dir.path;
}

describe('npm test: the system packages the suites need', () => {
  it('names each one missing, in one line with the command that installs them', async () => {
    const empty = await bin();
    const missing = missingSystemPackages({ PATH: empty, chromium: join(empty, 'chromium') });
    expect(missing).toEqual(['bubblewrap', 'chromium', 'redis-server']);
    const line = missingPackagesLine(missing, false);
    expect(line).toBe(
      'npm test needs system packages that are missing: bubblewrap, chromium, redis-server. ' +
        'Install them (Debian/Ubuntu): sudo apt-get update && sudo apt-get install -y bubblewrap chromium redis-server; ' +
        'or run bash .ci/run, which installs them and then runs the tests.',
    );
    expect(line).not.toContain('\n');
    expect(missingPackagesLine(['redis-server'], true)).toContain(
      'Install them (Debian/Ubuntu): apt-get update && apt-get install -y redis-server;',
    );
  });

  it('finds them where the suites look: bwrap and redis-server on PATH (or REDIS_SERVER), Chromium at its path; a file that cannot run is missing', async () => {
    const dir = await bin({
      bwrap: 'executable',
      'redis-server': 'executable',
      chromium: 'executable',
      'not-runnable': 'plain',
    });
    expect(missingSystemPackages({ PATH: `/nowhere:${dir}`, chromium: join(dir, 'chromium') })).toEqual([]);
    const other = await bin({ 'redis-7': 'executable' });
    expect(
      missingSystemPackages({ PATH: dir, chromium: join(dir, 'chromium'), REDIS_SERVER: join(other, 'redis-7') }),
    ).toEqual([]);
    expect(
      missingSystemPackages({ PATH: dir, chromium: join(dir, 'chromium'), REDIS_SERVER: join(dir, 'not-runnable') }),
    ).toEqual(['redis-server']);
    expect(missingSystemPackages({ PATH: dir, chromium: join(dir, 'not-runnable') })).toEqual(['chromium']);
  });

  it('run as npm test runs it, on a machine without them: the line on stderr, exit 1', async () => {
    const empty = await bin();
    const run = spawnSync(process.execPath, ['--import', TSX, SCRIPT], {
      env: { PATH: empty, HOME: process.env.HOME ?? '' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^npm test needs system packages that are missing: bubblewrap, (chromium, )?redis-server\. Install them/,
    );
  });

  it('is the first thing npm test runs, before the type check, and looks for Chromium where the browser tests launch it', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.test).toMatch(/^node --import tsx test\/support\/check-system\.ts && npm run typecheck && /);
    const browserTest = await readFile(new URL('../web/playground-browser.test.ts', import.meta.url), 'utf8');
    expect(browserTest).toContain(`CHROMIUM = '${CHROMIUM}'`);
  });
});
