// What the core offers and warns about at start-up: DISABLED_TOOLS keeps built-in tools from
// the model, and MCP servers that cannot start (the example file copied as-is, a command
// that is not installed) are one warning each, never a failed start.
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startCore } from '../../src/core.js';
import { loadMcpConfig } from '../../src/mcp/index.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function boot(env: Record<string, string>) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  const logger = memoryLogger();
  const core = await startCore(loadConfig({ ...coreTestEnv(dir.path, fake), SHELL_SANDBOX: 'off', ...env }), {
    logger,
  });
  cleanups.push(() => core.close());
  await core.recover();
  return { core, fake, logger, dir: dir.path };
}

describe('DISABLED_TOOLS', () => {
  it('the named built-in tools are not in the model request; the others are', async () => {
    const { core, fake } = await boot({ DISABLED_TOOLS: 'run_shell, fetch_url' });
    fake.replyText('Hello.');
    await core.manager.deliver(
      { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' },
      { text: 'hi', userId: 'U1', eventId: 'e1' },
    );
    await core.manager.idle();
    const tools = ((fake.bodies[0] as { tools?: { function: { name: string } }[] }).tools ?? []).map(
      (tool) => tool.function.name,
    );
    expect(tools).toEqual(expect.arrayContaining(['read_file', 'list_dir', 'search', 'write_file', 'edit_file']));
    expect(tools).not.toContain('run_shell');
    expect(tools).not.toContain('fetch_url');
  });
});

describe('MCP servers that cannot start', () => {
  it('mcp.example.json as-is: the server whose token is unset is skipped with the reason, the other kept', async () => {
    const example = await loadMcpConfig(
      new URL('../../mcp.example.json', import.meta.url).pathname,
      {},
      { unsetVariables: 'skip' },
    );
    expect(example.servers.map((server) => server.name)).toEqual(['filesystem']);
    expect(example.skipped).toEqual([
      { server: 'docs', error: 'not started: headers.Authorization: ${DOCS_MCP_TOKEN} is not set in the environment' },
    ]);
  });

  it('an unset token and a command that is not installed: the bot starts, one warning per server, with its reason', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const mcpConfig = join(dir.path, 'mcp.json');
    // The example's docs entry, as copied, beside a server whose command does not exist.
    await copyFile(new URL('../../mcp.example.json', import.meta.url), mcpConfig);
    const example = JSON.parse(await readFile(mcpConfig, 'utf8')) as { mcpServers: Record<string, unknown> };
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: { docs: example.mcpServers.docs, ghost: { command: 'definitely-not-an-installed-mcp-server' } },
      }),
    );
    const { core, logger } = await boot({ MCP_CONFIG: mcpConfig });
    expect(core.mcp.failures.map((failure) => failure.server).sort()).toEqual(['docs', 'ghost']);
    const mcpWarnings = logger.lines.filter((line) => line.level === 'warn' && /MCP/.test(line.message));
    expect(mcpWarnings).toEqual([
      {
        level: 'warn',
        message: 'MCP server failed to start; going on without it',
        details: {
          server: 'docs',
          error: 'not started: headers.Authorization: ${DOCS_MCP_TOKEN} is not set in the environment',
        },
      },
      {
        level: 'warn',
        message: 'MCP server failed to start; going on without it',
        details: { server: 'ghost', error: 'command not found: definitely-not-an-installed-mcp-server' },
      },
    ]);
    expect(core.warnings.filter((warning) => warning.startsWith('MCP server'))).toHaveLength(2);
  });

  it('a malformed mcp.json is fatal, with every problem named', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const mcpConfig = join(dir.path, 'mcp.json');
    await writeFile(mcpConfig, JSON.stringify({ mcpServers: { docs: { url: 'mcp.example.com', arg: [] } } }));
    await expect(boot({ MCP_CONFIG: mcpConfig })).rejects.toThrow(
      /mcp\.json is invalid:\n- server "docs": url: must be an http:\/\/ or https:\/\/ URL\n- server "docs": unknown field "arg"/,
    );
  });
});
