// The `.env` file at rest: it holds every token and key the bot has, so start-up warns when
// other accounts on the machine can read it (or change it) and says how to fix it.
import { statSync } from 'node:fs';

/**
 * A warning when `path` is readable or writable by anyone but its owner, else null (also
 * when the file does not exist, or on Windows, where modes do not describe access).
 *
 * Group access counts too: on many systems every account shares a default group (`staff` on
 * macOS, `users` on some Linux distributions), so group-readable is often all-readable.
 * Writable by others is worse than readable: whoever can edit the file can point
 * OPENAI_BASE_URL at their own server and collect the key with the next request.
 */
export function envFileWarning(path: string, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'win32') return null;
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return null;
  }
  const who: string[] = [];
  if (mode & 0o004) who.push('readable by every account on this machine');
  else if (mode & 0o040) who.push("readable by the file's group");
  if (mode & 0o022) who.push(mode & 0o002 ? 'writable by every account' : "writable by the file's group");
  if (who.length === 0) return null;
  return `${path} holds the bot's secrets but is ${who.join(' and ')} (mode ${mode.toString(8).padStart(3, '0')}). Fix: chmod 600 ${path}`;
}
