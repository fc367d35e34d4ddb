// What a start brings into memory: the bot as `npm start` runs it, in
// Slack HTTP mode on SQLite, with no MCP servers and JSON logs, loads what it runs and
// nothing else. Before, every start loaded discord.js (with two more copies of undici), the
// MCP SDK, ioredis, pino-pretty, the Anthropic SDK, the HTML tokenizer, the playground and
// the doctor, and ran the TypeScript sources through tsx: 207 MB before the first message,
// about 100 MB now (`npm run bench -- process`). Which modules a process loaded is exact,
// where its memory is not, so that is what this test holds the start to
// (test/support/module-log.mjs writes it down; a chunk of the bundle stands for the source
// files it holds, so the bundle keeps a lazily loaded room out of the start only if it is
// split off into a chunk of its own).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { build, BUNDLE_FOLDER } from '../../bin/build.mjs';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { sendEvent } from '../fakes/slack-signer.js';
import { slackHttpEnv, startBotFakes } from '../support/bot-fakes.js';
import { BotProcess } from '../support/bot-process.js';
import { waitFor } from '../support/engine-kit.js';

const MODULE_LOG_HOOK = pathToFileURL(new URL('../support/module-log.mjs', import.meta.url).pathname).href;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The packages (`node_modules/<name>`) and the bot's own source files (`src/…`, `connectors/…`)
 * process `pid` loaded, from a module log; `chunks`, the bundle's files it loaded. A chunk of
 * the bundle (bin/build.mjs) stands for the source files its build's modules.json says it holds.
 */
async function loaded(
  log: string,
  pid: number,
): Promise<{ packages: Set<string>; own: string[]; chunks: string[]; unbundledOwn: string[]; sources: string[] }> {
  const lines = (await readFile(log, 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line.startsWith(`${pid} `))
    .map((line) => line.slice(line.indexOf(' ') + 1).replace(/^file:\/\//, ''));
  const packages = new Set<string>();
  const own = new Set<string>();
  const chunks: string[] = [];
  const unbundledOwn: string[] = [];
  const modulesOf = new Map<string, Record<string, string[]>>();
  const sources: string[] = [];
  for (const line of lines) {
    const chunk = /^(.*\/dist\/[0-9a-f]+\/bundle)\/([^/]+\.js)$/.exec(line);
    if (chunk) {
      const [, folder, name] = chunk as unknown as [string, string, string];
      if (!modulesOf.has(folder))
        modulesOf.set(
          folder,
          JSON.parse(await readFile(join(folder, 'modules.json'), 'utf8')) as Record<string, string[]>,
        );
      chunks.push(name);
      sources.push(...(modulesOf.get(folder)![name] ?? []));
    } else {
      sources.push(line);
      if (/\/(src|connectors)\/.*\.(ts|js)$/.test(line) && !line.includes('/node_modules/')) unbundledOwn.push(line);
    }
  }
  for (const source of sources) {
    const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
    if (inPackage) packages.add(inPackage[1]!);
    else if (/^(src|connectors)\//.test(source)) own.add(source);
  }
  return { packages, own: [...own], chunks, unbundledOwn, sources };
}

/**
 * What a Slack-only bot with no MCP servers, on SQLite, logging JSON, with no PROFILES, has no
 * use for (sharp and unpdf: not before a shared image or PDF; Express: Bolt's package index
 * loads its Express receiver, which the bot never uses).
 */
const NEVER_LOADED = [
  'express',
  'body-parser',
  'yaml',
  'discord.js',
  '@discordjs/rest',
  '@discordjs/ws',
  '@modelcontextprotocol/sdk',
  'ioredis',
  'pino-pretty',
  '@anthropic-ai/sdk',
  'htmlparser2',
  'tsx',
  'esbuild',
  'sharp',
  'unpdf',
];

describe('a start loads only what it runs', () => {
  it(
    'a Slack bot in HTTP mode loads no other platform, no MCP SDK, no Redis, no pretty printer, no other vendor, no TypeScript loader; its model SDK comes with the first call',
    { timeout: 60_000 },
    async () => {
      const fakes = await startBotFakes(cleanups);
      const log = join(fakes.dir, 'modules.log');
      const bot = await BotProcess.start(
        slackHttpEnv(fakes, 'secret', {
          LOG_FORMAT: 'json',
          NODE_OPTIONS: `--import ${MODULE_LOG_HOOK}`,
          MODULE_LOG: log,
        }),
        fakes.dir,
      );
      cleanups.push(() => bot.kill());

      const idle = await loaded(log, bot.pid!);
      // The log works: the platform's SDK and the bot's Slack connector are in it.
      expect(idle.packages).toContain('@slack/bolt');
      expect(idle.own).toContain('connectors/slack/slack-connector.ts');
      // The bot runs bundled: its entry is the bundle's, and none of its own modules loads on its own (as TypeScript through tsx, or one file of a build).
      expect(idle.chunks).toContain('main.js');
      expect(idle.unbundledOwn).toEqual([]);
      expect([...idle.packages].filter((name) => NEVER_LOADED.includes(name) || name === 'openai')).toEqual([]);
      expect(
        idle.own.filter((file) =>
          /connectors\/(discord|web)\/|app\/doctor|mcp\/connection|cluster\/redis-keyv-store|tools\/html-text/.test(
            file,
          ),
        ),
      ).toEqual([]);
      // No PDF shared yet: the PDF reader's spawner and its memory watch wait for the first one.
      expect(idle.own.filter((file) => /files\/(pdf-text|process-memory)/.test(file))).toEqual([]);
      // No traces endpoint set: no OpenTelemetry package, and none of the traces' own modules but the settings.
      // (prom-client's chunk holds the OpenTelemetry API facade it asks for at a scrape, below.)
      expect(
        [...idle.packages].filter((name) => name.startsWith('@opentelemetry/') && name !== '@opentelemetry/api'),
      ).toEqual([]);
      expect(idle.own.filter((file) => /ops\/traces\/trace-(pipeline|sink|content)/.test(file))).toEqual([]);
      // No PROFILES: no YAML reader, no profiles schema, no file watch.
      expect(idle.own.filter((file) => /profiles\/profile-(file|schema|watch)/.test(file))).toEqual([]);
      // Of zod's locales only the English messages the bot shows, and none of iconv-lite's code pages.
      expect(idle.sources.filter((file) => /node_modules\/zod\/.*locales\/(?!en\.js$)/.test(file))).toEqual([]);
      expect(idle.sources.filter((file) => /node_modules\/iconv-lite\/encodings\//.test(file))).toEqual([]);

      const mention = appMention({ text: 'hello there' });
      await sendEvent(bot.eventsUrl, 'secret', eventCallback(mention));
      await waitFor(
        () =>
          fakes.slack
            .thread(SLACK_IDS.channelId, mention.ts)
            .some((message) => message.user === SLACK_IDS.botUserId && message.text.includes('hello there')),
        20_000,
      );
      bot.signal('SIGTERM');
      expect(await bot.exited).toBe(0);

      // Over its whole life, the CommonJS modules included (written at exit): the model's SDK
      // was loaded for the answer, and the rest still never.
      const life = await loaded(log, bot.pid!);
      expect(life.packages).toContain('openai');
      expect([...life.packages].filter((name) => NEVER_LOADED.includes(name))).toEqual([]);
      // prom-client asks for the OpenTelemetry API (a no-op facade, for exemplars) as it scrapes
      // process metrics, since the API is installed; the SDK and the exporters are never loaded.
      expect(
        [...life.packages].filter((name) => name.startsWith('@opentelemetry/') && name !== '@opentelemetry/api'),
      ).toEqual([]);
    },
  );

  it(
    "Socket Mode's undici (about 1 MB) and Bolt's OAuth installer are bundled to run at their first use: a bot in HTTP mode without OAuth never runs them",
    { timeout: 60_000 },
    async () => {
      // The chunk stands for all it holds, so the module log cannot tell code run from code only
      // compiled: the bundle's text can. Socket Mode's own use is tested through the real start
      // (test/slack/slack-socket-process.test.ts).
      const folder = join(await build(), BUNDLE_FOLDER);
      const chunks = JSON.parse(await readFile(join(folder, 'modules.json'), 'utf8')) as Record<string, string[]>;
      const slackChunk = Object.keys(chunks).find((name) =>
        chunks[name]!.some((source) => source.includes('node_modules/@slack/socket-mode/dist/src/SlackWebSocket.js')),
      );
      const text = await readFile(join(folder, slackChunk!), 'utf8');
      // esbuild turns a require of a bundled CommonJS module into a call of its own function.
      const lazy = [
        ...text.matchAll(
          /var (\w+) = new Proxy\(\{\}, \{ get: \(_, key\) => \(\1\$loaded \?\?= (require_\w+)\(\)\)\[key\] \}\);/g,
        ),
      ];
      expect(lazy.map(([, name]) => name).sort()).toEqual(['oauth_1', 'oauth_1', 'undici_1', 'undici_1']);
      for (const [, , requireIt] of lazy)
        expect(text.match(new RegExp(`[^?]= ${requireIt}\\(\\);`, 'g')) ?? []).toEqual([]);
    },
  );

  it(
    'a capability switched off loads nothing: METRICS=off brings no prom-client and no metrics room',
    { timeout: 60_000 },
    async () => {
      const fakes = await startBotFakes(cleanups);
      const log = join(fakes.dir, 'modules.log');
      const bot = await BotProcess.start(
        slackHttpEnv(fakes, 'secret', {
          LOG_FORMAT: 'json',
          METRICS: 'off',
          NODE_OPTIONS: `--import ${MODULE_LOG_HOOK}`,
          MODULE_LOG: log,
        }),
        fakes.dir,
      );
      cleanups.push(() => bot.kill());
      const mention = appMention({ text: 'hello there' });
      await sendEvent(bot.eventsUrl, 'secret', eventCallback(mention));
      await waitFor(
        () =>
          fakes.slack
            .thread(SLACK_IDS.channelId, mention.ts)
            .some((message) => message.user === SLACK_IDS.botUserId && message.text.includes('hello there')),
        20_000,
      );
      bot.signal('SIGTERM');
      expect(await bot.exited).toBe(0);

      // Over its whole life, a turn answered included.
      const life = await loaded(log, bot.pid!);
      expect(life.packages).toContain('@slack/bolt');
      expect(life.packages).toContain('openai');
      expect(
        [...life.packages].filter(
          (name) => name === 'prom-client' || name.startsWith('@opentelemetry/') || NEVER_LOADED.includes(name),
        ),
      ).toEqual([]);
      expect(
        life.own.filter((file) =>
          /ops\/metrics\/(metrics-sink|metric-families|hot-series|index)|ops\/traces\/trace-(pipeline|sink|content)|profiles\/profile-(file|schema|watch)/.test(
            file,
          ),
        ),
      ).toEqual([]);
    },
  );
});
