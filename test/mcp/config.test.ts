import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../../src/mcp/index.js';
import { McpConfigError, parseMcpConfig } from '../../src/mcp/config.js';

function problemsOf(json: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseMcpConfig(json, { env, source: 'mcp.json' });
  } catch (error) {
    if (error instanceof McpConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

describe('loading mcp.json', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-config-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a missing file means no MCP servers, not an error', async () => {
    await expect(loadMcpConfig(join(dir, 'mcp.json'))).resolves.toEqual({ servers: [] });
  });

  it('reads stdio and HTTP servers in file order, with a relative cwd taken from the file folder', async () => {
    const path = join(dir, 'mcp.json');
    await writeFile(
      path,
      JSON.stringify({
        mcpServers: {
          github: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-github'],
            env: { GITHUB_TOKEN: '${GH_TOKEN}' },
            cwd: 'work',
          },
          docs: {
            type: 'http',
            url: 'https://docs.example.com/mcp',
            headers: { Authorization: 'Bearer ${DOCS_TOKEN}' },
          },
          old: { command: 'old-server', disabled: true },
        },
      }),
    );
    const config = await loadMcpConfig(path, { GH_TOKEN: 'ghp_secret', DOCS_TOKEN: 'd0c5' });
    expect(config.servers).toEqual([
      {
        name: 'github',
        transport: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-github'],
        env: { GITHUB_TOKEN: 'ghp_secret' },
        cwd: join(dir, 'work'),
      },
      {
        name: 'docs',
        transport: 'http',
        url: new URL('https://docs.example.com/mcp'),
        headers: { Authorization: 'Bearer d0c5' },
      },
    ]);
  });

  it('a file that is not JSON is named in the error', async () => {
    const path = join(dir, 'mcp.json');
    await writeFile(path, '{ "mcpServers": { ');
    await expect(loadMcpConfig(path)).rejects.toThrow(
      new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is invalid:\\n- not valid JSON`),
    );
  });
});

describe('validating mcp.json', () => {
  it('names the server and the field at fault, and reports every problem at once', () => {
    expect(
      problemsOf({
        mcpServers: {
          github: { command: 'npx', args: '-y server-github' },
          docs: { url: 'ftp://docs.example.com' },
          notes: { command: 'notes', env: { TOKEN: 42 } },
        },
      }),
    ).toEqual([
      'server "github": args: Invalid input: expected array, received string',
      'server "docs": url: must be an http:// or https:// URL',
      'server "notes": env.TOKEN: Invalid input: expected string, received number',
    ]);
  });

  it('rejects an entry with neither or both of command and url, and a typo in a field name', () => {
    expect(
      problemsOf({
        mcpServers: {
          empty: {},
          both: { command: 'x', url: 'http://localhost/mcp' },
          typo: { command: 'x', arg: ['--verbose'] },
        },
      }),
    ).toEqual([
      'server "empty": needs "command" (stdio) or "url" (streamable HTTP)',
      'server "both": has both "command" and "url"; give one',
      'server "typo": unknown field "arg"',
    ]);
  });

  it('refuses server names that cannot prefix a tool name', () => {
    expect(
      problemsOf({
        mcpServers: { 'my server': { command: 'x' }, 'a.b': { command: 'y' }, ['z'.repeat(33)]: { command: 'z' } },
      }),
    ).toEqual([
      'server "my server": the name must be 1-32 characters of a-z, A-Z, 0-9, _ or - (it prefixes tool names)',
      'server "a.b": the name must be 1-32 characters of a-z, A-Z, 0-9, _ or - (it prefixes tool names)',
      `server "${'z'.repeat(33)}": the name must be 1-32 characters of a-z, A-Z, 0-9, _ or - (it prefixes tool names)`,
    ]);
  });

  it('says the deprecated SSE transport is not supported', () => {
    expect(problemsOf({ mcpServers: { legacy: { type: 'sse', url: 'http://localhost:3000/sse' } } })).toEqual([
      'server "legacy": type "sse" (the deprecated HTTP+SSE transport) is not supported; give the server\'s streamable HTTP URL',
    ]);
  });

  it('rejects a file whose mcpServers is not an object', () => {
    expect(problemsOf({ mcpServers: ['github'] })).toEqual([
      'mcpServers: Invalid input: expected record, received array',
    ]);
  });

  it('a file without mcpServers means no servers', () => {
    expect(parseMcpConfig({}, { env: {} })).toEqual({ servers: [] });
  });
});

describe('${VAR} references keep secrets out of the file', () => {
  it('expands every reference in env and header values, and nothing else', () => {
    const config = parseMcpConfig(
      {
        mcpServers: {
          db: {
            command: 'db-server',
            args: ['--url', '${NOT_EXPANDED}'],
            env: { URL: 'postgres://${DB_USER}:${DB_PASS}@localhost/app', PLAIN: 'x' },
          },
        },
      },
      { env: { DB_USER: 'ada', DB_PASS: 'p@ss' } },
    );
    expect(config.servers[0]).toMatchObject({
      args: ['--url', '${NOT_EXPANDED}'],
      env: { URL: 'postgres://ada:p@ss@localhost/app', PLAIN: 'x' },
    });
  });

  it('an unset variable is an error naming the server, the field and the variable', () => {
    expect(
      problemsOf({
        mcpServers: {
          github: { command: 'npx', env: { GITHUB_TOKEN: '${GH_TOKEN}' } },
          docs: { url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
        },
      }),
    ).toEqual([
      'server "github": env.GITHUB_TOKEN: ${GH_TOKEN} is not set in the environment',
      'server "docs": headers.Authorization: ${DOCS_TOKEN} is not set in the environment',
    ]);
  });

  it('a variable set to an empty string counts as set', () => {
    const config = parseMcpConfig(
      { mcpServers: { s: { command: 'x', env: { FLAG: '${EMPTY}' } } } },
      { env: { EMPTY: '' } },
    );
    expect(config.servers[0]).toMatchObject({ env: { FLAG: '' } });
  });
});

describe('mcp.example.json', () => {
  it('is a valid configuration (with its token variable set)', async () => {
    const { readFile } = await import('node:fs/promises');
    const example = JSON.parse(await readFile(new URL('../../mcp.example.json', import.meta.url), 'utf8')) as unknown;
    const config = parseMcpConfig(example, { env: { DOCS_MCP_TOKEN: 'token' } });
    expect(config.servers.map((server) => server.name)).toEqual(['filesystem', 'docs']);
  });
});
