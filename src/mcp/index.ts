// The MCP layer's public surface: load mcp.json, start a McpManager, hand its tools() to
// the engine, close() it on shutdown.
export { loadMcpConfig, type McpConfig } from './config.js';
export { McpManager, type McpStartReport } from './manager.js';
