// The built-in tools' public surface: the per-session factory, and the pieces a session
// or a connector may want on their own (workspace confinement, output caps).
export * from './builtin-tools.js';

export { openConversationFolder, removeThreadFolder } from './conversation-folder.js';
export { parseGrantRoots } from './grant-rules.js';
