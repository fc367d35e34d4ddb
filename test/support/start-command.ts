// The command `npm start` runs, read from package.json's `start` script (`exec node <args>`),
// so a test that spawns the bot runs exactly what a user's `npm start` does (today the
// compiled bot, bin/start.mjs), only without npm in between: its paths (and an `--import`ed
// package) are made absolute, so the child may run in any folder, and `node` is this very binary.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface StartCommand {
  command: string;
  args: string[];
}

/** `npm start`'s command, with `extra` arguments (`--playground`, `--check`) after it. */
export function startCommand(extra: string[] = []): StartCommand {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const words = (manifest.scripts?.start ?? '')
    .replace(/^exec\s+/, '')
    .trim()
    .split(/\s+/);
  if (words[0] !== 'node')
    throw new Error(`package.json's start script is not "exec node …": ${manifest.scripts?.start}`);
  const args = words.slice(1).map((word, i, all) => {
    // `--import tsx`: a package, found from the project, not from the child's folder.
    if (all[i - 1] === '--import' && !/^[./]/.test(word))
      return pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve(word)).href;
    return !word.startsWith('-') && existsSync(join(ROOT, word)) ? join(ROOT, word) : word;
  });
  return { command: process.execPath, args: [...args, ...extra] };
}
