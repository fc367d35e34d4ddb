// The built-in tools' public surface: the per-session factory, the grant roots it is given,
// and the conversation folders a session opens and removes.
export * from './builtin-tools.js';

export { openConversationFolder, removeThreadFolder } from './conversation-folder.js';
export { parseGrantRoots } from './grant-rules.js';
