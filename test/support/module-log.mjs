// Preloaded into a bot under test (`NODE_OPTIONS=--import <this file>`, MODULE_LOG=<file>): it
// writes down every module the process loads, a line each, `<pid> <path or URL>` (NODE_OPTIONS
// reaches the processes the bot starts too, such as the compiler on a first start: the pid
// tells them apart), so a test can tell what a start brought into memory. ES modules are logged as they are resolved (a hook on the
// loader's thread, which appends to the file itself); CommonJS ones, which a package may
// require() out of the loader's sight, are added from the require cache when the process exits.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const log = process.env.MODULE_LOG;
if (log) {
  const hooks = `
    import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      const resolved = await next(specifier, context);
      appendFileSync(${JSON.stringify(log)}, process.pid + ' ' + resolved.url + '\\n');
      return resolved;
    }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () =>
    appendFileSync(
      log,
      Object.keys(cache)
        .map((path) => `${process.pid} ${path}\n`)
        .join(''),
    ),
  );
}
