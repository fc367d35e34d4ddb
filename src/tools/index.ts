// The built-in tools' public surface: the per-session factory, and the pieces a session
// or a connector may want on their own (workspace confinement, output caps).
export * from './builtin-tools.js';
export { capOutput, DEFAULT_MAX_OUTPUT_CHARS, MiddleTrimmedText } from './output.js';
export {
  GrantRefusedError,
  Workspace,
  WorkspaceEscapeError,
  type GrantPreview,
  type WorkspaceOptions,
} from './workspace.js';
export {
  conversationFolderName,
  openConversationFolder,
  removeThreadFolder,
  type ConversationKey,
  type WorkspaceScope,
} from './conversation-folder.js';
export {
  botCanWrite,
  parseGrantRoots,
  systemFolderOf,
  SYSTEM_FOLDERS,
  type DirectoryAccess,
  type ShellWriteCheck,
} from './grant-rules.js';
