// `npm run doctor` (`npm start -- --check`): everything a start would check, and the model,
// without starting the bot. One line per check, ✓ / ! / ✗ with the reason; exit 0 when
// nothing failed (warnings allowed), 1 otherwise. Nothing is created on disk: no store, no
// workspace, no MCP server started (their file is only read).
//
//   configuration   every problem loadConfig finds, and what a run needs (MODEL, keys)
//   Slack, Discord  the token, at the configured API URL (src/app/preflight.ts)
//   model           each provider's model list, with the configured key: GET {base}/models
//                   (OpenAI-compatible) or GET {base}/v1/models (Anthropic). A model the
//                   list lacks is a warning: some servers list only part of what they serve.
//   MCP             the MCP_CONFIG file parses; servers with an unset ${VAR} are warnings
import { resolve } from 'node:path';
import { ConfigError, configStartProblems, loadConfig, type Config } from '../config.js';
import { maskSecrets } from '../logger.js';
import { loadMcpConfig } from '../mcp/index.js';
import { configSecretValues, SecretMasker } from '../secrets/index.js';
import { resolveModelRef, type ProviderName } from '../providers/index.js';
import { call, checkPlatforms, whatRunsWhere, type CheckOptions, type CheckResult } from './preflight.js';
import { wantedPlatforms } from './connectors.js';

const MARK: Record<CheckResult['status'], string> = { ok: '✓', warn: '!', fail: '✗' };
const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** Run every check, print one line each, resolve with the exit code. */
export async function runDoctor(env: NodeJS.ProcessEnv, print: (line: string) => void = console.log, options: CheckOptions = {}): Promise<number> {
  const results: CheckResult[] = [];
  // A server's error may quote the key it refused.
  const secrets = new SecretMasker(configSecretValues(env as unknown as Config));
  const show = (result: CheckResult): void => {
    results.push(result);
    print(secrets.mask(maskSecrets(`${MARK[result.status]} ${result.name}: ${result.detail}`) as string));
  };
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) show({ name: 'configuration', status: 'fail', detail: problem });
    print('Fix the configuration, then run the check again: the platforms and the model were not tried.');
    return 1;
  }
  const problems = configStartProblems(config);
  for (const problem of problems) show({ name: 'configuration', status: 'fail', detail: problem });
  if (problems.length === 0) show({ name: 'configuration', status: 'ok', detail: 'every variable is valid' });

  if (wantedPlatforms(config).length === 0) {
    show({ name: 'chat platform', status: 'fail', detail: 'none configured: set SLACK_BOT_TOKEN with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET, and/or DISCORD_TOKEN (or try npm run playground)' });
  }
  const checks = await Promise.all([checkPlatforms(config, options), checkModels(config, options)]);
  for (const result of checks.flat()) show(result);
  show(await checkMcp(config, env));

  const failed = results.some((result) => result.status === 'fail');
  const where = whatRunsWhere(config);
  print(`${failed ? 'Not ready' : 'Ready'}: model ${String(where.model)}, store ${String(where.store)}, workspace ${String(where.workspace)}, shell sandbox ${String(where.shellSandbox)}, permission mode ${String(where.permissionMode)}`);
  return failed ? 1 : 0;
}

/** Each provider a configured model uses is asked once for its model list. */
export async function checkModels(config: Config, options: CheckOptions = {}): Promise<CheckResult[]> {
  const names = [config.MODEL, config.COMPACTION_MODEL, ...(config.MODELS ?? '').split(',')].map((name) => name?.trim()).filter((name): name is string => Boolean(name));
  const byProvider = new Map<ProviderName, string[]>();
  for (const name of new Set(names)) {
    const ref = resolveModelRef(name);
    byProvider.set(ref.provider, [...(byProvider.get(ref.provider) ?? []), ref.model]);
  }
  return (await Promise.all([...byProvider].map(([provider, models]) => checkProvider(config, provider, models, options)))).flat();
}

async function checkProvider(config: Config, provider: ProviderName, models: string[], options: CheckOptions): Promise<CheckResult[]> {
  const anthropic = provider === 'anthropic';
  const vendor = anthropic ? 'Anthropic' : 'the OpenAI-compatible server';
  const keyName = anthropic ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
  const key = anthropic ? config.ANTHROPIC_API_KEY : config.OPENAI_API_KEY;
  const url = anthropic
    ? `${(config.ANTHROPIC_BASE_URL ?? DEFAULT_ANTHROPIC_BASE_URL).replace(/\/+$/, '')}/v1/models`
    : `${(config.OPENAI_BASE_URL ?? DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, '')}/models`;
  const headers: Record<string, string> = anthropic ? { 'anthropic-version': '2023-06-01', ...(key ? { 'x-api-key': key } : {}) } : key ? { authorization: `Bearer ${key}` } : {};
  const name = `model ${provider}`;
  const answer = await call(anthropic ? 'Anthropic' : 'the model server', url, { headers }, options);
  if ('unreachable' in answer) return [{ name, status: 'fail', detail: answer.unreachable }];
  const body = answer.json as { data?: { id?: unknown }[]; error?: { message?: unknown } | string } | undefined;
  const reason = typeof body?.error === 'string' ? body.error : typeof body?.error?.message === 'string' ? body.error.message : undefined;
  if (answer.status === 401 || answer.status === 403) {
    return [{ name, status: 'fail', detail: `${vendor} at ${url} did not accept ${keyName} (${answer.status}${reason ? `: ${reason}` : ''})` }];
  }
  if (answer.status === 404 && !anthropic && config.OPENAI_BASE_URL) {
    return [{ name, status: 'warn', detail: `${url} answered 404: the server is reachable but lists no models, so ${models.join(', ')} could not be checked` }];
  }
  if (answer.status !== 200 || !Array.isArray(body?.data)) {
    return [{ name, status: 'fail', detail: `${url} answered HTTP ${answer.status}${reason ? ` (${reason})` : ''}, not a model list: check ${anthropic ? 'ANTHROPIC_BASE_URL' : 'OPENAI_BASE_URL'}` }];
  }
  const listed = new Set(body.data.map((entry) => String(entry.id)));
  return models.map((model) =>
    listed.has(model)
      ? { name: `model ${provider}:${model}`, status: 'ok' as const, detail: `${url} lists it` }
      : { name: `model ${provider}:${model}`, status: 'warn' as const, detail: `reachable at ${url}, but its ${listed.size} listed models do not include "${model}": check the name` },
  );
}

async function checkMcp(config: Config, env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const path = resolve(config.MCP_CONFIG);
  try {
    const mcp = await loadMcpConfig(path, env, { unsetVariables: 'skip' });
    const skipped = mcp.skipped ?? [];
    if (skipped.length > 0) {
      return { name: 'MCP', status: 'warn', detail: skipped.map((entry) => `server "${entry.server}" ${entry.error}`).join('; ') };
    }
    return { name: 'MCP', status: 'ok', detail: mcp.servers.length === 0 ? `no servers (${config.MCP_CONFIG})` : `${mcp.servers.map((server) => server.name).join(', ')} configured (not started by this check)` };
  } catch (error) {
    return { name: 'MCP', status: 'fail', detail: error instanceof Error ? error.message.replace(/\n/g, ' ') : String(error) };
  }
}
