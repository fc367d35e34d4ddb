// The compiled bot: src/ and connectors/, with the packages they import, bundled into plain
// JavaScript under dist/, so that `npm start` runs no TypeScript loader and loads a few dozen
// files instead of about two thousand. tsx at run time cost the bot about 50 MB before its
// first message and a second or more to start; a module by module build still spent most of a
// start finding, reading and compiling 1,700 modules one at a time (bench/process.bench.ts).
//
// The one idea: a build is named by what it was built from. `sourceStamp()` hashes every file
// it compiles or copies, the lock file that fixes the packages bundled with them, and the
// compiler's version and options; the build lives in dist/<stamp>/ and is never changed once
// there. So a stale build cannot run (an edit or `npm ci` of other versions makes a new stamp,
// and start.mjs builds it), two starts that build at once do not clash (each writes a folder
// of its own and renames it into place; the first wins, the other's is dropped), and a running
// bot keeps the chunks it loads lazily while a newer build appears.
//
// The bundle (esbuild, what tsx itself compiles with; no type check: `npm run typecheck` does
// that) is dist/<stamp>/bundle/: main.js and the chunks it imports, split at every dynamic
// import so that what the bot loads lazily (Discord, the MCP SDK, traces, profiles) still
// loads only when used. Three things keep the bundled code where it thinks it is:
//   - `import.meta.url`, `__dirname` and `__filename` in a bundled file are rewritten to the
//     place the file stands for: a package file's own path in node_modules/, and for the bot's
//     own files the same path under dist/<stamp>/, where the build copies the other files of
//     src/ and connectors/ (the playground's page, the PDF reader's entry) beside it. Every
//     chunk sits in bundle/, so one relative path from there holds whichever chunk the code
//     lands in.
//   - `require` in a chunk is Node's own for that folder (the banner), for the CommonJS
//     packages bundled, and it finds node_modules/ from there as it would from src/.
//   - Packages that load native code or start workers from their own files stay outside
//     (NOT_BUNDLED) and load from node_modules/ as they would without a bundle.
// bundle/modules.json says which source files each chunk holds, so a test can tell what a
// start brought into memory from the chunks it loaded.
//
// `node bin/build.mjs` (`npm run build`) builds if needed and prints the build's folder.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(ROOT, 'dist');
/** The source folders: everything the bot runs. Tests live in test/; a stray `*.test.ts` here is left out all the same. */
const SOURCE_FOLDERS = ['src', 'connectors'];
/** Builds kept in dist/ (the newest); older ones are removed after a build. */
const KEEP_BUILDS = 5;
/**
 * Packages left out of the bundle, loaded from node_modules/ at run time: each loads native code
 * (sqlite3, sharp and its @img/* binaries) or starts worker threads from files of its own
 * (pino's transports through thread-stream), which a bundle would move away from them; or
 * keeps most of its code in files it requires only when asked (iconv-lite's code pages, about
 * 540 KB that Bolt's body reader never needs for UTF-8), which a bundle would have every start
 * compile.
 */
const NOT_BUNDLED = ['sqlite3', 'sharp', 'pino', 'pino-pretty', 'thread-stream', 'iconv-lite'];
/**
 * What esbuild is asked for, for the oldest Node in `engines`. No source maps: a map is memory
 * a running bot holds for nothing. Not minified, so a stack trace reads as the source does. No
 * keepNames: it wraps every named function and class in a `__name` call as it is made, which
 * gave each its own property store (about 8 MB live with 1,000 turns at once, and as much
 * garbage again) and cost a defineProperty each; without it JavaScript names them itself,
 * except where two modules' names meet in one chunk and esbuild renames one (`Foo2`), so the
 * bot never reads a class's name to tell errors apart (src/providers/errors.ts).
 */
/** @type {import('esbuild').BuildOptions} */
const ESBUILD_OPTIONS = {
  format: 'esm',
  platform: 'node',
  target: 'node20',
  keepNames: false,
  logLevel: 'silent',
  bundle: true,
  splitting: true,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  // Node's `require` for the CommonJS packages in a chunk, and the chunk's place for the files
  // whose own place was rewritten (placeOf below).
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; import { fileURLToPath as __bundlePath } from 'node:url'; const require = __bundleRequire(import.meta.url); const __bundleUrl = import.meta.url;",
  },
};
/** The bundle's entry, relative to ROOT. */
const ENTRY = 'src/main.ts';
/** Where the bundle goes in a build's folder (every chunk directly in it: placeOf relies on that). */
export const BUNDLE_FOLDER = 'bundle';
/**
 * A build's folder and its bundle's, with a stand-in for the stamp: every build sits at the
 * same depth in dist/, so a path relative from any bundle folder holds for all of them.
 */
const ANY_BUILD = join(DIST, 'stamp');
const ANY_BUNDLE_FOLDER = join(ANY_BUILD, BUNDLE_FOLDER);

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
  // This file: how the bundle is made (its options, the packages left out, the rules).
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  // esbuild's package.json: its version (read, not imported: that would put the compiler in
  // every start's memory). tsconfig.json: esbuild reads it (how class fields are defined).
  hash.update(readFileSync(createRequire(import.meta.url).resolve('esbuild/package.json')));
  // package-lock.json: the versions of the packages bundled with the sources (an install
  // without one, which npm does not make by itself, has only package.json's ranges to go by).
  for (const file of ['tsconfig.json', 'package.json', ...files]) {
    hash.update(`\0${file}\0`);
    hash.update(readFileSync(join(ROOT, file)));
  }
  const lock = join(ROOT, 'package-lock.json');
  if (existsSync(lock)) hash.update(readFileSync(lock));
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
    const built = await esbuild.build({
      ...ESBUILD_OPTIONS,
      entryPoints: [join(ROOT, ENTRY)],
      outdir: join(scratch, BUNDLE_FOLDER),
      metafile: true,
      absWorkingDir: ROOT,
      plugins: [{ name: 'bot-bundle', setup: bundleRules }],
    });
    writeFileSync(join(scratch, BUNDLE_FOLDER, 'modules.json'), JSON.stringify(chunkModules(built.metafile, scratch)));
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
 * The bundle's two rules: packages in NOT_BUNDLED stay imports, and a file that asks where it
 * is (`import.meta.url`, `__dirname`, `__filename`) is told the place it stands for.
 * @param {import('esbuild').PluginBuild} bundle
 */
function bundleRules(bundle) {
  // zod's `z` carries every locale's messages (`z.locales`, about 360 KB, a third of zod), and a
  // namespace cannot be tree-shaken. The bot's messages are English, which zod sets by itself
  // (classic/schemas.js), so the locales' index holds English only.
  bundle.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
    /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
      ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: ZOD_ENGLISH }
      : undefined,
  );
  bundle.onLoad({ filter: /.*/, namespace: ZOD_ENGLISH }, (args) => ({
    contents: `export { default as en } from ${JSON.stringify(args.path)};`,
    resolveDir: dirname(args.path),
  }));
  bundle.onResolve({ filter: /^[^./]/ }, (args) => {
    const parts = args.path.split('/');
    const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    return NOT_BUNDLED.includes(name ?? '') ? { path: args.path, external: true } : undefined;
  });
  // A CommonJS module imported with import() stays outside too (esbuild would hand the importer
  // only `default`, where Node also gives each of module.exports' names): Node loads it from
  // node_modules/, by its path from the bundle's folder.
  bundle.onResolve({ filter: /.*/ }, async (args) => {
    if (args.kind !== 'dynamic-import' || args.pluginData === RESOLVING) return undefined;
    const found = await bundle.resolve(args.path, {
      kind: args.kind,
      importer: args.importer,
      resolveDir: args.resolveDir,
      pluginData: RESOLVING,
    });
    if (found.errors.length > 0 || found.external || !isCommonJs(found.path)) return undefined;
    const fromBundle = relative(ANY_BUNDLE_FOLDER, found.path).split(sep).join('/');
    return { path: fromBundle, external: true };
  });
  bundle.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, (args) => {
    const text = readFileSync(args.path, 'utf8');
    let contents = lazyRequires(text, args.path);
    if (/import\.meta\.url|__dirname|__filename/.test(contents)) contents = placeOf(contents, args.path);
    if (contents === text) return undefined;
    return { contents, loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
  });
}

/**
 * CommonJS requires made lazy: package → the modules it requires at its top but uses only later.
 * @slack/socket-mode takes undici (about 1 MB, a fifth of a start's work) for its WebSocket,
 * which only a bot in Socket Mode opens; Bolt's App loads the Socket Mode receiver whatever
 * the mode. Bolt's receivers take @slack/oauth (with jsonwebtoken) for an install flow the bot
 * does not run. In such a package's files, `const x = require("<module>");` becomes an object
 * that requires the module at the first use of one of its names. A version that requires it
 * in another form is bundled as before (eager), which the lean-start test notices.
 * @type {Record<string, string[]>}
 */
const LAZY_REQUIRES = { '@slack/socket-mode': ['undici'], '@slack/bolt': ['@slack/oauth'] };

/**
 * `text` (of the file at `path`) with the lazy requires of LAZY_REQUIRES applied.
 * @param {string} text
 * @param {string} path
 */
function lazyRequires(text, path) {
  let lazy = text;
  for (const [owner, modules] of Object.entries(LAZY_REQUIRES)) {
    if (!path.split(sep).join('/').includes(`/node_modules/${owner}/`)) continue;
    for (const module of modules) {
      const eager = new RegExp(
        `^const (\\w+) = require\\(${JSON.stringify(module).replace(/[./]/g, '\\$&')}\\);$`,
        'gm',
      );
      lazy = lazy.replace(
        eager,
        (_, name) =>
          `let ${name}$loaded; const ${name} = new Proxy({}, { get: (_, key) => (${name}$loaded ??= require(${JSON.stringify(module)}))[key] });`,
      );
    }
  }
  return lazy;
}

/** The namespace of zod's locales index as bundled: English only. */
const ZOD_ENGLISH = 'zod-english';
/** Marks bundleRules' own resolve calls, which its import() rule must not see again. */
const RESOLVING = Symbol('resolving');

/**
 * Whether Node loads the file at `path` as CommonJS: `.cjs`, or `.js` where the nearest
 * package.json does not say `"type": "module"`.
 * @param {string} path
 */
function isCommonJs(path) {
  if (path.endsWith('.cjs')) return true;
  if (!path.endsWith('.js')) return false;
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest)) {
      try {
        const facts = /** @type {unknown} */ (JSON.parse(readFileSync(manifest, 'utf8')));
        return !(typeof facts === 'object' && facts !== null && 'type' in facts && facts.type === 'module');
      } catch {
        return true;
      }
    }
    if (dirname(folder) === folder) return true;
  }
}

/**
 * `text` (of the file at `path`) with its questions about its place answered as if it ran where
 * it stands for: the bot's own files in dist/<stamp>/, beside the copies of their folder's other
 * files, with a .js name; a package's files where they are. `__bundleUrl` is the chunk's URL
 * (the banner), and every chunk is in dist/<stamp>/bundle/.
 * @param {string} text
 * @param {string} path
 */
function placeOf(text, path) {
  const inProject = relative(ROOT, path);
  const own = SOURCE_FOLDERS.some((folder) => inProject.startsWith(`${folder}${sep}`));
  const place = relative(ANY_BUNDLE_FOLDER, own ? join(ANY_BUILD, inProject.replace(/\.ts$/, '.js')) : path);
  const url = `new URL(${JSON.stringify(place.split(sep).join('/'))}, __bundleUrl).href`;
  let answered = text.replaceAll('import.meta.url', url);
  // A CommonJS file's own variables, declared in it (esbuild keeps each CommonJS file in a function of its own).
  if (/__dirname|__filename/.test(text)) {
    answered = `var __filename = __bundlePath(${url}), __dirname = __bundlePath(new URL('.', ${url}).href);\n${answered}`;
  }
  return answered;
}

/**
 * For each chunk of the bundle, the source files it holds, relative to ROOT (the bot's own,
 * `src/…` and `connectors/…`, and packages', `node_modules/…`).
 * @param {import('esbuild').Metafile} metafile its paths relative to ROOT
 * @param {string} scratch the build's folder while it is made
 * @returns {Record<string, string[]>} chunk file name → source files
 */
function chunkModules(metafile, scratch) {
  /** @type {Record<string, string[]>} */
  const chunks = {};
  for (const [output, facts] of Object.entries(metafile.outputs)) {
    const name = relative(join(scratch, BUNDLE_FOLDER), join(ROOT, output));
    chunks[name] = Object.keys(facts.inputs);
  }
  return chunks;
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
