import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/engine/index.js';
import { McpManager, type McpConfig } from '../../src/mcp/index.js';
import { McpToolError } from '../../src/mcp/mcp-tool.js';
import { parseMcpConfig } from '../../src/mcp/config.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { cancelledOnServer, eventually, runTool } from './mcp-kit.js';
import { createCatalogServer, LONG_TOOL_NAME, ODD_SCHEMA } from './fixtures/catalog-server.js';
import { refusedUrl, startHttpMcpServer, type HttpMcpServer } from './fixtures/http-server.js';
import { isAlive, notesServerEntry } from './fixtures/launch.js';
import { createNotesServer, newNotesState, type NotesState } from './fixtures/notes-server.js';

function configOf(mcpServers: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): McpConfig {
  return parseMcpConfig({ mcpServers }, { env });
}

function call(
  manager: McpManager,
  name: string,
  args: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<ToolResult> {
  return runTool(manager.tools(), name, args, signal);
}

const NOTES_TOOLS = [
  'notes__add',
  'notes__delete_note',
  'notes__fetch_thing',
  'notes__save_note',
  'notes__fail',
  'notes__mixed',
  'notes__slow',
  'notes__cancellations',
];

describe('an MCP server over stdio', () => {
  const logger = memoryLogger();
  const manager = new McpManager({ logger });

  beforeAll(async () => {
    const report = await manager.start(
      configOf({ notes: notesServerEntry({ NOTES_FIXTURE_GREETING: '${GREETING}' }) }, { GREETING: 'hello from env' }),
    );
    expect(report).toEqual({ connected: [{ server: 'notes', tools: NOTES_TOOLS.length }], failures: [] });
  });
  afterAll(() => manager.close());

  it('offers every tool as notes__<tool>, with metadata from its annotations', () => {
    const tools = manager.tools();
    expect(tools.map((tool) => tool.name)).toEqual(NOTES_TOOLS);
    const metadata = Object.fromEntries(tools.map((tool) => [tool.name, tool.metadata]));
    expect(metadata['notes__add']).toEqual({ risk: 'low', category: 'read', idempotent: true });
    expect(metadata['notes__delete_note']).toEqual({
      risk: 'high',
      category: 'write',
      requiresApproval: true,
      idempotent: false,
    });
    expect(metadata['notes__fetch_thing']).toEqual({
      risk: 'high',
      category: 'external',
      requiresApproval: true,
      idempotent: false,
    });
    expect(metadata['notes__save_note']).toEqual({ risk: 'medium', category: 'external', idempotent: false });
    expect(tools[0]!.description).toBe('Add two numbers');
    // What the operations side may name (src/ops/tool-names.ts): these, and nothing else.
    for (const name of NOTES_TOOLS) expect(manager.hasTool(name)).toBe(true);
    expect(manager.hasTool('add')).toBe(false);
    expect(manager.hasTool('notes__nothing_like_it')).toBe(false);
  });

  it('passes the env from mcp.json, with ${VAR} expanded, to the child', () => {
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'debug',
        details: { server: 'notes', stderr: 'notes fixture: hello from env' },
      }),
    );
  });

  it('calls a tool and returns its text', async () => {
    await expect(call(manager, 'notes__add', { a: 2, b: 3 })).resolves.toBe('5');
  });

  it('an isError result becomes a tool error that says the tool failed', async () => {
    const failure = call(manager, 'notes__fail');
    await expect(failure).rejects.toBeInstanceOf(McpToolError);
    await expect(failure).rejects.toThrow('notes/fail reported an error: the disk is full');
  });

  it('arguments the server rejects come back as an error the model can read', async () => {
    await expect(call(manager, 'notes__add', { a: 'two' })).rejects.toThrow(
      /notes\/add reported an error: .*Input validation error/,
    );
  });

  it('describes images and binary resources instead of dumping them', async () => {
    await expect(call(manager, 'notes__mixed')).resolves.toBe(
      [
        'here is the note',
        '[image: image/png, 68 bytes; not shown to the model]',
        '[resource <notes://n-1> (text/plain)]',
        'buy milk',
        '[resource <notes://n-1/scan> (application/pdf): 68 bytes of binary data; not shown to the model]',
        '[resource link: n-2 <notes://n-2> (text/plain)]',
      ].join('\n'),
    );
  });

  it('a stop cancels the call on the server, not only on our side', async () => {
    const stop = new AbortController();
    const running = call(manager, 'notes__slow', { ms: 60_000, label: 'stdio-stop' }, stop.signal);
    await waitFor(() =>
      logger.lines.some((line) => (line.details as { stderr?: string }).stderr === 'slow started: stdio-stop'),
    );
    stop.abort();
    await expect(running).rejects.toThrow(/AbortError|aborted/);
    // The cancellation is a notification: ask the server until it has handled it.
    await eventually(async () =>
      (await cancelledOnServer(manager.tools(), 'notes__cancellations')).includes('stdio-stop'),
    );
  });
});

describe('an MCP server over streamable HTTP', () => {
  let http: HttpMcpServer;
  let state: NotesState;
  let started: ((label: string) => void) | undefined;
  const manager = new McpManager();

  beforeAll(async () => {
    state = newNotesState((label) => started?.(label));
    http = await startHttpMcpServer(() => createNotesServer(state));
    const report = await manager.start(
      configOf(
        { remote: { url: http.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } } },
        { REMOTE_TOKEN: 's3cret' },
      ),
    );
    expect(report.failures).toEqual([]);
  });
  afterAll(async () => {
    await manager.close();
    await http.close();
  });

  it('sends the configured headers, with ${VAR} expanded, on every request', () => {
    expect(http.requests.length).toBeGreaterThan(0);
    expect(http.requests.every((request) => request.headers.authorization === 'Bearer s3cret')).toBe(true);
  });

  it('offers the tools as remote__<tool> and calls them', async () => {
    expect(manager.tools().map((tool) => tool.name)).toEqual(
      NOTES_TOOLS.map((name) => name.replace('notes__', 'remote__')),
    );
    await expect(call(manager, 'remote__add', { a: 40, b: 2 })).resolves.toBe('42');
    await expect(call(manager, 'remote__delete_note', { id: 'n-1' })).resolves.toBe('deleted n-1');
    expect(state.notes.has('n-1')).toBe(false);
  });

  it('an isError result becomes a tool error', async () => {
    await expect(call(manager, 'remote__fail')).rejects.toThrow('remote/fail reported an error: the disk is full');
  });

  it('a stop cancels the call on the server', async () => {
    const stop = new AbortController();
    started = (label) => {
      if (label === 'http-stop') stop.abort();
    };
    await expect(call(manager, 'remote__slow', { ms: 60_000, label: 'http-stop' }, stop.signal)).rejects.toThrow(
      /AbortError|aborted/,
    );
    await waitFor(() => state.cancelled.includes('http-stop'));
  });

  it('an already-stopped call is never sent', async () => {
    const before = http.requests.length;
    await expect(call(manager, 'remote__add', { a: 1, b: 1 }, AbortSignal.abort())).rejects.toThrow();
    expect(http.requests.length).toBe(before);
  });
});

describe('a server whose tool list comes in pages, with names and schemas no provider takes as is', () => {
  it('lists every page, makes every name provider-safe and unique, and keeps each schema', async () => {
    const http = await startHttpMcpServer(createCatalogServer);
    const manager = new McpManager();
    try {
      await manager.start(configOf({ catalog: { url: http.url } }));
      const names = manager.tools().map((tool) => tool.name);
      expect(names).toHaveLength(4);
      expect(names[1]).toBe('catalog__files_list');
      expect(names[0]).toMatch(/^catalog__files_list_[0-9a-f]{6}$/);
      expect(names[2]).toMatch(/^catalog__files_read_[0-9a-f]{6}$/);
      expect(names[3]).toHaveLength(64);
      expect(new Set(names).size).toBe(4);
      expect(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true);
      // The call goes out under the server's own name.
      await expect(call(manager, names[3]!, { deep: { a: 1 } })).resolves.toBe(
        JSON.stringify({ tool: LONG_TOOL_NAME, arguments: { deep: { a: 1 } } }),
      );
      await expect(call(manager, names[0]!, { kind: 'dir' })).resolves.toBe(
        JSON.stringify({ tool: 'files.list', arguments: { kind: 'dir' } }),
      );
      const { z } = await import('zod');
      const { $schema: _draft, ...expected } = ODD_SCHEMA;
      const parameters = z.toJSONSchema(manager.tools()[0]!.schema, { io: 'input' });
      delete parameters.$schema;
      expect(parameters).toEqual(expected);
    } finally {
      await manager.close();
      await http.close();
    }
  });
});

describe('servers that fail to start are reported, not fatal', () => {
  let dir: string;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a missing command, a child that exits and a refused URL are each reported while a good server works', async () => {
    const logger = memoryLogger();
    // The product's deadline: the good server may take its time on a busy machine. A silent
    // server, which only the deadline ends, has a test of its own below with a short one.
    const manager = new McpManager({ logger });
    const refused = await refusedUrl();
    try {
      const report = await manager.start(
        configOf({
          notes: notesServerEntry(),
          ghost: { command: 'definitely-not-an-installed-mcp-server' },
          misplaced: { command: process.execPath, cwd: join(tmpdir(), 'no-such-folder-for-mcp-tests') },
          crashy: {
            command: process.execPath,
            args: ['-e', "console.error('NOTES_TOKEN is not set'); process.exit(3)"],
          },
          offline: { url: refused },
        }),
      );
      expect(report.connected).toEqual([{ server: 'notes', tools: NOTES_TOOLS.length }]);
      expect(report.failures).toEqual([
        { server: 'ghost', error: 'command not found: definitely-not-an-installed-mcp-server' },
        {
          server: 'misplaced',
          error: `working directory not found: ${join(tmpdir(), 'no-such-folder-for-mcp-tests')}`,
        },
        {
          server: 'crashy',
          error: 'the server process exited before the handshake finished; server stderr: NOTES_TOKEN is not set',
        },
        {
          server: 'offline',
          error: expect.stringMatching(
            new RegExp(`fetch failed.*ECONNREFUSED.*\\(${refused.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`),
          ),
        },
      ]);
      const warnings = logger.lines.filter((line) => line.level === 'warn');
      expect(warnings.map((line) => (line.details as { server: string }).server)).toEqual([
        'ghost',
        'misplaced',
        'crashy',
        'offline',
      ]);
      expect(warnings[0]).toEqual({
        level: 'warn',
        message: 'MCP server failed to start; going on without it',
        details: { server: 'ghost', error: 'command not found: definitely-not-an-installed-mcp-server' },
      });
      await expect(call(manager, 'notes__add', { a: 1, b: 2 })).resolves.toBe('3');
    } finally {
      await manager.close();
    }
  });

  it('a server that never answers and ignores SIGTERM is reported at the deadline, and is still gone when start() returns', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-stubborn-'));
    const pidFile = join(dir, 'pid');
    const stubborn =
      "require('node:fs').writeFileSync(process.argv[1], String(process.pid)); process.on('SIGTERM', () => {}); process.stdin.resume(); setInterval(() => {}, 1000)";
    const logger = memoryLogger();
    const manager = new McpManager({ logger, connectTimeoutMs: 500 });
    const report = await manager.start(
      configOf({ stubborn: { command: process.execPath, args: ['-e', stubborn, pidFile] } }),
    );
    expect(report).toEqual({ connected: [], failures: [{ server: 'stubborn', error: 'no answer within 500 ms' }] });
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: 'MCP server failed to start; going on without it',
        details: { server: 'stubborn', error: 'no answer within 500 ms' },
      },
    ]);
    const pid = Number(await readFile(pidFile, 'utf8'));
    expect(isAlive(pid)).toBe(false);
    await manager.close();
  });

  it('closing while servers are still connecting abandons them and leaves no child behind', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-abandon-'));
    const pidFile = join(dir, 'pid');
    const silent = "require('node:fs').writeFileSync(process.argv[1], String(process.pid)); process.stdin.resume()";
    const manager = new McpManager({ connectTimeoutMs: 30_000 });
    const starting = manager.start(configOf({ silent: { command: process.execPath, args: ['-e', silent, pidFile] } }));
    await waitFor(() => {
      try {
        return readFileSync(pidFile, 'utf8').length > 0;
      } catch {
        return false;
      }
    });
    await manager.close();
    await expect(starting).resolves.toEqual({
      connected: [],
      failures: [{ server: 'silent', error: 'connection abandoned: the MCP manager was closed' }],
    });
    expect(isAlive(Number(await readFile(pidFile, 'utf8')))).toBe(false);
    expect(manager.tools()).toEqual([]);
  });
});

describe('a server that dies after start', () => {
  it('is logged, and its tools answer with an error that says why', async () => {
    const logger = memoryLogger();
    const manager = new McpManager({ logger });
    try {
      await manager.start(configOf({ notes: notesServerEntry() }));
      process.kill(manager.status()[0]!.pid!, 'SIGKILL');
      await waitFor(() => logger.lines.some((line) => line.level === 'warn'));
      expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([
        {
          level: 'warn',
          details: { server: 'notes' },
          message: 'MCP server closed the connection; its tools will fail until the agent restarts',
        },
      ]);
      await expect(call(manager, 'notes__add', { a: 1, b: 2 })).rejects.toThrow(
        'the notes MCP server closed the connection; its tools are unavailable until the agent restarts',
      );
    } finally {
      await manager.close();
    }
  });
});

describe('closing the manager', () => {
  it('leaves no child process, ends the HTTP session, and later calls fail plainly', async () => {
    const http = await startHttpMcpServer(() => createNotesServer());
    const manager = new McpManager();
    await manager.start(configOf({ one: notesServerEntry(), two: notesServerEntry(), remote: { url: http.url } }));
    const status = manager.status();
    expect(status.map((server) => [server.server, server.transport])).toEqual([
      ['one', 'stdio'],
      ['two', 'stdio'],
      ['remote', 'http'],
    ]);
    const pids = status.flatMap((server) => (server.pid === undefined ? [] : [server.pid]));
    expect(pids).toHaveLength(2);
    expect(pids.every(isAlive)).toBe(true);
    const add = manager.tools().find((tool) => tool.name === 'one__add')!;

    await manager.close();

    expect(pids.filter(isAlive)).toEqual([]);
    expect(http.requests.at(-1)?.method).toBe('DELETE');
    expect(manager.tools()).toEqual([]);
    await expect(
      add.execute({ a: 1, b: 1 }, { signal: new AbortController().signal, toolCallId: 'c', sessionId: 's' }),
    ).rejects.toThrow('the one MCP server is shut down');
    await manager.close(); // idempotent
    await http.close();
  });
});
