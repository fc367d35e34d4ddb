// The MCP server list: `mcp.json` in the `mcpServers` format that Claude Desktop, Cursor and
// VS Code share, parsed into typed entries. The one idea: the file is trusted text but not
// trusted shape, so every entry is validated and every problem is reported at once, naming
// the server and the field; secrets stay out of the file as `${VAR}` references in `env`
// and `headers` values, expanded from the process environment here and nowhere else.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';

/**
 * Server names become tool-name prefixes (`<server>__<tool>`), and providers accept tool
 * names of `^[a-zA-Z0-9_-]{1,64}$` only. Capping the prefix at 32 leaves every tool at
 * least 30 characters of its own name.
 */
const SERVER_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,32}$/;

interface StdioServerConfig {
  name: string;
  transport: 'stdio';
  command: string;
  args: string[];
  /** Only these (plus the SDK's short safe list: HOME, PATH, USER…) reach the child. */
  env: Record<string, string>;
  cwd?: string;
}

interface HttpServerConfig {
  name: string;
  transport: 'http';
  url: URL;
  headers: Record<string, string>;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export interface McpConfig {
  /** In file order; disabled entries are left out. */
  servers: McpServerConfig[];
  /**
   * With `unsetVariables: 'skip'`: servers left out because a `${VAR}` they use is not set,
   * each with the reason. The manager reports them like servers that failed to start.
   */
  skipped?: { server: string; error: string }[];
}

/** @internal */
export class McpConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source} is invalid:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
    this.name = 'McpConfigError';
  }
}

const stringMap = z.record(z.string(), z.string());

// Strict objects: a typo such as `"arg": [...]` is reported instead of silently ignored.
// `type` and `disabled` are accepted because the common formats write them.
const stdioEntry = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1, 'must not be empty'),
  args: z.array(z.string()).default([]),
  env: stringMap.default({}),
  cwd: z.string().min(1, 'must not be empty').optional(),
  disabled: z.boolean().optional(),
});

const httpEntry = z.strictObject({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  headers: stringMap.default({}),
  disabled: z.boolean().optional(),
});

const fileShape = z.object({ mcpServers: z.record(z.string(), z.unknown()).default({}) });

/** Read `path`. A missing file means no MCP servers, not an error: MCP is optional. */
export async function loadMcpConfig(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  options: Pick<ParseOptions, 'unsetVariables'> = {},
): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { servers: [] };
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(path, [`not valid JSON: ${(error as Error).message}`]);
  }
  return parseMcpConfig(json, { ...options, env, source: path, baseDir: dirname(resolve(path)) });
}

export interface ParseOptions {
  env?: NodeJS.ProcessEnv;
  /** Names the file in error messages. */
  source?: string;
  /** A relative `cwd` is taken relative to this (the file's folder), not to wherever the agent was started. */
  baseDir?: string;
  /**
   * A server whose `${VAR}` is not set: an error (default), or `skip`: left out, with the
   * reason in `skipped`. The bot skips: an example entry copied with its token unset must not
   * stop it; a malformed file still does.
   */
  unsetVariables?: 'error' | 'skip';
}

/** @internal */
export function parseMcpConfig(json: unknown, options: ParseOptions = {}): McpConfig {
  const { env = process.env, source = 'mcp.json', baseDir = process.cwd() } = options;
  const file = fileShape.safeParse(json);
  if (!file.success) throw new McpConfigError(source, issuesOf(file.error, 'the file'));

  const problems: string[] = [];
  const servers: McpServerConfig[] = [];
  const skipped: { server: string; error: string }[] = [];
  for (const [name, raw] of Object.entries(file.data.mcpServers)) {
    const at = `server "${name}"`;
    if (!SERVER_NAME_PATTERN.test(name)) {
      problems.push(`${at}: the name must be 1-32 characters of a-z, A-Z, 0-9, _ or - (it prefixes tool names)`);
      continue;
    }
    const entry = parseEntry(name, raw, env, baseDir);
    if ('unset' in entry && options.unsetVariables === 'skip')
      skipped.push({ server: name, error: `not started: ${entry.problems.join('; ')}` });
    else if ('problems' in entry) problems.push(...entry.problems.map((problem) => `${at}: ${problem}`));
    else if (entry.server) servers.push(entry.server);
  }
  if (problems.length > 0) throw new McpConfigError(source, problems);
  return skipped.length > 0 ? { servers, skipped } : { servers };
}

/** `unset`: the entry is well-formed, and its only problems are unset variables. */
type EntryOutcome = { server: McpServerConfig | null } | { problems: string[]; unset?: true };

function parseEntry(name: string, raw: unknown, env: NodeJS.ProcessEnv, baseDir: string): EntryOutcome {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { problems: ['must be an object'] };
  const hasCommand = 'command' in raw;
  const hasUrl = 'url' in raw;
  if (hasCommand === hasUrl) {
    return {
      problems: [
        hasCommand ? 'has both "command" and "url"; give one' : 'needs "command" (stdio) or "url" (streamable HTTP)',
      ],
    };
  }
  if ('type' in raw && raw.type === 'sse') {
    return {
      problems: [
        'type "sse" (the deprecated HTTP+SSE transport) is not supported; give the server\'s streamable HTTP URL',
      ],
    };
  }

  if (hasCommand) {
    const parsed = stdioEntry.safeParse(raw);
    if (!parsed.success) return { problems: issuesOf(parsed.error) };
    if (parsed.data.disabled) return { server: null };
    const expanded = expandAll(parsed.data.env, 'env', env);
    if ('problems' in expanded) return expanded;
    const server: StdioServerConfig = {
      name,
      transport: 'stdio',
      command: parsed.data.command,
      args: parsed.data.args,
      env: expanded.values,
    };
    if (parsed.data.cwd !== undefined) server.cwd = resolve(baseDir, parsed.data.cwd);
    return { server };
  }

  const parsed = httpEntry.safeParse(raw);
  if (!parsed.success) return { problems: issuesOf(parsed.error) };
  if (parsed.data.disabled) return { server: null };
  const expanded = expandAll(parsed.data.headers, 'headers', env);
  if ('problems' in expanded) return expanded;
  return { server: { name, transport: 'http', url: new URL(parsed.data.url), headers: expanded.values } };
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replace every `${NAME}` with the variable's value. An unset variable is an error, not an
 * empty string: a server started with an empty token fails later with a 401 that says
 * nothing about the missing variable.
 */
function expandReferences(value: string, env: NodeJS.ProcessEnv): { value: string; missing: string[] } {
  const missing: string[] = [];
  const expanded = value.replace(REFERENCE, (_match, variable: string) => {
    const found = env[variable];
    if (found === undefined) {
      missing.push(variable);
      return '';
    }
    return found;
  });
  return { value: expanded, missing };
}

function expandAll(
  values: Record<string, string>,
  field: 'env' | 'headers',
  env: NodeJS.ProcessEnv,
): { values: Record<string, string> } | { problems: string[]; unset: true } {
  const out: Record<string, string> = {};
  const problems: string[] = [];
  for (const [key, raw] of Object.entries(values)) {
    const { value, missing } = expandReferences(raw, env);
    for (const variable of missing) problems.push(`${field}.${key}: \${${variable}} is not set in the environment`);
    out[key] = value;
  }
  return problems.length > 0 ? { problems, unset: true } : { values: out };
}

function issuesOf(error: z.ZodError, where?: string): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.') || where;
    const prefix = path ? `${path}: ` : '';
    if (issue.code === 'unrecognized_keys') {
      return `${prefix}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    }
    return `${prefix}${issue.message}`;
  });
}
