import { describe, expect, it } from 'vitest';
import { globMatcher } from '../../src/tools/glob.js';
import { htmlToText, htmlToTextAsync } from '../../src/tools/html-text.js';

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
    expect(
      htmlToText('<p>keep</p><script>drop()</script><style>.x{}</style><!-- gone --><p>also</p><script>never closed')
        .text,
    ).toBe('keep\n\nalso');
  });

  it('keeps unknown entities as written and never invents text from names like "constructor"', () => {
    // &#0; shows as U+FFFD, as in a browser: never a NUL in the text.
    expect(htmlToText('<p>&constructor; &bogus; &lt;tag&gt; &#0;</p>').text).toBe('&constructor; &bogus; <tag> \ufffd');
  });

  it('decodes every named entity a browser knows, in text and title', () => {
    expect(htmlToText('<title>Caf&eacute; &amp; co</title><p>na&iuml;ve &euro;5 &#x1F600; &nbsp;x</p>')).toEqual({
      title: 'Café & co',
      text: 'naïve €5 😀 x',
    });
  });

  it("reads the title from the head, but not the head itself nor an icon's title", () => {
    const page =
      '<html><head><title>The\n  page</title><meta charset="utf-8"><style>p{}</style></head><body><svg><title>icon</title></svg><h1>Hello</h1><p>World</p></body></html>';
    expect(htmlToText(page)).toEqual({ title: 'The page', text: 'Hello\n\nWorld' });
    expect(htmlToText('<head><title>t</title><body>a head never closed')).toEqual({
      title: 't',
      text: 'a head never closed',
    });
  });

  it('treats a comment or declaration left open as running to the end, as a browser does', () => {
    expect(htmlToText('<p>seen</p><!-- never closed <p>hidden').text).toBe('seen');
    expect(htmlToText('<p>seen</p><!DOCTYPE never closed, nor a tag after it').text).toBe('seen');
    expect(htmlToText('<p>seen</p><? nor this').text).toBe('seen');
    expect(htmlToText('<p>a < b</p>').text).toBe('a < b');
  });

  it('collapses spaces, keeps one blank line between paragraphs, and breaks lines at <br> and <hr>', () => {
    expect(
      htmlToText('<div>  one \t two  </div>\n\n\n\n<div>three<br>four<hr>five</div><ul><li>x<li>y</ul>').text,
    ).toBe('one two\n\nthree\nfour\n---\nfive\n\n- x\n- y');
  });

  it('gives the same text read at once or in slices, whatever falls on a slice boundary', async () => {
    const filler = 'x'.repeat(64 * 1024 - 3);
    const page = `<p>${filler}<a href="q">&eacute;t&eacute;</a></p>  \n\n\n <p>next   para</p><title>late</title>`;
    expect(await htmlToTextAsync(page)).toEqual(htmlToText(page));
    expect(htmlToText(page).text.endsWith('été\n\nnext para')).toBe(true);
  });

  it('turns table cells and list items into readable lines', () => {
    expect(htmlToText('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>').text).toBe(
      'a b\nc d',
    );
  });
});
