// `npm test`'s first step, before the type check: the system packages the suites run for
// real (none of them skips), so a fresh machine gets one line naming what to install instead
// of `spawn redis-server ENOENT` minutes into the run. It fails, never skips: CI (.ci/run)
// installs the same three before `npm test`, so there it passes.
//
//   bubblewrap    `bwrap` on PATH: the shell sandbox's tests run the real sandbox
//   chromium      /usr/bin/chromium: the playground's browser tests (test/web/playground-browser.test.ts)
//   redis-server  on PATH, or REDIS_SERVER: the store's and cluster mode's tests (test/support/redis-server.ts)
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the browser tests launch Chromium from (Debian's package). */
export const CHROMIUM = '/usr/bin/chromium';

/** What is looked at: the environment's PATH and REDIS_SERVER, and Chromium's path. */
export interface SystemProbe {
  PATH: string;
  REDIS_SERVER?: string | undefined;
  chromium: string;
}

/** Each package the suites need (its Debian/Ubuntu name), and how a test finds it. */
const REQUIRED: readonly { name: string; found: (probe: SystemProbe) => boolean }[] = [
  { name: 'bubblewrap', found: (probe) => onPath('bwrap', probe.PATH) },
  { name: 'chromium', found: (probe) => executable(probe.chromium) },
  // As test/support/redis-server.ts spawns it: REDIS_SERVER (a path, or a name on PATH), else redis-server.
  { name: 'redis-server', found: (probe) => command(probe.REDIS_SERVER ?? 'redis-server', probe.PATH) },
];

/** The packages missing here, in the order an install command would name them. */
export function missingSystemPackages(probe: SystemProbe): string[] {
  return REQUIRED.filter((entry) => !entry.found(probe)).map((entry) => entry.name);
}

/** The one line `npm test` prints when something is missing: what, and the command that installs it. */
export function missingPackagesLine(missing: readonly string[], asRoot: boolean): string {
  const sudo = asRoot ? '' : 'sudo ';
  return (
    `npm test needs system packages that are missing: ${missing.join(', ')}. ` +
    `Install them (Debian/Ubuntu): ${sudo}apt-get update && ${sudo}apt-get install -y ${missing.join(' ')}; ` +
    'or run bash .ci/run, which installs them and then runs the tests.'
  );
}

function command(name: string, searchPath: string): boolean {
  return name.includes('/') ? executable(name) : onPath(name, searchPath);
}

function onPath(name: string, searchPath: string): boolean {
  return searchPath.split(path.delimiter).some((dir) => dir !== '' && executable(path.join(dir, name)));
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

// Run as a script (`node --import tsx test/support/check-system.ts`): exit 1 with the line.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const missing = missingSystemPackages({
    PATH: process.env.PATH ?? '',
    REDIS_SERVER: process.env.REDIS_SERVER,
    chromium: CHROMIUM,
  });
  if (missing.length > 0) {
    console.error(missingPackagesLine(missing, process.getuid?.() === 0));
    process.exitCode = 1;
  }
}
