// The built-in tools' public surface: the per-session factory, and the pieces a session
// or a connector may want on their own (workspace confinement, output caps).
export * from './builtin-tools.js';
export { capOutput, DEFAULT_MAX_OUTPUT_CHARS, MiddleTrimmedText } from './output.js';
export { Workspace } from './workspace.js';
export {
  conversationFolderName,
  openConversationFolder,
  removeThreadFolder,
  type ConversationKey,
} from './conversation-folder.js';
export { parseGrantRoots, SYSTEM_FOLDERS } from './grant-rules.js';
