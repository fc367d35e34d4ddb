// One conversation's side of the files room, as the core wires it into a session's engine:
// where its uploads go, the input preparer that fetches a message's files when a turn takes
// it, and the view that makes references into model input at each call.
//
// Uploads live in the conversation's folder under `uploads/`. When a channel or the whole
// workspace is shared between threads (WORKSPACE_SCOPE), each thread's uploads get a folder
// of their own inside it, so /forget and retention can remove one thread's files and no other's.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { InputPreparer, MessageSource } from '../engine/index.js';
import { conversationFolderName, type ConversationKey, type WorkspaceScope } from '../tools/conversation-folder.js';
import { folderPathBelow, removePinnedTree } from '../tools/pinned-folder.js';
import type { FileIntake, UploadPlace } from './intake.js';
import { userContentWithFiles } from './user-turn.js';

const UPLOADS_FOLDER = 'uploads';

export function uploadPlace(folder: string, scope: WorkspaceScope, key: ConversationKey): UploadPlace {
  const uploads =
    scope === 'thread'
      ? path.join(folder, UPLOADS_FOLDER)
      : path.join(folder, UPLOADS_FOLDER, conversationFolderName('thread', key));
  return { folder, uploads };
}

export function inputPreparer(intake: FileIntake, place: UploadPlace): InputPreparer {
  return async ({ text, attachments, source }, signal) => {
    const result = await intake.receive(place, attachments, signal, requesterOf(source));
    return { content: userContentWithFiles(text, result), problems: result.problems };
  };
}

/**
 * Who shared a message's files, as the media preparers tell people apart when they take
 * turns: one user of one workspace of one platform. A message without a source is nobody's
 * in particular, and such messages share one turn.
 */
function requesterOf(source: MessageSource | undefined): string {
  return source ? [source.platform, source.workspace ?? '', source.userId ?? ''].join(':') : '';
}

/**
 * A thread's uploads in a shared folder (channel or workspace scope), removed with the thread.
 * In thread scope they go with the thread's own folder (removeThreadFolder).
 */
export async function removeThreadUploads(folder: string, scope: WorkspaceScope, key: ConversationKey): Promise<void> {
  if (scope === 'thread') return;
  let root: string;
  try {
    root = await realpath(folder);
  } catch {
    return; // no folder, so no uploads in it
  }
  // Through held folders only (src/tools/pinned-folder.ts): a command still running in the
  // shared folder can swap `uploads` or the thread's folder for a link at any moment, and
  // what a link leads to is never removed.
  await removePinnedTree(folderPathBelow(root, uploadPlace(root, scope, key).uploads));
}
