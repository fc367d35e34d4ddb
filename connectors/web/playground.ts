// `npm run playground`: the bot with only the local web playground as its connector, so it can
// be tried with nothing but a model (no Slack app, no Discord bot). src/main.ts calls these two.
//
// Its own store: unless STORE_URL is set, the playground keeps its conversations in
// `sqlite://data/playground.sqlite`, not the bot's `data/bot.sqlite`. A production bot running
// from the same folder must never share a SQLite file with a second process (two processes
// would each recover, resume and sweep the other's sessions), and playground threads have no
// business in the production store. Setting STORE_URL explicitly overrides this (e.g. to try
// the playground on a copy of real data). WORKSPACE_DIR and everything else are as configured.
import type { Logger } from 'pino';
import type { Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { ChatConnector } from '../shared/chat-connector.js';
import { WebConnector } from './web-connector.js';

export const PLAYGROUND_STORE_URL = 'sqlite://data/playground.sqlite';

/** The configuration the playground runs with: its own store unless STORE_URL was set. */
export function playgroundConfig(config: Config, env: NodeJS.ProcessEnv): Config {
  return env.STORE_URL ? config : { ...config, STORE_URL: PLAYGROUND_STORE_URL };
}

/** The playground's one connector; its start prints the page's address for a human, plainly. */
export async function playgroundConnectors(setup: { config: Config; core: Core; logger: Logger }): Promise<ChatConnector[]> {
  const web = await WebConnector.create(setup);
  return [
    {
      name: web.name,
      start: async () => {
        const started = await web.start();
        // The JSON log line carries it too; this one is for the person who ran the command.
        console.log(`\nPlayground: open ${web.url}\n`);
        return started;
      },
      stopTaking: () => web.stopTaking(),
      close: () => web.close(),
    },
  ];
}
