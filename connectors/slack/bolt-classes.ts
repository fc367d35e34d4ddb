// Bolt's App and Socket Mode receiver, taken from their own modules rather than the package's
// index: the index also loads the Express and AWS Lambda receivers (Express, body-parser and
// iconv-lite's code pages, about 750 KB the bot never runs), which every start compiled. A
// Bolt that moves these files fails the build and the tests, not a running bot.
//
// Both modules are CommonJS with `exports.default`. Node (the bundle, tsx) imports such a
// module's `module.exports` as the default, so the class is its `.default`; vitest's loader
// follows the older convention and hands over `exports.default` itself. `classOf` takes either.
import boltApp from '@slack/bolt/dist/App.js';
import socketModeReceiver from '@slack/bolt/dist/receivers/SocketModeReceiver.js';

function classOf<T>(imported: { default: T }): T {
  // Typed as Node imports it; under vitest it may be the class itself.
  const either: unknown = imported;
  return Object.hasOwn(either as object, 'default') ? imported.default : (either as T);
}

export const App = classOf(boltApp);
export const SocketModeReceiver = classOf(socketModeReceiver);
