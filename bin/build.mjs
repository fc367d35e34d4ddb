// The compiled bot: src/ and connectors/ turned into plain JavaScript under dist/, so that
// `npm start` runs no TypeScript loader. tsx at run time cost the bot about 50 MB before its
// first message (the loader, and a source map kept in memory for every module it compiled;
// 60 MB when every module was loaded at start) and a second or more to start; see README
// "Deploy" and bench/process.bench.ts.
//
// The one idea: a build is named by what it was built from. `sourceStamp()` hashes every file
// it compiles or copies (and the compiler's version and options); the build lives in
// dist/<stamp>/ and is never changed once there. So a stale build cannot run (an edit makes
// a new stamp, and start.mjs builds it), two starts that build at once do not clash (each
// writes a folder of its own and renames it into place; the first wins, the other's is
// dropped), and a running bot keeps the files it loads lazily while a newer build appears.
//
// Files are transpiled one by one (esbuild, what tsx itself compiles with; no bundling, no
// type check: `npm run typecheck` does that), so dist/<stamp>/ mirrors the source tree and
// paths relative to a module (connectors/web/page/, the project folder) hold as in src/.
// Other files in those folders (the playground's page) are copied.
//
// `node bin/build.mjs` (`npm run build`) builds if needed and prints the build's folder.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(ROOT, 'dist');
/** The source folders: everything the bot runs. Tests beside the code (`*.test.ts`) are left out. */
const SOURCE_FOLDERS = ['src', 'connectors'];
/** Builds kept in dist/ (the newest); older ones are removed after a build. */
const KEEP_BUILDS = 5;
/**
 * What esbuild is asked for, for the oldest Node in `engines`. No source maps: a map per module
 * is memory a running bot holds for nothing (stack traces name dist/<stamp>/src/… files,
 * which mirror src/ one to one). No keepNames (tsx's setting): files transpiled one by one,
 * unminified, keep every name as written, so JavaScript names functions and classes itself;
 * keepNames only wrapped each named closure in a `__name` call as it was made, which gave
 * every one its own property store (about 8 MB live with 1,000 turns at once, and as much
 * garbage again) and cost a defineProperty each.
 */
/** @type {import('esbuild').BuildOptions} */
const ESBUILD_OPTIONS = { format: 'esm', platform: 'node', target: 'node20', keepNames: false, logLevel: 'silent' };

/**
 * Every file a build is made of, relative to ROOT, sorted.
 * @returns {string[]}
 */
export function sourceFiles() {
  /** @type {string[]} */
  const files = [];
  /** @param {string} folder */
  const walk = (folder) => {
    for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && !entry.name.endsWith('.test.ts')) files.push(path);
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(folder);
  return files.sort();
}

/**
 * The name of the build these sources make: a hash of each file's path and content, the compiler and its options.
 * @param {string[]} files
 */
export function sourceStamp(files = sourceFiles()) {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(ESBUILD_OPTIONS));
  // esbuild's package.json: its version (read, not imported: that would put the compiler in
  // every start's memory). tsconfig.json: esbuild reads it (how class fields are defined).
  hash.update(readFileSync(createRequire(import.meta.url).resolve('esbuild/package.json')));
  for (const file of ['tsconfig.json', ...files]) {
    hash.update(`\0${file}\0`);
    hash.update(readFileSync(join(ROOT, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The folder of the build for `stamp` (complete if it exists: it appears by a rename).
 * @param {string} stamp
 */
export function buildFolder(stamp) {
  return join(DIST, stamp);
}

/**
 * Build the current sources unless already built; resolves with the build's folder.
 * @returns {Promise<string>}
 */
export async function build() {
  const files = sourceFiles();
  const stamp = sourceStamp(files);
  const target = buildFolder(stamp);
  if (existsSync(target)) return target;
  mkdirSync(DIST, { recursive: true });
  const scratch = join(DIST, `.building-${stamp}-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  try {
    const esbuild = await import('esbuild');
    const compiled = files.filter((file) => file.endsWith('.ts'));
    await esbuild.build({ ...ESBUILD_OPTIONS, entryPoints: compiled.map((file) => join(ROOT, file)), outdir: scratch, outbase: ROOT, bundle: false });
    for (const file of files.filter((name) => !name.endsWith('.ts'))) {
      mkdirSync(dirname(join(scratch, file)), { recursive: true });
      cpSync(join(ROOT, file), join(scratch, file));
    }
    try {
      renameSync(scratch, target);
    } catch (error) {
      // Another start built the same stamp first: its folder is the same build.
      if (!existsSync(target)) throw error;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  removeOldBuilds(stamp);
  return target;
}

/**
 * Keep the newest builds (a bot started from one of them may still load files from it), remove
 * the rest, and the scratch folders of builds whose process died.
 * @param {string} current
 */
function removeOldBuilds(current) {
  const entries = readdirSync(DIST, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  for (const entry of entries) {
    const builder = /^\.building-\w+-(\d+)$/.exec(entry.name);
    if (builder && !alive(Number(builder[1]))) rmSync(join(DIST, entry.name), { recursive: true, force: true });
  }
  const builds = entries
    .filter((entry) => entry.name !== current && !entry.name.startsWith('.'))
    .map((entry) => ({ path: join(DIST, entry.name), at: statSync(join(DIST, entry.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of builds.slice(KEEP_BUILDS - 1)) rmSync(old.path, { recursive: true, force: true });
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/**
 * A path inside ROOT, for messages.
 * @param {string} path
 */
export function shown(path) {
  const inside = relative(ROOT, path);
  return inside.startsWith(`..${sep}`) ? path : inside;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    console.log(shown(await build()));
  } catch (error) {
    // What went wrong in words (start.mjs quotes it): a folder it may not write, a syntax error.
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
