// Each conversation's own folder under WORKSPACE_DIR (WORKSPACE_SCOPE), and its removal when
// the thread is forgotten or expires.
//
// One idea: a conversation sees only its own files. With `thread` (the default) each thread
// gets a folder, with `channel` each channel; the file tools, the shell's working directory
// and the sandbox's writable roots are that folder, so thread B cannot read, edit or run
// what thread A left (a planted `.git/config` included). `shared` is the old single folder.
//
// A folder's name is readable and stable: the platform, team or server, channel (and thread)
// ids with anything but letters, digits, `.`, `_` and `-` made `_`, then 8 hex digits of a
// hash of the exact ids, so two conversations whose ids sanitise alike never share a folder
// (`slack-T024BE7LD-C0123ABCD-1700000000.000100-3fa9c21e`).
//
// Both opening and removing judge what is really there: in `shared` scope a command could have
// left a link named like a future conversation's folder, so a folder that is not a plain
// directory directly in WORKSPACE_DIR is refused, and removal never follows a link.
import { createHash } from 'node:crypto';
import { closeSync, constants, fchownSync, lstatSync, mkdirSync, openSync, realpathSync } from 'node:fs';
import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

export type WorkspaceScope = 'thread' | 'channel' | 'shared';

/** Who a conversation is: the session key's parts (src/store/session-store.ts SessionKey). */
export interface ConversationKey {
  platform: string;
  /** The Slack team, the Discord server (guild), or the platform's stand-in for none. */
  workspace: string;
  channel: string;
  thread: string;
}

/** Each id part is cut to this many characters in the name (the hash keeps names unique). */
const PART_CHARS = 48;

/** The folder's name in WORKSPACE_DIR for a conversation's thread or channel. */
export function conversationFolderName(scope: 'thread' | 'channel', key: ConversationKey): string {
  const parts =
    scope === 'thread'
      ? [key.platform, key.workspace, key.channel, key.thread]
      : [key.platform, key.workspace, key.channel];
  const hash = createHash('sha256')
    .update(JSON.stringify([scope, ...parts]))
    .digest('hex')
    .slice(0, 8);
  const readable = parts
    .filter((part) => part !== '')
    .map((part) => part.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, PART_CHARS));
  return [...readable, hash].join('-');
}

/**
 * The conversation's folder, created if missing (WORKSPACE_DIR too): WORKSPACE_DIR itself in
 * `shared` scope. Throws when the name is taken by something other than a plain folder (a
 * link, a file): the tools must never work wherever such a thing leads. A new folder is
 * given to `owner` when there is one (the run-as user of a root bot's sandbox).
 */
export function openConversationFolder(
  workspaceDir: string,
  scope: WorkspaceScope,
  key: ConversationKey,
  owner?: { uid: number; gid: number },
): string {
  mkdirSync(workspaceDir, { recursive: true });
  const base = realpathSync(workspaceDir);
  if (scope === 'shared') return base;
  const folder = path.join(base, conversationFolderName(scope, key));
  try {
    mkdirSync(folder, { mode: 0o700 });
    // A root bot's commands run as another uid (src/sandbox/run-as.ts): the folder is theirs.
    // Given through a descriptor opened without following a link: where WORKSPACE_DIR is
    // also a shared folder (a profile's), a command there can swap the new name for a link
    // before the chown, and a chown by name would hand over whatever it leads to.
    if (owner) giveFolder(folder, owner);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stats = lstatSync(folder);
  if (!stats.isDirectory() || stats.isSymbolicLink()) {
    throw new Error(
      `this conversation's folder ${folder} is not a plain folder (a link or a file has its name); move it out of WORKSPACE_DIR`,
    );
  }
  return folder;
}

function giveFolder(folder: string, owner: { uid: number; gid: number }): void {
  const fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchownSync(fd, owner.uid, owner.gid);
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove a thread's own folder (WORKSPACE_SCOPE=thread) with everything in it, if there is
 * one; resolves whether something was removed. Never a channel's folder, never WORKSPACE_DIR:
 * the name is the thread's alone. A link is removed as a link, never followed, at any depth
 * (fs.rm lstat()s each entry). Call it once the thread's shell has stopped: a command still
 * running there could swap a folder for a link between the look and the removal.
 */
export async function removeThreadFolder(workspaceDir: string, key: ConversationKey): Promise<boolean> {
  let base: string;
  try {
    base = realpathSync(workspaceDir);
  } catch {
    return false; // no WORKSPACE_DIR, so no folder in it
  }
  const folder = path.join(base, conversationFolderName('thread', key));
  try {
    await lstat(folder);
  } catch {
    return false;
  }
  try {
    await rm(folder, { recursive: true, force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw error;
    // A command left read-only folders (Go's module cache does): make them writable, and again.
    await makeWritable(folder);
    await rm(folder, { recursive: true, force: true });
  }
  return true;
}

/** Give the owner write and search rights on every real folder under `folder` (links are not followed). */
async function makeWritable(folder: string): Promise<void> {
  const stats = await lstat(folder);
  if (!stats.isDirectory()) return;
  await chmod(folder, 0o700);
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (entry.isDirectory()) await makeWritable(path.join(folder, entry.name));
  }
}
