// McpManager: every configured MCP server, as one set of engine tools. The one idea: a
// server that does not come up is a warning, not an outage. All servers connect in
// parallel, each within a deadline; one that fails (a command that does not exist, a child
// that exits, a refused or silent URL) is reported and logged, and the agent starts with
// the others. `close()` takes every connection down and waits for every child to exit.
import type { ToolDefinition } from '../engine/index.js';
import type { McpConfig, McpServerConfig } from './config.js';
import type { McpConnection, McpLogger } from './connection.js';
import { mcpToolDefinition } from './mcp-tool.js';
import { DEFAULT_MAX_RESULT_CHARS } from './result-text.js';
import { engineToolName } from './tool-names.js';

/** Generous: an `npx -y some-server` downloads its package on first start. */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/**
 * The SDK's own default is 60 s, which cuts off honest long tools (a build, a crawl). The
 * user's stop ends any call at once; this only catches a server that wedged.
 */
const DEFAULT_CALL_TIMEOUT_MS = 5 * 60_000;

export interface McpManagerOptions {
  logger?: McpLogger;
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  /** Longer tool results are cut, with a note saying how much. */
  maxResultChars?: number;
  /** How this agent introduces itself in the MCP handshake. */
  clientInfo?: { name: string; version: string };
}

export interface McpStartFailure {
  server: string;
  error: string;
}

export interface McpStartReport {
  connected: { server: string; tools: number }[];
  failures: McpStartFailure[];
}

export interface McpServerStatus {
  server: string;
  transport: 'stdio' | 'http';
  /** The child process, for stdio servers. */
  pid?: number;
  /** Engine tool names, as the model sees them. */
  tools: string[];
}

type ConnectOutcome =
  | { config: McpServerConfig; connection: McpConnection; error?: undefined }
  | { config: McpServerConfig; connection?: undefined; error: string };

const silentLogger: McpLogger = { warn: () => undefined };

export class McpManager {
  private readonly logger: McpLogger;
  private readonly connectTimeoutMs: number;
  private readonly callTimeoutMs: number;
  private readonly maxResultChars: number;
  private readonly clientInfo: { name: string; version: string };
  /** Aborted by `close()`, so connects still in flight give up at once. */
  private readonly stopping = new AbortController();
  private starting: Promise<McpStartReport> | null = null;
  private servers: { connection: McpConnection; tools: ToolDefinition[] }[] = [];
  /** Every engine tool name of every connected server: what the operations side may name (src/ops/tool-names.ts). */
  private readonly toolNames = new Set<string>();

  constructor(options: McpManagerOptions = {}) {
    this.logger = options.logger ?? silentLogger;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.maxResultChars = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
    this.clientInfo = options.clientInfo ?? { name: 'chat-agent', version: '0.1.0' };
  }

  /** Connect to every server. Never throws for a server that fails: see `failures`. */
  start(config: McpConfig): Promise<McpStartReport> {
    if (this.starting) throw new Error('McpManager.start() was already called');
    if (this.stopping.signal.aborted) throw new Error('McpManager is closed');
    this.starting = this.connectAll(config.servers, config.skipped ?? []);
    return this.starting;
  }

  /** Every tool of every connected server, named `<server>__<tool>`. */
  tools(): ToolDefinition[] {
    return this.servers.flatMap((server) => server.tools);
  }

  /** Whether a connected server offers a tool by this engine name. */
  hasTool(name: string): boolean {
    return this.toolNames.has(name);
  }

  status(): McpServerStatus[] {
    return this.servers.map(({ connection, tools }) => {
      const status: McpServerStatus = {
        server: connection.server,
        transport: connection.transport,
        tools: tools.map((tool) => tool.name),
      };
      if (connection.pid !== undefined) status.pid = connection.pid;
      return status;
    });
  }

  /** Disconnect everything; resolves when every child process has exited. Idempotent. */
  async close(): Promise<void> {
    this.stopping.abort();
    // A start in flight settles quickly once aborted; what it connected is closed below.
    await this.starting?.catch(() => undefined);
    const servers = this.servers;
    this.servers = [];
    await Promise.all(servers.map(({ connection }) => connection.close()));
  }

  private async connectAll(configs: McpServerConfig[], skipped: McpStartFailure[]): Promise<McpStartReport> {
    const outcomes = configs.length > 0 ? await this.connectEach(configs) : [];

    const report: McpStartReport = { connected: [], failures: [] };
    // Left out by the config (a `${VAR}` not set): reported like a server that did not start.
    for (const failure of skipped) {
      report.failures.push(failure);
      this.logger.warn(failure, 'MCP server failed to start; going on without it');
    }
    // Named in config order, not in order of arrival, so every start names tools alike.
    const taken = new Set<string>();
    for (const outcome of outcomes) {
      const server = outcome.config.name;
      if (!outcome.connection) {
        report.failures.push({ server, error: outcome.error });
        this.logger.warn({ server, error: outcome.error }, 'MCP server failed to start; going on without it');
        continue;
      }
      if (this.stopping.signal.aborted) {
        // close() was called while this one connected. It waits for this start to end,
        // so what connected is closed here instead of being handed out.
        await outcome.connection.close();
        continue;
      }
      const tools = outcome.connection.tools.map((tool) => {
        const name = engineToolName(server, tool.name, taken);
        taken.add(name);
        return mcpToolDefinition(outcome.connection, tool, name, { maxResultChars: this.maxResultChars });
      });
      this.servers.push({ connection: outcome.connection, tools });
      for (const tool of tools) this.toolNames.add(tool.name);
      report.connected.push({ server, tools: tools.length });
      this.logger.debug?.({ server, tools: tools.map((tool) => tool.name) }, 'MCP server connected');
    }
    return report;
  }

  /**
   * Every server connected in parallel. The MCP SDK (with the JSON Schema validator it brings,
   * about 15 MB) is loaded here, not at start-up: a bot without MCP servers would hold it for nothing.
   */
  private async connectEach(configs: McpServerConfig[]): Promise<ConnectOutcome[]> {
    const { connectServer } = await import('./connection.js');
    return Promise.all(
      configs.map(async (config): Promise<ConnectOutcome> => {
        try {
          const connection = await connectServer(config, {
            timeoutMs: this.connectTimeoutMs,
            callTimeoutMs: this.callTimeoutMs,
            signal: this.stopping.signal,
            logger: this.logger,
            clientInfo: this.clientInfo,
          });
          return { config, connection };
        } catch (error) {
          return { config, error: error instanceof Error ? error.message : String(error) };
        }
      }),
    );
  }
}
