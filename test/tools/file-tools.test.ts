import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRecord, asText, createSandbox, type Sandbox } from './tool-kit.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox({ maxOutputChars: 2_000 });
});
afterEach(async () => {
  await sandbox.cleanup();
});

async function put(relative: string, content: string | Buffer): Promise<void> {
  const target = path.join(sandbox.workspace, relative);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, content);
}

const numbered = (count: number): string => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('read_file', () => {
  it('returns the content verbatim', async () => {
    await put('notes.md', '# Notes\n\n  indented\n');
    expect(await sandbox.run('read_file', { path: 'notes.md' })).toBe('# Notes\n\n  indented');
  });

  it('returns a line range, and says which lines these are', async () => {
    await put('long.txt', numbered(50));
    expect(await sandbox.run('read_file', { path: 'long.txt', startLine: 10, endLine: 12 })).toBe(
      'line 10\nline 11\nline 12\n[lines 10–12 of 50]',
    );
    expect(await sandbox.run('read_file', { path: 'long.txt', startLine: 49 })).toBe(
      'line 49\nline 50\n[lines 49–50 of 50]',
    );
  });

  it('refuses a range past the end or backwards', async () => {
    await put('short.txt', numbered(3));
    await expect(sandbox.run('read_file', { path: 'short.txt', startLine: 9 })).rejects.toThrow(
      /startLine 9 is past the end of short\.txt \(3 lines\)/,
    );
    await expect(sandbox.run('read_file', { path: 'short.txt', startLine: 3, endLine: 2 })).rejects.toThrow(
      /endLine \(2\) is before startLine \(3\)/,
    );
  });

  it('refuses a binary file clearly', async () => {
    await put('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    await expect(sandbox.run('read_file', { path: 'image.png' })).rejects.toThrow(
      'image.png is a binary file (7 bytes); only text files can be read',
    );
  });

  it('caps a large file and says how to read the rest', async () => {
    await put('big.txt', numbered(1000));
    const text = asText(await sandbox.run('read_file', { path: 'big.txt' }));
    expect(text.length).toBeLessThanOrEqual(2_000);
    expect(text.startsWith('line 1\nline 2\n')).toBe(true);
    expect(text).toMatch(/\[… [\d,]+ more characters cut\]/);
    expect(text).toMatch(/pass startLine\/endLine to read the rest\]$/);
  });

  it('says what is wrong with a missing file or a directory', async () => {
    await expect(sandbox.run('read_file', { path: 'nope.txt' })).rejects.toThrow('no such file or directory: nope.txt');
    await mkdir(path.join(sandbox.workspace, 'dir'));
    await expect(sandbox.run('read_file', { path: 'dir' })).rejects.toThrow(
      'dir is a directory; use list_dir to see what is in it',
    );
  });

  it('an empty file says so', async () => {
    await put('empty.txt', '');
    expect(await sandbox.run('read_file', { path: 'empty.txt' })).toBe('(empty.txt is empty)');
  });
});

describe('list_dir', () => {
  beforeEach(async () => {
    await put('README.md', 'hello');
    await put('src/index.ts', 'export {};\n');
    await put('src/deep/leaf.ts', '');
    await put('node_modules/pkg/index.js', '');
    await symlink('src/index.ts', path.join(sandbox.workspace, 'entry'));
  });

  it('lists one level with types and sizes', async () => {
    expect(await sandbox.run('list_dir', {})).toBe(
      ['README.md (5 bytes)', 'entry -> src/index.ts', 'node_modules/', 'src/'].join('\n'),
    );
  });

  it('lists recursively, nearest first, without entering node_modules', async () => {
    expect(await sandbox.run('list_dir', { path: '.', recursive: true })).toBe(
      [
        'README.md (5 bytes)',
        'entry -> src/index.ts',
        'node_modules/ (not entered)',
        'src/',
        'src/deep/',
        'src/index.ts (11 bytes)',
        'src/deep/leaf.ts (0 bytes)',
      ].join('\n'),
    );
  });

  it('stops at the cap and says so', async () => {
    const text = asText(await sandbox.run('list_dir', { recursive: true, maxEntries: 2 }));
    expect(text).toBe(
      'README.md (5 bytes)\nentry -> src/index.ts\n[stopped at 2 entries; list a subdirectory to see more]',
    );
  });

  it('refuses a file, and says an empty directory is empty', async () => {
    await expect(sandbox.run('list_dir', { path: 'README.md' })).rejects.toThrow(/is a file, not a directory/);
    await mkdir(path.join(sandbox.workspace, 'void'));
    expect(await sandbox.run('list_dir', { path: 'void' })).toBe('(void is empty)');
  });
});

describe('search', () => {
  beforeEach(async () => {
    await put('src/a.ts', 'const answer = 42;\nexport function hello() {}\n');
    await put('src/b.test.ts', 'hello("world");\n');
    await put('docs/guide.md', 'Say Hello to the guide\n');
    await put('node_modules/dep/index.js', 'hello from a dependency\n');
    await put('.git/config', 'hello from git\n');
  });

  it('returns path:line: text matches, skipping node_modules, .git and binary files', async () => {
    await put('blob.bin', Buffer.concat([Buffer.from('hello'), Buffer.from([0, 1, 2])]));
    const text = asText(await sandbox.run('search', { pattern: 'hello' }));
    expect(text).toBe(
      'src/a.ts:2: export function hello() {}\nsrc/b.test.ts:1: hello("world");\n[1 binary file(s) skipped]',
    );
  });

  it('takes a regular expression, or literal text, case-insensitively if asked', async () => {
    expect(await sandbox.run('search', { pattern: 'answer = \\d+' })).toBe('src/a.ts:1: const answer = 42;');
    expect(await sandbox.run('search', { pattern: 'hello("', literal: true })).toBe('src/b.test.ts:1: hello("world");');
    expect(await sandbox.run('search', { pattern: 'say hello', ignoreCase: true })).toBe(
      'docs/guide.md:1: Say Hello to the guide',
    );
  });

  it('filters by glob and by path', async () => {
    expect(await sandbox.run('search', { pattern: 'hello', glob: '*.test.ts' })).toBe(
      'src/b.test.ts:1: hello("world");',
    );
    expect(await sandbox.run('search', { pattern: 'hello', glob: 'src/**/*.{ts,js}' })).toBe(
      'src/a.ts:2: export function hello() {}\nsrc/b.test.ts:1: hello("world");',
    );
    expect(await sandbox.run('search', { pattern: 'e', path: 'docs' })).toBe('docs/guide.md:1: Say Hello to the guide');
    expect(await sandbox.run('search', { pattern: 'answer', path: 'src/a.ts' })).toBe('src/a.ts:1: const answer = 42;');
  });

  it('says when nothing matched, and where it looked', async () => {
    expect(await sandbox.run('search', { pattern: 'zebra', path: 'src' })).toBe(
      'no matches for /zebra/ in src (2 file(s) searched; .git and node_modules not entered)',
    );
  });

  it('caps the matches and says so', async () => {
    await put('many.txt', Array.from({ length: 30 }, () => 'needle').join('\n'));
    const text = asText(await sandbox.run('search', { pattern: 'needle', maxResults: 5 }));
    expect(text.split('\n').filter((line) => line.startsWith('many.txt:'))).toHaveLength(5);
    expect(text).toMatch(/\[stopped at 5 matches; narrow the search with path or glob\]$/);
  });

  it('shows a long line around its match, the same for a regular expression and for literal text', async () => {
    await put('min.js', `${'x'.repeat(1000)}needle${'y'.repeat(1000)}\r\n`);
    const regex = asText(await sandbox.run('search', { pattern: 'ne+dle' }));
    expect(regex).toMatch(/^min\.js:1: …x{100}needley{194}…$/);
    expect(await sandbox.run('search', { pattern: 'NEEDLE', literal: true, ignoreCase: true })).toBe(regex);
  });

  it('finds matches in every file of a workspace larger than one batch, in order', async () => {
    const big = `${'filler line\n'.repeat(90_000)}needle\n`;
    for (const name of ['a', 'b', 'c']) await put(`big/${name}.txt`, big);
    expect(await sandbox.run('search', { pattern: '^needle$', path: 'big' })).toBe(
      'big/a.txt:90001: needle\nbig/b.txt:90001: needle\nbig/c.txt:90001: needle',
    );
  });

  it('refuses an invalid regular expression with a hint', async () => {
    await expect(sandbox.run('search', { pattern: 'hello(' })).rejects.toThrow(
      /invalid regular expression: .*pass literal: true/,
    );
  });

  it('does not follow a symlink out of the workspace', async () => {
    await writeFile(path.join(sandbox.outside, 'secret.txt'), 'hello secret\n');
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'escape'));
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workspace, 'secret-link.txt'));
    expect(asText(await sandbox.run('search', { pattern: 'secret' }))).toMatch(/^no matches/);
  });
});

describe('write_file', () => {
  it('creates parent directories and reports the bytes written', async () => {
    expect(await sandbox.run('write_file', { path: 'a/b/c.txt', content: 'héllo' })).toEqual({
      path: 'a/b/c.txt',
      bytesWritten: 6,
      created: true,
    });
    expect(await readFile(path.join(sandbox.workspace, 'a/b/c.txt'), 'utf8')).toBe('héllo');
  });

  it('replaces an existing file', async () => {
    await put('x.txt', 'old');
    expect(asRecord(await sandbox.run('write_file', { path: 'x.txt', content: 'new' })).created).toBe(false);
    expect(await readFile(path.join(sandbox.workspace, 'x.txt'), 'utf8')).toBe('new');
  });

  it('refuses to write over a directory', async () => {
    await mkdir(path.join(sandbox.workspace, 'd'));
    await expect(sandbox.run('write_file', { path: 'd', content: 'x' })).rejects.toThrow(
      'd is a directory; give a file path',
    );
  });
});

describe('edit_file', () => {
  const read = (relative: string) => readFile(path.join(sandbox.workspace, relative), 'utf8');

  it('replaces a unique piece of text', async () => {
    await put('app.ts', 'const a = 1;\nconst b = 2;\n');
    expect(await sandbox.run('edit_file', { path: 'app.ts', old: 'const b = 2;', new: 'const b = 3;' })).toEqual({
      path: 'app.ts',
      replacements: 1,
      bytesWritten: 26,
    });
    expect(await read('app.ts')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('refuses an ambiguous edit, saying how many matches it found', async () => {
    await put('dup.ts', 'x();\nx();\nx();\n');
    await expect(sandbox.run('edit_file', { path: 'dup.ts', old: 'x();', new: 'y();' })).rejects.toThrow(
      'old text matches 3 times in dup.ts; include more surrounding lines to make it unique, or pass replaceAll: true',
    );
    expect(await read('dup.ts')).toBe('x();\nx();\nx();\n');
  });

  it('replaces every occurrence with replaceAll', async () => {
    await put('dup.ts', 'x();\nx();\nx();\n');
    expect(
      asRecord(await sandbox.run('edit_file', { path: 'dup.ts', old: 'x();', new: 'y();', replaceAll: true }))
        .replacements,
    ).toBe(3);
    expect(await read('dup.ts')).toBe('y();\ny();\ny();\n');
  });

  it('refuses when the old text is missing', async () => {
    await put('app.ts', 'const a = 1;\n');
    await expect(sandbox.run('edit_file', { path: 'app.ts', old: 'const  a', new: 'z' })).rejects.toThrow(
      'old text not found in app.ts; read the file again and copy the exact text, including whitespace',
    );
  });

  it('inserts replacement text literally ($& and $1 are not patterns)', async () => {
    await put('money.ts', 'price = PRICE;\n');
    await sandbox.run('edit_file', { path: 'money.ts', old: 'PRICE', new: "'$&1 $1'" });
    expect(await read('money.ts')).toBe("price = '$&1 $1';\n");
  });

  it('keeps a byte-order mark and refuses files that are not UTF-8', async () => {
    await put('bom.txt', '\ufeffkeep me\n');
    await sandbox.run('edit_file', { path: 'bom.txt', old: 'keep', new: 'kept' });
    expect(await readFile(path.join(sandbox.workspace, 'bom.txt'))).toEqual(Buffer.from('\ufeffkept me\n', 'utf8'));
    await put('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await expect(sandbox.run('edit_file', { path: 'latin1.txt', old: 'caf', new: 'tea' })).rejects.toThrow(
      /not valid UTF-8/,
    );
  });
});
