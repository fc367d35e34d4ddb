// The MCP layer's public surface: load mcp.json, start a McpManager, hand its tools() to
// the engine, close() it on shutdown.
export { loadMcpConfig, parseMcpConfig, McpConfigError, type McpConfig, type McpServerConfig } from './config.js';
export type { McpLogger } from './connection.js';
export {
  McpManager,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  type McpManagerOptions,
  type McpServerStatus,
  type McpStartFailure,
  type McpStartReport,
} from './manager.js';
export { McpToolError } from './mcp-tool.js';
