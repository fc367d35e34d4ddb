// `npm start`: read the configuration (environment and `.env`) and run the bot
// (src/app/run-bot.ts: start-up, and a shutdown on SIGTERM / SIGINT that keeps every
// conversation where it was). With nothing configured it says exactly what to set and exits 1.
//
// What only one mode needs (the doctor's checks, the playground's web connector) is imported
// when that mode runs, so the bot does not hold it in memory.
import { existsSync } from 'node:fs';
import { runBot } from './app/run-bot.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { isDemoModel } from './providers/model-ref.js';
import { configSecretValues, envFileWarning, SecretMasker } from './secrets/index.js';

async function main(): Promise<number> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  // `npm run doctor`: check the configuration, the platforms and the model; start nothing.
  if (process.argv.includes('--check')) return (await import('./app/doctor.js')).runDoctor(process.env);
  // `npm run audit`: the audit trail as JSON Lines (src/ops/audit/audit-export.ts); starts nothing.
  if (process.argv.includes('--audit'))
    return (await import('./ops/audit/audit-export.js')).runAuditExport(
      process.argv.slice(process.argv.indexOf('--audit') + 1),
      process.env,
    );
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  const secrets = new SecretMasker(configSecretValues(config));
  // Every log line is masked with the configured secrets' values; the core adds the MCP servers' ones.
  const logger = createLogger(config.LOG_LEVEL, undefined, secrets, { format: config.LOG_FORMAT });
  const envWarning = envFileWarning('.env');
  if (envWarning) logger.warn({}, envWarning);
  if (process.argv.includes('--playground')) {
    // `npm run playground`: only the local web page (connectors/web/), on its own store by default.
    // Without MODEL it runs the built-in demo model, and says so (connectors/web/playground.ts).
    const { playgroundConfig, playgroundConnectors } = await import('../connectors/web/playground.js');
    const settings = playgroundConfig(config, process.env);
    const modelDefaulted = !config.MODEL;
    return runBot({
      config: settings,
      logger,
      secrets,
      requireConnectors: false,
      connectors: (core) => playgroundConnectors({ config: settings, core, logger, secrets, modelDefaulted }),
    });
  }
  // MODEL=demo is allowed for the bot too, by name only (without MODEL it still refuses to
  // start): it checks a Slack or Discord setup end to end before any key is at hand. It is
  // never a silent default, and every start says what it is.
  if (isDemoModel(config.MODEL))
    logger.warn(
      { model: config.MODEL },
      'MODEL=demo: the bot answers with the built-in demo model (scripted answers, no AI); set MODEL to a real model for real use',
    );
  return runBot({ config, logger, secrets });
}

const code = await main();
// Everything was closed in order; a stray handle (an SDK's keep-alive socket) must not keep
// a stopped bot alive.
process.exit(code);
