// How the playground page reads a model's Markdown (connectors/web/page/markdown-blocks.js and
// markdown-inline.js, which build plain data; markdown.js makes it DOM, tested in Chromium in
// playground-markdown-browser.test.ts): the blocks and marks real answers are full of, links
// only to http(s) addresses, and input built to hang a naive parser read in one pass.
import { describe, expect, it } from 'vitest';
import { parseBlocks } from '../../connectors/web/page/markdown-blocks.js';
import { parseInline, safeHref } from '../../connectors/web/page/markdown-inline.js';

const text = (value: string) => ({ type: 'text', text: value });

describe('the blocks of an answer', () => {
  it('headings, paragraphs (their line breaks kept), a rule, and a fence left open by a streaming answer', () => {
    expect(parseBlocks('# Plan\nFirst line\nsecond line\n\n### Then ###\n\n---\n```ts\nconst a = 1;\n')).toEqual([
      { type: 'heading', level: 1, text: 'Plan' },
      { type: 'paragraph', text: 'First line\nsecond line' },
      { type: 'heading', level: 3, text: 'Then' },
      { type: 'rule' },
      { type: 'code', lang: 'ts', text: 'const a = 1;\n' },
    ]);
    // "#hashtag" is no heading; a closed fence ends where it closes.
    expect(parseBlocks('#hashtag\n\n~~~\n# not a heading\n~~~\nafter')).toEqual([
      { type: 'paragraph', text: '#hashtag' },
      { type: 'code', lang: '', text: '# not a heading' },
      { type: 'paragraph', text: 'after' },
    ]);
  });

  it('bullet and ordered lists, nested by indentation, right after a paragraph, with their start number', () => {
    expect(parseBlocks('Steps:\n1. Build\n2. Test\n   - unit\n   - browser\n3. Ship\n\n- a\n- b')).toEqual([
      { type: 'paragraph', text: 'Steps:' },
      {
        type: 'list',
        ordered: true,
        start: 1,
        items: [
          [{ type: 'paragraph', text: 'Build' }],
          [
            { type: 'paragraph', text: 'Test' },
            {
              type: 'list',
              ordered: false,
              start: 1,
              items: [[{ type: 'paragraph', text: 'unit' }], [{ type: 'paragraph', text: 'browser' }]],
            },
          ],
          [{ type: 'paragraph', text: 'Ship' }],
        ],
      },
      {
        type: 'list',
        ordered: false,
        start: 1,
        items: [[{ type: 'paragraph', text: 'a' }], [{ type: 'paragraph', text: 'b' }]],
      },
    ]);
    expect(parseBlocks('3) three\n4) four')).toEqual([
      {
        type: 'list',
        ordered: true,
        start: 3,
        items: [[{ type: 'paragraph', text: 'three' }], [{ type: 'paragraph', text: 'four' }]],
      },
    ]);
    // A year that wraps onto a new line is not a list; "+1" and "-x" are not items.
    expect(parseBlocks('It was\n1986. A good year\n+1 from me\n-x')).toEqual([
      { type: 'paragraph', text: 'It was\n1986. A good year\n+1 from me\n-x' },
    ]);
  });

  it('a block quote, and a table with its alignment, a short row padded and an escaped pipe kept', () => {
    expect(
      parseBlocks(
        '> quoted **words**\n> - and a list\n\n| Name | Size | Note |\n|:-----|-----:|:----:|\n| a.txt | 10 | x \\| y |\n| b |',
      ),
    ).toEqual([
      {
        type: 'quote',
        blocks: [
          { type: 'paragraph', text: 'quoted **words**' },
          { type: 'list', ordered: false, start: 1, items: [[{ type: 'paragraph', text: 'and a list' }]] },
        ],
      },
      {
        type: 'table',
        align: ['left', 'right', 'center'],
        header: ['Name', 'Size', 'Note'],
        rows: [
          ['a.txt', '10', 'x | y'],
          ['b', '', ''],
        ],
      },
    ]);
    // A pipe without a delimiter row under it is text.
    expect(parseBlocks('a | b\nc | d')).toEqual([{ type: 'paragraph', text: 'a | b\nc | d' }]);
  });

  it('HTML is a paragraph of text, never a block of HTML', () => {
    expect(parseBlocks('<script>alert(1)</script>\n<img src=x onerror=alert(1)>')).toEqual([
      { type: 'paragraph', text: '<script>alert(1)</script>\n<img src=x onerror=alert(1)>' },
    ]);
  });

  it('nesting a hostile depth of quotes and lists stops at a bound instead of recursing without end', () => {
    const blocks = parseBlocks(
      `${'>'.repeat(5_000)} deep\n${Array.from({ length: 400 }, (_, i) => `${' '.repeat(i * 2)}- level ${i}`).join('\n')}`,
    );
    let depth = 0;
    let node = blocks[0];
    while (node?.type === 'quote') {
      depth++;
      node = node.blocks[0];
    }
    expect(depth).toBeGreaterThan(5);
    expect(depth).toBeLessThanOrEqual(16);
    expect(blocks.length).toBe(2);
  });
});

describe('the marks inside a block', () => {
  it('code, strong, emphasis, struck text, and a backslash that makes a mark literal', () => {
    expect(parseInline('Use `npm test`, **always**, *mostly* or ~~never~~: \\*not emphasis\\*')).toEqual([
      text('Use '),
      { type: 'code', text: 'npm test' },
      text(', '),
      { type: 'strong', children: [text('always')] },
      text(', '),
      { type: 'em', children: [text('mostly')] },
      text(' or '),
      { type: 'del', children: [text('never')] },
      text(': *not emphasis*'),
    ]);
    // Inside code a backslash is a backslash; snake_case is not emphasis; a lone star is a star.
    expect(parseInline('`C:\\path\\` my_var_name 2 * 3 * 4')).toEqual([
      { type: 'code', text: 'C:\\path\\' },
      text(' my_var_name 2 * 3 * 4'),
    ]);
    expect(parseInline('***both*** and **a *nested* one**')).toEqual([
      { type: 'strong', children: [{ type: 'em', children: [text('both')] }] },
      text(' and '),
      { type: 'strong', children: [text('a '), { type: 'em', children: [text('nested')] }, text(' one')] },
    ]);
  });

  it('links to http(s) only; any other address stays text, exactly as written', () => {
    expect(
      parseInline('See [the docs](https://example.com/a_(b) "title"), <https://x.y/z> and https://e.org/p.'),
    ).toEqual([
      text('See '),
      { type: 'link', href: 'https://example.com/a_(b)', children: [text('the docs')] },
      text(', '),
      { type: 'link', href: 'https://x.y/z', children: [text('https://x.y/z')] },
      text(' and '),
      { type: 'link', href: 'https://e.org/p', children: [text('https://e.org/p')] },
      text('.'),
    ]);
    for (const hostile of [
      '[click](javascript:alert(1))',
      '[x](JaVaScRiPt:alert(1))',
      '[x](data:text/html,<b>)',
      '[x](/api/stop)',
      '[x](//evil.example/)',
      '[x](vbscript:msgbox)',
    ]) {
      expect(parseInline(hostile), hostile).toEqual([text(hostile)]);
    }
    // An image is never loaded: it is a link to its address, named by its alt text.
    expect(parseInline('![a chart](https://example.com/c.png)')).toEqual([
      { type: 'link', href: 'https://example.com/c.png', children: [text('a chart')] },
    ]);
    expect(parseInline('![x](javascript:1) !not')).toEqual([text('![x](javascript:1) !not')]);
    expect(safeHref('https://example.com/a b')).toBe('https://example.com/a%20b');
    expect(safeHref(' javascript:alert(1)')).toBeNull();
  });

  it('input built to make a naive parser rescan the text for every mark is read in one pass', () => {
    const hostile = ['*a '.repeat(70_000), '['.repeat(60_000), '_b '.repeat(50_000), '~~c '.repeat(40_000)].join('\n');
    const nodes = parseInline(hostile);
    expect(nodes.map((node) => (node.type === 'text' ? node.text : '')).join('')).toBe(hostile);
  });
});
