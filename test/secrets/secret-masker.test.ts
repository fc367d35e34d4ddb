// The masker and what it is built from: every configured secret, in every form it takes in
// text that leaves the bot, becomes `[secret]`; ordinary text is left alone.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseMcpConfig } from '../../src/mcp/config.js';
import { configSecretValues, mcpSecretValues, SecretMasker } from '../../src/secrets/index.js';
import { looksSecretName, urlCredentials } from '../../src/secrets/secret-values.js';

const config = (env: Record<string, string>) => loadConfig({ MODEL: 'openai:gpt-4.1', ...env });

describe('a configured secret is masked wherever a tool prints it', () => {
  it('masks the API keys and Slack tokens from the settings, raw', () => {
    const masker = new SecretMasker(
      configSecretValues(
        config({
          OPENAI_API_KEY: 'openai-key-1234567890',
          ANTHROPIC_API_KEY: 'anthropic-key-abcdef',
          SLACK_BOT_TOKEN: 'xoxb-111-222-bot-token',
          SLACK_APP_TOKEN: 'xapp-1-A0-app-token',
          SLACK_SIGNING_SECRET: '8f14e45fceea167a5a36dedd4bea2543',
        }),
      ),
    );
    const output =
      'OPENAI_API_KEY=openai-key-1234567890\nANTHROPIC_API_KEY=anthropic-key-abcdef\nxoxb-111-222-bot-token xapp-1-A0-app-token 8f14e45fceea167a5a36dedd4bea2543';
    expect(masker.mask(output)).toBe('OPENAI_API_KEY=[secret]\nANTHROPIC_API_KEY=[secret]\n[secret] [secret] [secret]');
  });

  it('masks the password inside a URL-valued setting, as written and percent-decoded, not the rest of the URL', () => {
    const values = configSecretValues(
      config({
        STORE_URL: 'redis://bot:p%40ss%2Fw0rd!@cache.internal:6379',
        OPENAI_BASE_URL: 'https://proxy-user:proxy-pass-42@llm.example/v1',
      }),
    );
    const masker = new SecretMasker(values);
    expect(masker.mask('connecting to redis://bot:p%40ss%2Fw0rd!@cache.internal:6379')).toBe(
      'connecting to redis://bot:[secret]@cache.internal:6379',
    );
    expect(masker.mask('AUTH p@ss/w0rd!')).toBe('AUTH [secret]');
    expect(masker.mask('https://proxy-user:proxy-pass-42@llm.example/v1')).toBe(
      'https://proxy-user:[secret]@llm.example/v1',
    );
    // The short username `bot` is a name, not a secret.
    expect(values).not.toContain('bot');
  });

  it('masks a long URL username (a token used as one), but not a short one', () => {
    expect(urlCredentials('https://ghp_abcdefghijklmnopqrstuvwxyz@github.com/org/repo.git')).toContain(
      'ghp_abcdefghijklmnopqrstuvwxyz',
    );
    expect(urlCredentials('postgres://postgres:hunter22@db/app')).toEqual(['hunter22', 'hunter22']);
    expect(urlCredentials('https://example.com/path@not-userinfo')).toEqual([]);
  });

  it('masks the JSON-escaped form, as a secret with a quote or backslash appears in a tool result or a log line', () => {
    const masker = new SecretMasker(['pa"ss\\word-9']);
    const result = JSON.stringify({ output: 'the password is pa"ss\\word-9' });
    expect(masker.mask(result)).toBe(JSON.stringify({ output: 'the password is [secret]' }));
    // Twice escaped: a tool result (JSON) inside a JSON log line.
    expect(masker.mask(JSON.stringify({ content: result }))).not.toContain('word-9');
    expect(JSON.parse(masker.mask(JSON.stringify({ content: result })))).toEqual({
      content: JSON.stringify({ output: 'the password is [secret]' }),
    });
  });

  it('masks a secret that contains another whole, and overlapping secrets without leaving a remainder', () => {
    const masker = new SecretMasker(['inner-secret', 'outer-inner-secret-tail', 'abcdef123', 'def123456789']);
    expect(masker.mask('x outer-inner-secret-tail y')).toBe('x [secret] y');
    expect(masker.mask('x inner-secret y')).toBe('x [secret] y');
    expect(masker.mask('abcdef123456789!')).toBe('[secret]!');
    expect(masker.mask('inner-secretinner-secret')).toBe('[secret]');
  });

  it('ignores values too short to be secrets, so ordinary text is not garbled', () => {
    const masker = new SecretMasker(['abc', '12345', 'secret', 'long-enough-secret']);
    expect(masker.mask('abc 12345 secret long-enough-secret')).toBe('abc 12345 secret [secret]');
    const values = configSecretValues(config({ OPENAI_API_KEY: 'sk-1', STORE_URL: 'redis://:pw@cache:6379' }));
    expect(values).toEqual([]);
  });

  it('leaves text without secrets as it is, and a masker without secrets changes nothing', () => {
    expect(new SecretMasker(['long-enough-secret']).mask('nothing to see here')).toBe('nothing to see here');
    expect(new SecretMasker().mask('anything')).toBe('anything');
  });

  it('maskDeep masks every string of an object, array or error, and leaves the original alone', () => {
    const masker = new SecretMasker(['deep-secret-value']);
    const original = {
      a: 'x deep-secret-value',
      list: ['deep-secret-value', 3, null],
      nested: { b: { c: 'deep-secret-value!' } },
      ok: true,
    };
    const masked = masker.maskDeep(original);
    expect(masked).toEqual({
      a: 'x [secret]',
      list: ['[secret]', 3, null],
      nested: { b: { c: '[secret]!' } },
      ok: true,
    });
    expect(original.a).toBe('x deep-secret-value');
    const error = masker.maskDeep(new Error('failed with deep-secret-value'));
    expect(error.message).toBe('failed with [secret]');
    expect(error.stack).not.toContain('deep-secret-value');
    const cyclic: Record<string, unknown> = { s: 'deep-secret-value' };
    cyclic.self = cyclic;
    expect(masker.maskDeep(cyclic)).toMatchObject({ s: '[secret]' });
  });

  it('grows: values added later (the MCP file, read after the logger started) are masked by the same masker', () => {
    const masker = new SecretMasker(['first-secret-1']);
    const mask = masker.mask;
    masker.add(['second-secret-2']);
    expect(mask('first-secret-1 second-secret-2')).toBe('[secret] [secret]');
  });
});

describe('which configuration values are secrets', () => {
  it('names that say secret, by word: a new DISCORD_TOKEN is covered, a token budget is not', () => {
    for (const name of [
      'DISCORD_TOKEN',
      'OPENAI_API_KEY',
      'SLACK_SIGNING_SECRET',
      'DB_PASSWORD',
      'x-api-key',
      'Authorization',
      'apiKey',
      'GITHUB_PERSONAL_ACCESS_TOKEN',
      'APIKEY',
    ]) {
      expect(looksSecretName(name), name).toBe(true);
    }
    for (const name of [
      'COMPACTION_CAP_TOKENS',
      'MODEL',
      'WORKSPACE_DIR',
      'MONKEY_BUSINESS',
      'PORT',
      'Content-Type',
      'KEYBOARD',
    ]) {
      expect(looksSecretName(name), name).toBe(false);
    }
  });

  it('the shell\'s location variables are paths, not secrets: PWD (whose "pwd" reads as a password) and SSH_AUTH_SOCK; DB_PWD still is one', () => {
    for (const name of ['PWD', 'OLDPWD', 'SSH_AUTH_SOCK', 'INIT_CWD', 'HOME', 'PATH', 'TMPDIR'])
      expect(looksSecretName(name), name).toBe(false);
    for (const name of ['DB_PWD', 'MYSQL_PWD', 'pwd', 'Pwd', 'ssh_auth_sock_token', 'SSH_AUTH'])
      expect(looksSecretName(name), name).toBe(true);
  });

  it("takes MCP servers' secret env values and headers (and the token after Bearer), and URL passwords in env, args and the server URL", () => {
    const mcp = parseMcpConfig(
      {
        mcpServers: {
          github: {
            command: 'github-mcp',
            args: ['postgres://app:db-pass-77@db/app'],
            env: { GITHUB_TOKEN: '${GH}', LOG_LEVEL: 'verbose-debug', DATABASE_URL: 'postgres://u:env-url-pass@db/x' },
          },
          remote: {
            url: 'https://svc:url-pass-99@mcp.example/mcp',
            headers: { Authorization: 'Bearer remote-bearer-token', 'X-Trace': 'trace-header-value' },
          },
        },
      },
      { env: { GH: 'ghp_from_environment_123' } },
    );
    const values = mcpSecretValues(mcp);
    expect(values).toEqual(
      expect.arrayContaining([
        'ghp_from_environment_123',
        'db-pass-77',
        'env-url-pass',
        'url-pass-99',
        'Bearer remote-bearer-token',
        'remote-bearer-token',
      ]),
    );
    expect(values).not.toContain('verbose-debug');
    expect(values).not.toContain('trace-header-value');
  });
});
