// The caps a message's files are held to when it is delivered, from what the platform says of
// them (how many, each one's announced size): a file past a cap is refused there, privately to
// the person who shared it (the connector whispers it), and never fetched. The intake holds the
// same caps again on the real bytes (a size nobody announced), with a note in the thread.
import type { IncomingFile } from '../engine/index.js';
import { displayName } from './intake.js';
import { formatBytes } from './sizes.js';

export interface DeliveryFileCaps {
  /** MAX_FILE_BYTES */
  maxFileBytes: number;
  /** MAX_FILES_PER_MESSAGE */
  maxFilesPerMessage: number;
}

export interface ScreenedFiles {
  kept: IncomingFile[];
  /** One line per refused file, naming the cap. */
  refusals: string[];
}

export function screenFiles(files: readonly IncomingFile[], caps: DeliveryFileCaps): ScreenedFiles {
  const kept: IncomingFile[] = [];
  const refusals: string[] = [];
  for (const file of files) {
    const name = displayName(file.name);
    if (file.size !== undefined && file.size > caps.maxFileBytes) {
      refusals.push(
        `${name}: ${formatBytes(file.size)} is over the ${formatBytes(caps.maxFileBytes)} one file may be (MAX_FILE_BYTES)`,
      );
    } else if (kept.length >= caps.maxFilesPerMessage) {
      refusals.push(
        `${name}: a message may bring at most ${caps.maxFilesPerMessage} file${caps.maxFilesPerMessage === 1 ? '' : 's'} (MAX_FILES_PER_MESSAGE)`,
      );
    } else {
      kept.push(file);
    }
  }
  return { kept, refusals };
}

/** What the person who shared the files is told, privately. */
export function refusedFilesText(refusals: readonly string[]): string {
  return `${refusals.length === 1 ? 'This file was' : 'These files were'} not taken, so the bot does not see ${refusals.length === 1 ? 'it' : 'them'}:\n${refusals.map((line) => `• ${line}`).join('\n')}`;
}
