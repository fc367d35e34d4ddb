// One live connection to one MCP server, over stdio (a child process we spawn) or
// streamable HTTP, through the official SDK's Client. It owns the three things that go
// wrong at the edges: a connect that must end by a deadline, a failure message a person
// can act on (the child's last stderr lines, the refused address), and a close that
// leaves no child process behind. The one idea: `close()` resolves only once the child
// has exited, on every path, including a connect that failed halfway.
import { existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type CompatibilityCallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { linkedAbortController, sleep } from '../engine/index.js';
import type { McpServerConfig } from './config.js';

/** The logging the MCP layer needs; an engine or pino logger fits. */
export interface McpLogger {
  warn(details: object, message: string): void;
  debug?(details: object, message: string): void;
}

export interface ConnectOptions {
  /** The whole connect (spawn or first request, handshake, every page of the tool list) must end within this. */
  timeoutMs: number;
  /** Per tool call. The user's stop ends a call sooner; this catches a wedged server. */
  callTimeoutMs: number;
  /** Aborting it gives up the attempt (the manager closing during start). */
  signal?: AbortSignal;
  logger: McpLogger;
  clientInfo: { name: string; version: string };
}

/** Stderr kept for a failure message: the last lines are where a server says why it died. */
const STDERR_TAIL_CHARS = 2_000;
/** A server that keeps handing out cursors is cut off here rather than listed forever. */
const MAX_TOOL_PAGES = 100;
/**
 * The SDK's stdio close waits 2 s after closing stdin, sends SIGTERM, waits 2 s more, then
 * sends SIGKILL without waiting. We wait past that, then kill ourselves.
 */
const CHILD_EXIT_WAIT_MS = 5_000;
/** A polite DELETE of the HTTP session; never worth holding up shutdown for. */
const SESSION_END_WAIT_MS = 1_000;

export class McpConnection {
  private closing: Promise<void> | null = null;
  private lost = false;

  constructor(
    readonly server: string,
    readonly transport: 'stdio' | 'http',
    /** The child process (stdio only). */
    readonly pid: number | undefined,
    /** The server's tools, every page, as listed at connect time. */
    readonly tools: Tool[],
    private readonly client: Client,
    private readonly callTimeoutMs: number,
    private readonly endSession: () => Promise<void>,
  ) {}

  get closed(): boolean {
    return this.closing !== null;
  }

  /** Why calls cannot go through (we closed it, or the server went away), or undefined. */
  get unavailable(): string | undefined {
    if (this.closing) return `the ${this.server} MCP server is shut down`;
    if (this.lost)
      return `the ${this.server} MCP server closed the connection; its tools are unavailable until the agent restarts`;
    return undefined;
  }

  /** The server went away on its own (a crashed child, a dropped session). */
  markLost(): void {
    this.lost = true;
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult | CompatibilityCallToolResult> {
    return this.client.callTool({ name, arguments: args }, undefined, {
      // The SDK turns an abort into a `notifications/cancelled` to the server.
      signal,
      timeout: this.callTimeoutMs,
      // Asking for progress is what lets a server that reports it keep a long call alive.
      onprogress: () => undefined,
      resetTimeoutOnProgress: true,
    });
  }

  /** Idempotent; resolves when the connection is down and any child process has exited. */
  close(): Promise<void> {
    this.closing ??= shutdown(this.client, this.pid, this.endSession);
    return this.closing;
  }
}

/** Connect, handshake and list every tool, or throw an Error whose message says why. */
export async function connectServer(config: McpServerConfig, options: ConnectOptions): Promise<McpConnection> {
  const { logger } = options;
  const opened = openTransport(config, logger);
  const client = new Client(options.clientInfo, { capabilities: {} });
  let connection: McpConnection | undefined;
  client.onerror = (error) => logger.debug?.({ server: config.name, err: error }, 'MCP transport error');
  client.onclose = () => {
    // Only news after a successful connect, and only when we did not close it ourselves.
    if (connection && !connection.closed) {
      connection.markLost();
      logger.warn(
        { server: config.name },
        'MCP server closed the connection; its tools will fail until the agent restarts',
      );
    }
  };

  const parent = options.signal ?? new AbortController().signal;
  const { controller, release } = linkedAbortController(parent);
  const deadline = setTimeout(() => controller.abort(new ConnectTimeout(options.timeoutMs)), options.timeoutMs);
  const requestOptions = { signal: controller.signal, timeout: options.timeoutMs };
  try {
    await client.connect(opened.transport, requestOptions);
    const tools = await listAllTools(client, requestOptions);
    connection = new McpConnection(
      config.name,
      config.transport,
      opened.pid(),
      tools,
      client,
      options.callTimeoutMs,
      opened.endSession,
    );
    return connection;
  } catch (error) {
    // The SDK starts its own close when the handshake fails, which forgets the child
    // before it has exited; the pid we kept lets us wait for it all the same.
    await shutdown(client, opened.pid(), opened.endSession);
    // One more turn of the event loop lets the child's last stderr chunks through the pipe.
    await new Promise((resolve) => setImmediate(resolve));
    throw new Error(describeFailure(config, error, controller.signal, opened.stderrTail()));
  } finally {
    clearTimeout(deadline);
    release();
  }
}

class ConnectTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'ConnectTimeout';
  }
}

/** StdioClientTransport forgets its child once closing starts; this one remembers the pid. */
class TrackedStdioTransport extends StdioClientTransport {
  spawnedPid: number | undefined;

  override async start(): Promise<void> {
    await super.start();
    this.spawnedPid = this.pid ?? undefined;
  }
}

interface OpenedTransport {
  transport: Transport;
  pid: () => number | undefined;
  stderrTail: () => string;
  endSession: () => Promise<void>;
}

function openTransport(config: McpServerConfig, logger: McpLogger): OpenedTransport {
  if (config.transport === 'http') {
    const transport = new StreamableHTTPClientTransport(config.url, { requestInit: { headers: config.headers } });
    return {
      transport,
      pid: () => undefined,
      stderrTail: () => '',
      // The spec asks a client to end its session with a DELETE; a server that does not
      // support it answers 405, which the SDK accepts.
      endSession: () => transport.terminateSession(),
    };
  }
  const transport = new TrackedStdioTransport({
    command: config.command,
    args: config.args,
    // Only the configured variables and the SDK's safe list (HOME, PATH, SHELL, TERM,
    // USER, LOGNAME) reach the child: the agent's own API keys stay with the agent.
    env: config.env,
    ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
    // Piped, not inherited: servers log freely to stderr, which would interleave with
    // our JSON logs. The pipe must be read, or a chatty child blocks on a full buffer.
    stderr: 'pipe',
  });
  let tail = '';
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-STDERR_TAIL_CHARS);
    logger.debug?.({ server: config.name, stderr: text.trimEnd() }, 'MCP server stderr');
  });
  return {
    transport,
    pid: () => transport.spawnedPid,
    stderrTail: () => tail.trim(),
    endSession: async () => undefined,
  };
}

async function listAllTools(client: Client, options: { signal: AbortSignal; timeout: number }): Promise<Tool[]> {
  // A server without the tools capability (prompts or resources only) has nothing to list.
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, options);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || seen.has(cursor)) return tools;
    seen.add(cursor);
  }
  return tools;
}

async function shutdown(client: Client, pid: number | undefined, endSession: () => Promise<void>): Promise<void> {
  // The timer is cancelled once the race is over: a leftover one would hold the process
  // open for its full length after everything else has shut down.
  const done = new AbortController();
  await Promise.race([endSession().catch(() => undefined), sleep(SESSION_END_WAIT_MS, done.signal)]);
  done.abort();
  await client.close().catch(() => undefined);
  if (pid !== undefined) await waitForExit(pid);
}

async function waitForExit(pid: number): Promise<void> {
  const started = Date.now();
  while (isAlive(pid)) {
    if (Date.now() - started > CHILD_EXIT_WAIT_MS) {
      killQuietly(pid);
      await sleep(50);
      return;
    }
    await sleep(20);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** One line a person can act on: what failed, and the server's own last words if any. */
function describeFailure(config: McpServerConfig, error: unknown, signal: AbortSignal, stderr: string): string {
  let reason: string;
  const errno = error as NodeJS.ErrnoException;
  if (signal.reason instanceof ConnectTimeout) {
    reason = signal.reason.message;
  } else if (config.transport === 'stdio' && errno.code === 'ENOENT' && errno.syscall?.startsWith('spawn')) {
    reason =
      config.cwd !== undefined && !existsSync(config.cwd)
        ? `working directory not found: ${config.cwd}`
        : `command not found: ${config.command}`;
  } else if (signal.aborted) {
    reason = 'connection abandoned: the MCP manager was closed';
  } else if (
    config.transport === 'stdio' &&
    error instanceof McpError &&
    error.code === Number(ErrorCode.ConnectionClosed)
  ) {
    reason = 'the server process exited before the handshake finished';
  } else {
    reason = messageWithCauses(error);
  }
  if (config.transport === 'http') reason = `${reason} (${config.url.href})`;
  return stderr ? `${reason}; server stderr: ${stderr}` : reason;
}

/** `fetch failed` alone says nothing; its cause says `connect ECONNREFUSED 127.0.0.1:4000`. */
function messageWithCauses(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 4; depth++) {
    const message =
      current instanceof Error ? current.message : typeof current === 'string' ? current : JSON.stringify(current);
    if (message && !parts.includes(message)) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ') || 'unknown error';
}
