// The engine's public surface. Connectors and the session layer import from here only.
export * from './abort.js';
export * from './compaction.js';
export * from './events.js';
export * from './inbox.js';
export * from './interactive.js';
export * from './logger.js';
export * from './messages.js';
export * from './outbound.js';
export * from './permissions.js';
export * from './provider.js';
export * from './summary-compactor.js';
export * from './tools.js';
export { parseToolArguments, diagnoseMangledArguments } from './tool-arguments.js';
export { INTERRUPTED_BY_RESTART, INTERRUPTED_BY_USER, previewOf, type OutputMask } from './tool-calls.js';
export * from './turn-engine.js';
export * from './tool-ledger.js';
export { History, type ToolRound } from './history.js';
export * from './steering.js';
