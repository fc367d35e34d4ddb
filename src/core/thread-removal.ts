// What goes when a thread is forgotten or expires: its votes, what its people were viewing,
// and its own files, wherever a profile put them (never a channel's folder, never WORKSPACE_DIR).
import { resolve } from 'node:path';
import type { ViewingContexts } from '../context/viewing-contexts.js';
import type { FeedbackBook } from '../feedback/feedback-book.js';
import { removeThreadUploads } from '../files/index.js';
import type { Profiles } from '../profiles/profiles.js';
import type { ShellStartup } from '../sandbox/shell-startup.js';
import { sessionIdOf, type SessionKey } from '../store/session-store.js';
import { conversationFolderName } from '../tools/conversation-folder.js';
import { removeThreadFolder } from '../tools/index.js';

export function threadRemover(deps: {
  feedback: FeedbackBook;
  viewing: ViewingContexts;
  profiles: Profiles;
  /** WORKSPACE_DIR, resolved. */
  baseWorkspaceDir: string;
  shell: ShellStartup;
}): (key: SessionKey) => Promise<void> {
  const { feedback, viewing, profiles, baseWorkspaceDir, shell } = deps;
  return async (key) => {
    await feedback.forgetSession(sessionIdOf(key));
    await viewing.forget(key);
    // Wherever a profile put the thread's folder: the environment's, and each profile's.
    for (const { workspaceDir, scope } of profiles.folders(baseWorkspaceDir)) {
      // A thread's folder on a disk of its own (WORKSPACE_DISKS): the disk goes first, then the empty folder.
      await shell.disks?.forget(resolve(workspaceDir, conversationFolderName('thread', key)));
      await removeThreadFolder(workspaceDir, key);
      // In a shared folder, the thread's uploads have a folder of their own (src/files/conversation-files.ts).
      if (scope === 'shared') await removeThreadUploads(workspaceDir, scope, key);
      else if (scope === 'channel') {
        const channelFolder = resolve(workspaceDir, conversationFolderName('channel', key));
        // From the channel's disk, mounted for it if no session holds it now.
        const remove = () => removeThreadUploads(channelFolder, scope, key);
        await (shell.disks ? shell.disks.visit(channelFolder, remove) : remove());
      }
    }
  };
}
