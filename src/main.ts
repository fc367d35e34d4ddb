// `npm start`: read the configuration and start every chat connector that is configured.
// With nothing configured it says exactly what to set and exits non-zero.
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from './config.js';

/** The connectors this build can start, and what each needs. */
const CONNECTORS: { name: string; configured: (config: Config) => boolean; needs: string }[] = [];

function main(): number {
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
  const ready = CONNECTORS.filter((connector) => connector.configured(config));
  if (ready.length === 0) {
    console.error(
      [
        'Nothing to start: no chat connector is available and configured.',
        CONNECTORS.length === 0
          ? 'This build contains the agent engine and the model providers; the Slack and Discord connectors are not built yet (see README, "Status").'
          : `Configure one of: ${CONNECTORS.map((c) => `${c.name} (${c.needs})`).join('; ')}.`,
      ].join('\n'),
    );
    return 1;
  }
  return 0;
}

process.exitCode = main();
