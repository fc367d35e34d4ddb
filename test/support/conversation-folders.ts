// Where a test finds what a conversation wrote: with WORKSPACE_SCOPE=thread (the default) each
// thread works in a folder of its own under WORKSPACE_DIR (src/tools/conversation-folder.ts).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { conversationFolderName, type ConversationKey } from '../../src/tools/conversation-folder.js';

/** The folder thread `key` works in. */
export function threadFolder(workspaceDir: string, key: ConversationKey): string {
  return join(workspaceDir, conversationFolderName('thread', key));
}

/**
 * `parts` inside the one conversation folder WORKSPACE_DIR holds, for a test with a single
 * thread whose ids it does not pick. Before any conversation has a folder, a path that does
 * not exist (reading it fails as reading a missing file does); with more than one, an error.
 */
export function inOnlyConversation(workspaceDir: string, ...parts: string[]): string {
  let folders: string[];
  try {
    folders = readdirSync(workspaceDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    folders = [];
  }
  if (folders.length > 1)
    throw new Error(`expected one conversation folder in ${workspaceDir}, found ${folders.join(', ')}`);
  return join(workspaceDir, folders[0] ?? 'no-conversation-yet', ...parts);
}
