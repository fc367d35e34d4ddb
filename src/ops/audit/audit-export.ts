// `npm run audit` (`npm start -- --audit`): the audit trail as JSON Lines on stdout, one
// record per line, oldest first, read from the store the bot is configured with (the same
// environment and `.env` as `npm start`; main.ts dispatches here). It only reads: nothing is
// written, no session is touched, so it may run beside a running bot.
//
// Exit codes: 0 done (no record is not an error), 2 bad arguments or configuration (the
// reason on stderr, with the usage), 1 the store could not be read.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { clusterKeys } from '../../cluster/cluster-keys.js';
import { clustered, ConfigError, loadConfig, storeUrlOf, type Config } from '../../config.js';
import { openKeyvStore } from '../../store/keyv-factory.js';
import { auditStore } from './audit-store.js';
import { AUDIT_USAGE, parseAuditArgs, readAudit } from './audit-query.js';

export interface ExportStreams {
  /** Where the records go (default process.stdout); resolves once the chunk is handed on. */
  out: (chunk: string) => Promise<void>;
  err: (line: string) => void;
}

const defaultStreams: ExportStreams = {
  out: (chunk) => new Promise((done, fail) => process.stdout.write(chunk, (error) => (error ? fail(error) : done()))),
  err: (line) => console.error(line),
};

export async function runAuditExport(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  streams: ExportStreams = defaultStreams,
): Promise<number> {
  const args = parseAuditArgs(argv);
  if (!args.ok) {
    streams.err(`npm run audit: ${args.error}\n${AUDIT_USAGE}`);
    return 2;
  }
  if (args.help) {
    await streams.out(
      `${AUDIT_USAGE}\nPrints the audit trail as JSON Lines, oldest first. --user matches who acted (started, decided, stopped, switched, granted, revoked, continued, forgot).\n`,
    );
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    streams.err(error.message);
    return 2;
  }
  const url = storeUrlOf(config);
  // A store file that is not there is a wrong folder or STORE_URL, not an empty trail: opening it would create it.
  if (/^sqlite:\/\//i.test(url) && !existsSync(resolve(url.slice('sqlite://'.length)))) {
    streams.err(
      `npm run audit: no store at ${resolve(url.slice('sqlite://'.length))} (STORE_URL); run it where the bot runs, with its .env`,
    );
    return 1;
  }
  let opened: Awaited<ReturnType<typeof openKeyvStore>>;
  try {
    opened = await openKeyvStore(url);
  } catch (error) {
    streams.err(`npm run audit: ${(error as Error).message}`);
    return 1;
  }
  try {
    const cluster = clustered(config) && opened.redis ? { redis: opened.redis, keys: clusterKeys() } : undefined;
    const { unreadable } = await readAudit(auditStore(opened.keyv, cluster), args.query, (records) =>
      streams.out(records.map((record) => `${JSON.stringify(record)}\n`).join('')),
    );
    if (unreadable > 0) streams.err(`npm run audit: skipped ${unreadable} stored entries that are not audit records`);
    return 0;
  } catch (error) {
    streams.err(`npm run audit: could not read the audit trail: ${(error as Error).message}`);
    return 1;
  } finally {
    await opened.close();
  }
}
