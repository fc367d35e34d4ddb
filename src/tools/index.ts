// The built-in tools' public surface: the per-session factory, and the pieces a session
// or a connector may want on their own (workspace confinement, output caps).
export * from './builtin-tools.js';
export { capOutput, DEFAULT_MAX_OUTPUT_CHARS, MiddleTrimmedText } from './output.js';
export { GrantRefusedError, Workspace, WorkspaceEscapeError, type WorkspaceOptions } from './workspace.js';
export { htmlToText } from './html-text.js';

/**
 * Every built-in tool's name, as the model sees it: what DISABLED_TOOLS may name (a test
 * keeps this list and createBuiltinTools in step).
 */
export const BUILTIN_TOOL_NAMES = ['read_file', 'list_dir', 'search', 'write_file', 'edit_file', 'run_shell', 'fetch_url'] as const;
