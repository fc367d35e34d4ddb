// `npm run playground`: the bot with only the local web playground as its connector, so it can
// be tried with nothing but a model (no Slack app, no Discord bot). src/main.ts calls these two.
//
// Its own store: unless STORE_URL is set, the playground keeps its conversations in
// `sqlite://data/playground.sqlite`, not the bot's `data/bot.sqlite`. A production bot running
// from the same folder must never share a SQLite file with a second process (two processes
// would each recover, resume and sweep the other's sessions), and playground threads have no
// business in the production store. Setting STORE_URL explicitly overrides this (e.g. to try
// the playground on a copy of real data). WORKSPACE_DIR and everything else are as configured.
//
// Its own model when none is set: without MODEL the playground runs the built-in demo model
// (src/providers/demo-provider.ts: scripted answers, no AI, no key), and says so in the
// terminal and on the page, with how to set a real one. A newcomer sees every part of the
// product in a minute; `npm start` never falls back to it.
import type { Logger } from 'pino';
import type { Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { SecretMasker } from '../../src/secrets/index.js';
import { DEMO_MODEL, isDemoModel } from '../../src/providers/model-ref.js';
import type { ChatConnector } from '../shared/chat-connector.js';
import { WebConnector } from './web-connector.js';

const PLAYGROUND_STORE_URL = 'sqlite://data/playground.sqlite';

/** The configuration the playground runs with: its own store unless STORE_URL was set, the demo model unless MODEL was. */
export function playgroundConfig(config: Config, env: NodeJS.ProcessEnv): Config {
  return {
    ...config,
    ...(env.STORE_URL ? {} : { STORE_URL: PLAYGROUND_STORE_URL }),
    ...(config.MODEL ? {} : { MODEL: DEMO_MODEL }),
  };
}

/** What the terminal says about the model when it is the demo (undefined for a real one). */
function demoModelNotice(model: string | undefined, defaulted: boolean): string | undefined {
  if (!isDemoModel(model)) return undefined;
  return [
    `${defaulted ? 'No MODEL is set, so the playground runs the demo model' : 'MODEL=demo: the demo model'}: scripted answers, no AI, no key needed.`,
    'Mention @bot and say hello: it tells you what to try (a file write and a command to approve, steering, Stop).',
    'For real answers, set MODEL in .env (openai:gpt-4.1 with OPENAI_API_KEY, anthropic:claude-sonnet-4-6 with',
    'ANTHROPIC_API_KEY, or a local Ollama with OPENAI_BASE_URL; see the README) and start the playground again.',
  ].join('\n');
}

/**
 * The playground's one connector; its start prints the page's address for a human, plainly,
 * and, with the demo model, that it is the demo. `modelDefaulted`: no MODEL was set.
 */
export async function playgroundConnectors(setup: {
  config: Config;
  core: Core;
  logger: Logger;
  secrets?: SecretMasker;
  modelDefaulted?: boolean;
}): Promise<ChatConnector[]> {
  const web = await WebConnector.create(setup);
  const notice = demoModelNotice(setup.config.MODEL, setup.modelDefaulted ?? false);
  return [
    {
      name: web.name,
      start: async () => {
        const started = await web.start();
        // For the person who ran the command: the address with its access token. The JSON log
        // line has the address only (the logger masks the token).
        console.log(`\nPlayground: open ${web.url}\n${notice ? `\n${notice}\n` : ''}`);
        return started;
      },
      stopTaking: () => web.stopTaking(),
      close: () => web.close(),
    },
  ];
}
