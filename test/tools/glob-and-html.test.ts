import { describe, expect, it } from 'vitest';
import { globMatcher } from '../../src/tools/glob.js';
import { htmlToText } from '../../src/tools/index.js';

describe('glob filters for search', () => {
  it.each([
    ['*.ts', 'src/a.ts', true],
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.tsx', false],
    ['*.{ts,tsx}', 'src/deep/a.tsx', true],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/deep/a.ts', false],
    ['src/**/*.ts', 'src/a.ts', true],
    ['src/**/*.ts', 'src/deep/er/a.ts', true],
    ['src/**/*.ts', 'lib/a.ts', false],
    ['./src/**', 'src/x/y', true],
    ['file?.md', 'docs/file1.md', true],
    ['file?.md', 'docs/file10.md', false],
    ['[abc].txt', 'b.txt', true],
    ['[!abc].txt', 'b.txt', false],
    ['a.b', 'axb', false],
    ['(x)+.js', '(x)+.js', true],
  ])('%j on %j → %s', (glob, file, expected) => {
    expect(globMatcher(glob)(file)).toBe(expected);
  });

  it('refuses an empty glob or unbalanced braces', () => {
    expect(() => globMatcher('  ')).toThrow(/empty/);
    expect(() => globMatcher('*.{ts')).toThrow(/unbalanced braces/);
  });
});

describe('HTML reduced to text', () => {
  it('drops scripts, styles and comments, even when unclosed', () => {
    expect(htmlToText('<p>keep</p><script>drop()</script><style>.x{}</style><!-- gone --><p>also</p><script>never closed').text).toBe(
      'keep\n\nalso',
    );
  });

  it('keeps unknown entities as written and never invents text from names like "constructor"', () => {
    expect(htmlToText('<p>&constructor; &bogus; &lt;tag&gt; &#0;</p>').text).toBe('&constructor; &bogus; <tag> &#0;');
  });

  it('turns table cells and list items into readable lines', () => {
    expect(htmlToText('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>').text).toBe('a b\nc d');
  });
});
