// Which strings are secrets: the exact values in the configuration that must never leave
// the process (API keys, bot tokens, signing secrets, passwords inside URLs, the
// credentials an MCP server is started or called with). The one idea: a secret is known by
// its value, not by its shape, so a masker can find it in any text a tool prints, whatever
// the tool (`env`, `cat .env`, a stack trace quoting a connection string).
import type { Config } from '../config.js';
import type { McpConfig } from '../mcp/index.js';

/**
 * Values shorter than this are not treated as secrets. Masking every "abc" or "1234" would
 * garble ordinary text (file contents, numbers, words) far more than it protects: a real
 * key, token or password worth the name is longer.
 */
export const MIN_SECRET_LENGTH = 6;

/**
 * A URL's username is masked only from this length on. Most usernames are names (`postgres`,
 * `deploy`) that appear in ordinary text; a long one is usually a token used as a username
 * (`https://<token>@github.com`) or an access key id.
 */
const MIN_SECRET_USERNAME_LENGTH = 16;

/** The settings that are secrets by definition, whatever the name rule below decides. */
const KNOWN_SECRET_SETTINGS = [
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'SLACK_BOT_TOKEN',
  'SLACK_APP_TOKEN',
  'SLACK_SIGNING_SECRET',
] as const;

/**
 * One word of a name (split at `_`, `-` and camelCase) that marks its value as a secret.
 * Words, not substrings: `COMPACTION_CAP_TOKENS` is a number, not a token; `GITHUB_TOKEN`,
 * `x-api-key`, `apiKey`, `Authorization` and `DB_PASSWORD` are secrets.
 */
const SECRET_WORD =
  /^(?:api|access|auth|client|secret|private|refresh|session|bearer|bot|app|signing)?(?:token|key|secret|password|passwd|pwd|pass|passphrase|credentials?|auth|authorization|cookie|pat)$/;

/**
 * Variables the shell and the system set to a place, never a credential, whose names the word
 * rule would still read as secret: `PWD` (the working directory: "pwd" is also short for
 * password) and `SSH_AUTH_SOCK` (the agent's socket path). Exact names, as the shell writes
 * them: `DB_PWD` or a lowercase `pwd` header stay secrets. Masking these hid every path under
 * the working directory (`npm run doctor` masks with the whole environment).
 */
const LOCATION_VARIABLES: ReadonlySet<string> = new Set([
  'PWD',
  'OLDPWD',
  'INIT_CWD',
  'HOME',
  'PATH',
  'TMPDIR',
  'SHELL',
  'SSH_AUTH_SOCK',
]);

/**
 * Does this setting, environment variable or header name say its value is a secret?
 * @internal
 */
export function looksSecretName(name: string): boolean {
  if (LOCATION_VARIABLES.has(name)) return false;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.some((word) => SECRET_WORD.test(word));
}

/** `scheme://userinfo@…`: the userinfo as written (up to the last `@` before the path, as URL parsers read it). */
const USERINFO = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i;

/**
 * The credentials inside a URL's userinfo: the password as written, percent-decoded and as
 * a URL parser normalises it (a tool may print any of the three), and the username when it
 * is long enough to be a secret.
 * @internal
 */
export function urlCredentials(text: string): string[] {
  const match = USERINFO.exec(text.trim());
  if (!match) return [];
  const userinfo = match[1]!;
  const colon = userinfo.indexOf(':');
  const username = colon === -1 ? userinfo : userinfo.slice(0, colon);
  const password = colon === -1 ? '' : userinfo.slice(colon + 1);
  const found: string[] = [];
  if (password) found.push(password, ...decodedForms(password));
  if (username.length >= MIN_SECRET_USERNAME_LENGTH) found.push(username, ...decodedForms(username));
  try {
    const parsed = new URL(text.trim());
    if (parsed.password) found.push(parsed.password);
    if (parsed.username.length >= MIN_SECRET_USERNAME_LENGTH) found.push(parsed.username);
  } catch {
    // Not a URL a parser accepts (e.g. `sqlite://` with an odd path): the raw forms above stand.
  }
  return found;
}

function decodedForms(value: string): string[] {
  try {
    const decoded = decodeURIComponent(value);
    return decoded === value ? [] : [decoded];
  } catch {
    return [];
  }
}

/**
 * `Authorization: Bearer <token>` leaks as the whole value or as the token alone (a tool
 * printing its own request, a server echoing the token back).
 */
function credentialOfHeader(value: string): string[] {
  const scheme = /^(?:Bearer|Basic|Token|Bot|Digest)\s+(\S.*)$/i.exec(value.trim());
  return scheme ? [scheme[1]!] : [];
}

/**
 * The secret values in the validated configuration: the known secret settings, every other
 * setting whose name looks secret (so a new `DISCORD_TOKEN` is covered the day it is added
 * to the schema), and the credentials inside every URL-valued setting (`STORE_URL`,
 * `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `SLACK_API_URL`, …).
 */
export function configSecretValues(config: Config): string[] {
  const values: string[] = [];
  const settings = config as unknown as Record<string, unknown>;
  for (const name of KNOWN_SECRET_SETTINGS) {
    const value = settings[name];
    if (typeof value === 'string') values.push(value);
  }
  for (const [name, value] of Object.entries(settings)) {
    // Only strings: a number (a token budget) is not a secret, whatever its name says.
    if (typeof value !== 'string') continue;
    if (looksSecretName(name)) values.push(value);
    values.push(...urlCredentials(value));
  }
  // The OTLP exporter's headers carry the tracing backend's API key, whatever their names.
  for (const value of Object.values(config.OTEL_EXPORTER_OTLP_HEADERS ?? {}))
    values.push(value, ...credentialOfHeader(value));
  return keep(values);
}

/**
 * The secret values in the MCP configuration (expanded from `${VAR}` references by
 * `loadMcpConfig`): stdio servers' `env` values whose names look secret, HTTP servers'
 * `headers` likewise (and the token after `Bearer`), and the credentials inside any URL
 * among them, among the command's arguments (a database URL passed as an argument) and in
 * a server's own URL.
 */
export function mcpSecretValues(config: McpConfig): string[] {
  const values: string[] = [];
  for (const server of config.servers) {
    if (server.transport === 'stdio') {
      for (const [name, value] of Object.entries(server.env)) {
        if (looksSecretName(name)) values.push(value);
        values.push(...urlCredentials(value));
      }
      for (const arg of server.args) values.push(...urlCredentials(arg));
    } else {
      for (const [name, value] of Object.entries(server.headers)) {
        if (looksSecretName(name)) values.push(value, ...credentialOfHeader(value));
        values.push(...urlCredentials(value));
      }
      values.push(...urlCredentials(server.url.href));
    }
  }
  return keep(values);
}

function keep(values: string[]): string[] {
  return [...new Set(values.filter((value) => value.trim().length >= MIN_SECRET_LENGTH))];
}
