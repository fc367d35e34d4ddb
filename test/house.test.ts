// The house rules a reader can check by counting: a source file past 400 lines holds two jobs
// and wants splitting along them; every test lives under test/, so the folders of the bot's
// code hold only the bot (the build walks them as they are); and no module imports itself
// back through others, types included: a cycle means two files share something that belongs
// in a third both can import (a dynamic `import()` is a deliberate late load and not counted).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
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

/** The repository files a source file imports or re-exports from, statically (types included). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    const target = join(dirname(file), specifier.text);
    const candidates = [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts')];
    const resolved = candidates.find((candidate) => existsSync(join(ROOT, candidate)) && SOURCE_FILE.test(candidate));
    if (resolved) found.push(resolved);
  }
  return found;
}

/** Each import cycle once, as the files around it (a depth-first walk; a back edge closes a cycle). */
function importCycles(files: string[]): string[][] {
  const edges = new Map(files.map((file) => [file, importsOf(file)]));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

describe('the house rules', () => {
  it(`no source file in ${SOURCE_FOLDERS.join('/, ')}/ passes ${MAX_LINES} lines`, () => {
    const tooLong = filesUnder(SOURCE_FOLDERS)
      .filter((file) => SOURCE_FILE.test(file))
      .map((file) => ({ file, lines: lineCount(readFileSync(join(ROOT, file), 'utf8')) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(
      tooLong,
      `files past ${MAX_LINES} lines (each holds two jobs; split it along them):\n${tooLong.join('\n')}`,
    ).toEqual([]);
  });

  it('every test lives under test/, none beside the code', () => {
    const strayTests = filesUnder(SOURCE_FOLDERS).filter((file) => /\.test\.(ts|js|mjs)$/.test(file));
    expect(
      strayTests,
      `tests outside test/ (move each to the test/ folder named for its code):\n${strayTests.join('\n')}`,
    ).toEqual([]);
  });

  it("no import cycles in the bot's code, type-only imports included", () => {
    const cycles = importCycles(filesUnder(SOURCE_FOLDERS).filter((file) => SOURCE_FILE.test(file)));
    expect(
      cycles.map((cycle) => cycle.join(' -> ')),
      'move what both sides share into a file both can import',
    ).toEqual([]);
  });
});
