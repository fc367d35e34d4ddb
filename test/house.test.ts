// The house rules a reader can check by counting: a source file past 400 lines holds two jobs
// and wants splitting along them, and every test lives under test/, so the folders of the bot's
// code hold only the bot (the build walks them as they are).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The folders of the bot's own code: the core, the connectors and the start and build scripts. */
const SOURCE_FOLDERS = ['src', 'connectors', 'bin'];
const SOURCE_FILE = /\.(ts|js|mjs)$/;
const MAX_LINES = 400;

/** Every file under the source folders, relative to the repository, sorted. */
function filesUnder(folders: string[]): string[] {
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(relative(ROOT, path));
    }
  };
  for (const folder of folders) walk(join(ROOT, folder));
  return files.sort();
}

/** Lines as an editor counts them: a final newline ends the last line, it does not start one. */
function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

describe('the house rules', () => {
  it(`no source file in ${SOURCE_FOLDERS.join('/, ')}/ passes ${MAX_LINES} lines`, () => {
    const tooLong = filesUnder(SOURCE_FOLDERS)
      .filter((file) => SOURCE_FILE.test(file))
      .map((file) => ({ file, lines: lineCount(readFileSync(join(ROOT, file), 'utf8')) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(tooLong, `files past ${MAX_LINES} lines (each holds two jobs; split it along them):\n${tooLong.join('\n')}`).toEqual([]);
  });

  it('every test lives under test/, none beside the code', () => {
    const strayTests = filesUnder(SOURCE_FOLDERS).filter((file) => /\.test\.(ts|js|mjs)$/.test(file));
    expect(strayTests, `tests outside test/ (move each to the test/ folder named for its code):\n${strayTests.join('\n')}`).toEqual([]);
  });
});
