// `npm start`: read the configuration (environment and `.env`) and run the bot
// (src/app/run-bot.ts: start-up, and a shutdown on SIGTERM / SIGINT that keeps every
// conversation where it was). With nothing configured it says exactly what to set and exits 1.
import { existsSync } from 'node:fs';
import { runBot } from './app/run-bot.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { configSecretValues, envFileWarning, SecretMasker } from './secrets/index.js';

async function main(): Promise<number> {
  if (existsSync('.env')) process.loadEnvFile('.env');
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
  const logger = createLogger(config.LOG_LEVEL, undefined, secrets);
  const envWarning = envFileWarning('.env');
  if (envWarning) logger.warn({}, envWarning);
  return runBot({ config, logger, secrets });
}

const code = await main();
// Everything was closed in order; a stray handle (an SDK's keep-alive socket) must not keep
// a stopped bot alive.
process.exit(code);
