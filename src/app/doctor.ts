// `npm run doctor` (`npm start -- --check`): everything a start would check, and the model,
// without starting the bot. One line per check, ✓ / ! / ✗ with the reason, then what would
// run where, then the verdict; exit 0 when nothing failed (warnings allowed), 1 otherwise.
// Nothing is created on disk: no store, no workspace, no MCP server started (their file is
// only read).
//
//   .env            the file main.ts reads: missing is fine; readable by others is a warning,
//                   as at start (src/secrets/env-file.ts)
//   configuration   every problem loadConfig finds, and what a run needs (MODEL, keys)
//   Slack, Discord  the token, at the configured API URL (src/app/preflight.ts)
//   Discord servers the home servers (DISCORD_GUILD_ID); unset, a public application is a
//                   warning that says how to close it (src/app/discord-home.ts)
//   model           each provider's model list, with the configured key: GET {base}/models
//                   (OpenAI-compatible) or GET {base}/v1/models (Anthropic). A model the
//                   list lacks is a warning: some servers list only part of what they serve.
//                   The built-in demo model (MODEL=demo) has no server: nothing is asked.
//   shell sandbox   the start's own decision (src/sandbox/shell-startup.ts): the bubblewrap
//                   probe, SHELL_SANDBOX, the workspace against the bot's files, SHELL_ENV and
//                   SHELL_READ_PATHS; run_shell withheld or unconfined is a warning
//   MCP             the MCP_CONFIG file parses; servers with an unset ${VAR} are warnings
//   PROFILES        the profiles file, as a start reads it: each problem a ✗ line, or the
//                   profiles and what each matches (src/app/doctor-profiles.ts)
//   metrics         where GET /metrics is answered and who may read it, and whether its port
//                   on 127.0.0.1 is free (src/app/doctor-metrics.ts)
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, configStartProblems, loadConfig, type Config } from '../config.js';
import { maskSecrets } from '../logger.js';
import { loadMcpConfig } from '../mcp/index.js';
import { prepareShell } from '../sandbox/shell-startup.js';
import { parseGrantRoots } from '../tools/grant-rules.js';
import { configSecretValues, envFileWarning, SecretMasker } from '../secrets/index.js';
import { resolveModelRef, type ProviderName } from '../providers/index.js';
import type { VendorName } from '../providers/model-ref.js';
import { checkDiscordHome } from './discord-home.js';
import { checkMetrics } from './doctor-metrics.js';
import { checkProfiles } from './doctor-profiles.js';
import { call, checkPlatforms, whatRunsWhere, type CheckOptions, type CheckResult } from './preflight.js';
import { wantedPlatforms } from './connectors.js';

const MARK: Record<CheckResult['status'], string> = { ok: '✓', warn: '!', fail: '✗' };
const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
const DEMO_CHECK: CheckResult = {
  name: 'model demo',
  status: 'ok',
  detail: 'the built-in demo model: scripted answers, no AI, nothing to reach',
};

export interface DoctorOptions extends CheckOptions {
  /** The `.env` file main.ts reads (default: `.env` in the working directory). */
  envFile?: string;
  /** The bwrap executable for the sandbox probe (default: `bwrap` on PATH). */
  bwrapPath?: string;
}

/** Run every check, print one line each, resolve with the exit code. */
export async function runDoctor(
  env: NodeJS.ProcessEnv,
  print: (line: string) => void = console.log,
  options: DoctorOptions = {},
): Promise<number> {
  const results: CheckResult[] = [];
  // A server's error may quote the key it refused.
  const secrets = new SecretMasker(configSecretValues(env as unknown as Config));
  const show = (result: CheckResult): void => {
    results.push(result);
    print(secrets.mask(maskSecrets(`${MARK[result.status]} ${result.name}: ${result.detail}`) as string));
  };
  show(checkEnvFile(options.envFile ?? '.env'));
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) show({ name: 'configuration', status: 'fail', detail: problem });
    print(
      'Not ready: fix the configuration above, then run the check again (the platforms, the model and the shell sandbox were not tried).',
    );
    return 1;
  }
  const problems = configStartProblems(config);
  for (const problem of problems) show({ name: 'configuration', status: 'fail', detail: problem });
  if (problems.length === 0) show({ name: 'configuration', status: 'ok', detail: 'every variable is valid' });

  if (wantedPlatforms(config).length === 0) {
    show({
      name: 'chat platform',
      status: 'fail',
      detail:
        'none configured: set SLACK_BOT_TOKEN with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET, and/or DISCORD_TOKEN (or try npm run playground)',
    });
  }
  const checks = await Promise.all([
    platformChecks(config, options),
    checkModels(config, options),
    checkShell(config, options),
  ]);
  for (const result of checks.flat()) show(result);
  show(await checkMcp(config, env));
  show(await checkMetrics(config));
  for (const result of await checkProfiles(config, env)) show(result);

  const where = whatRunsWhere(config);
  print(
    `Setup: model ${String(where.model)}, store ${String(where.store)}, workspace ${String(where.workspace)}, permission mode ${String(where.permissionMode)}`,
  );
  print(verdict(results));
  return results.some((result) => result.status === 'fail') ? 1 : 0;
}

/** The platforms' token checks; once Discord accepted its token, its home servers too. */
async function platformChecks(config: Config, options: CheckOptions): Promise<CheckResult[]> {
  const platforms = await checkPlatforms(config, options);
  const discord = platforms.find((result) => result.name === 'Discord');
  return discord?.status === 'ok' ? [...platforms, await checkDiscordHome(config, options)] : platforms;
}

/** The last line: whether `npm start` would start, in words that match the marks above. */
function verdict(results: CheckResult[]): string {
  const count = (status: CheckResult['status']): number => results.filter((result) => result.status === status).length;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const failed = count('fail');
  const warned = count('warn');
  if (failed > 0)
    return `Not ready: ${plural(failed, 'check')} failed (✗ above); fix ${failed === 1 ? 'it' : 'them'} and run the check again.`;
  if (warned > 0) return `Ready, with ${plural(warned, 'warning')} (! above): npm start would start the bot.`;
  return `Ready: all ${results.length} checks passed; npm start would start the bot.`;
}

/** `.env` holds every key: a file others can read is what start-up warns about. */
export function checkEnvFile(path: string): CheckResult {
  const file = resolve(path);
  if (!existsSync(file))
    return { name: '.env', status: 'ok', detail: `none at ${file}; the settings come from the environment` };
  // Windows: modes do not describe who may read a file.
  if (process.platform === 'win32') return { name: '.env', status: 'ok', detail: `${file} read` };
  const warning = envFileWarning(file);
  if (warning) return { name: '.env', status: 'warn', detail: warning };
  return {
    name: '.env',
    status: 'ok',
    detail: `${file} is private to its owner (mode ${(statSync(file).mode & 0o777).toString(8).padStart(3, '0')})`,
  };
}

/**
 * Where shell commands would run, decided as the start decides it (the same probe), without
 * creating the workspace: the sandbox is ✓; run_shell withheld (SHELL_SANDBOX=auto where
 * bubblewrap cannot run) or unconfined (off) is a warning; what stops a start is ✗.
 */
export async function checkShell(config: Config, options: DoctorOptions = {}): Promise<CheckResult> {
  try {
    // Checked where the start checks it, before the sandbox is probed: a bad entry stops a start.
    parseGrantRoots(config.GRANT_ROOTS);
    const shell = await prepareShell(config, { bwrapPath: options.bwrapPath, createWorkspace: false });
    return { name: 'shell sandbox', status: shell.warn ? 'warn' : 'ok', detail: shell.message };
  } catch (error) {
    return { name: 'shell sandbox', status: 'fail', detail: error instanceof Error ? error.message : String(error) };
  }
}

/** Each provider a configured model uses is asked once for its model list. */
export async function checkModels(config: Config, options: CheckOptions = {}): Promise<CheckResult[]> {
  const names = [config.MODEL, config.COMPACTION_MODEL, ...(config.MODELS ?? '').split(',')]
    .map((name) => name?.trim())
    .filter((name): name is string => Boolean(name));
  const byProvider = new Map<ProviderName, string[]>();
  for (const name of new Set(names)) {
    const ref = resolveModelRef(name);
    byProvider.set(ref.provider, [...(byProvider.get(ref.provider) ?? []), ref.model]);
  }
  const checks = [...byProvider].map(([provider, models]) =>
    provider === 'demo' ? Promise.resolve([DEMO_CHECK]) : checkProvider(config, provider, models, options),
  );
  return (await Promise.all(checks)).flat();
}

async function checkProvider(
  config: Config,
  provider: VendorName,
  models: string[],
  options: CheckOptions,
): Promise<CheckResult[]> {
  const anthropic = provider === 'anthropic';
  const vendor = anthropic ? 'Anthropic' : 'the OpenAI-compatible server';
  const keyName = anthropic ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
  const key = anthropic ? config.ANTHROPIC_API_KEY : config.OPENAI_API_KEY;
  const url = anthropic
    ? `${(config.ANTHROPIC_BASE_URL ?? DEFAULT_ANTHROPIC_BASE_URL).replace(/\/+$/, '')}/v1/models`
    : `${(config.OPENAI_BASE_URL ?? DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, '')}/models`;
  const headers: Record<string, string> = anthropic
    ? { 'anthropic-version': '2023-06-01', ...(key ? { 'x-api-key': key } : {}) }
    : key
      ? { authorization: `Bearer ${key}` }
      : {};
  const name = `model ${provider}`;
  const answer = await call(anthropic ? 'Anthropic' : 'the model server', url, { headers }, options);
  if ('unreachable' in answer) return [{ name, status: 'fail', detail: answer.unreachable }];
  const body = answer.json as { data?: { id?: unknown }[]; error?: { message?: unknown } | string } | undefined;
  const reason =
    typeof body?.error === 'string'
      ? body.error
      : typeof body?.error?.message === 'string'
        ? body.error.message
        : undefined;
  if (answer.status === 401 || answer.status === 403) {
    return [
      {
        name,
        status: 'fail',
        detail: `${vendor} at ${url} did not accept ${keyName} (${answer.status}${reason ? `: ${reason}` : ''})`,
      },
    ];
  }
  if (answer.status === 404 && !anthropic && config.OPENAI_BASE_URL) {
    return [
      {
        name,
        status: 'warn',
        detail: `${url} answered 404: the server is reachable but lists no models, so ${models.join(', ')} could not be checked`,
      },
    ];
  }
  if (answer.status !== 200 || !Array.isArray(body?.data)) {
    return [
      {
        name,
        status: 'fail',
        detail: `${url} answered HTTP ${answer.status}${reason ? ` (${reason})` : ''}, not a model list: check ${anthropic ? 'ANTHROPIC_BASE_URL' : 'OPENAI_BASE_URL'}`,
      },
    ];
  }
  const listed = new Set(body.data.map((entry) => String(entry.id)));
  return models.map((model) =>
    listed.has(model)
      ? { name: `model ${provider}:${model}`, status: 'ok' as const, detail: `${url} lists it` }
      : {
          name: `model ${provider}:${model}`,
          status: 'warn' as const,
          detail: `reachable at ${url}, but its ${listed.size} listed models do not include "${model}": check the name`,
        },
  );
}

async function checkMcp(config: Config, env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const path = resolve(config.MCP_CONFIG);
  try {
    const mcp = await loadMcpConfig(path, env, { unsetVariables: 'skip' });
    const skipped = mcp.skipped ?? [];
    if (skipped.length > 0) {
      return {
        name: 'MCP',
        status: 'warn',
        detail: skipped.map((entry) => `server "${entry.server}" ${entry.error}`).join('; '),
      };
    }
    return {
      name: 'MCP',
      status: 'ok',
      detail:
        mcp.servers.length === 0
          ? `no servers (${config.MCP_CONFIG})`
          : `${mcp.servers.map((server) => server.name).join(', ')} configured (not started by this check)`,
    };
  } catch (error) {
    return {
      name: 'MCP',
      status: 'fail',
      detail: error instanceof Error ? error.message.replace(/\n/g, ' ') : String(error),
    };
  }
}
