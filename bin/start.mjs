// What `npm start` runs (and `npm run doctor` / `npm run playground`, with their flag): the
// bot's compiled main (bin/build.mjs), in this very process, so `exec` in package.json still
// hands a `docker stop`'s SIGTERM straight to the bot, with the V8 settings of v8-flags.mjs.
//
// The one idea: a build is never a step to remember. When the sources have no build yet (a
// fresh clone, an edit, a deploy), it is made first, by a child process, so the bot itself
// never holds the compiler; later starts find it and only hash the sources (a few ms). When
// no build can be written here (a folder the bot's account may not write, as in a container
// image made without `npm run build`), the bot still starts: it says so on stderr and runs
// the TypeScript sources through tsx, as before the build existed, at about 50 MB more.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { BUNDLE_FOLDER, buildFolder, ROOT, shown, sourceStamp } from './build.mjs';
import { V8_FLAGS } from './v8-flags.mjs';

// Before the bot allocates anything (v8-flags.mjs says what and why).
for (const flag of V8_FLAGS) setFlagsFromString(flag);

const folder = buildFolder(sourceStamp());
let built = existsSync(folder);
if (!built) {
  try {
    execFileSync(process.execPath, [join(ROOT, 'bin', 'build.mjs')], { stdio: ['ignore', 'ignore', 'pipe'] });
    built = existsSync(folder);
  } catch (error) {
    // execFileSync's error carries the child's stderr: build.mjs says there what went wrong.
    const failed = /** @type {Error & { stderr?: Buffer }} */ (error);
    console.error(
      `Could not build the bot into ${shown(folder)}: ${String(failed.stderr ?? failed.message).trim()}\n` +
        'Running its TypeScript sources through tsx instead, which takes about 50 MB more memory. ' +
        'To fix it, run `npm run build` once as the owner of the folder.',
    );
  }
}
if (built) {
  // Node 22.1 and later keep V8's compiled code of every module on disk and use it at the next
  // start, instead of compiling the bot and its SDKs again (most of a start's work); Node 20 has
  // no such cache and starts as before. Beside the builds, which exist by now; a folder that
  // cannot be written only goes uncached (Node reports that in its return value, not on stderr).
  try {
    /** @type {{ enableCompileCache?: (folder: string) => unknown }} Node 20's types have no such method */ (
      module
    ).enableCompileCache?.(join(ROOT, 'dist', '.compile-cache'));
  } catch {
    // a Node that refuses: start uncached
  }
  await import(pathToFileURL(join(folder, BUNDLE_FOLDER, 'main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(ROOT, 'src', 'main.ts')).href);
}
