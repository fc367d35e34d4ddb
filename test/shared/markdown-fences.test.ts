import { describe, expect, it } from 'vitest';
import { parseFenceOpening, scanFences } from '../../connectors/shared/markdown-fences.js';

describe('scanFences', () => {
  it('finds backtick and tilde blocks with their info strings, in order', () => {
    const text = 'intro\n```ts\nconst a = 1;\n```\nmiddle\n~~~python title=x.py\nprint(1)\n~~~\n';
    const spans = scanFences(text);
    expect(spans.map((span) => [span.fence.marker, span.fence.info, span.closed])).toEqual([
      ['```', 'ts', true],
      ['~~~', 'python title=x.py', true],
    ]);
    expect(text.slice(spans[0]!.bodyStart, spans[0]!.bodyEnd)).toBe('const a = 1;\n');
    expect(text.slice(spans[0]!.start, spans[0]!.end)).toBe('```ts\nconst a = 1;\n```');
  });

  it('closes a block only with the same character, at least as long, and nothing else on the line', () => {
    const text = '````md\n```\nnot the end\n``` trailing\n~~~~\n````\nafter';
    const [span] = scanFences(text);
    expect(span!.closed).toBe(true);
    expect(text.slice(span!.end)).toBe('\nafter');
  });

  it('treats a block the model never closed as running to the end', () => {
    const text = 'x\n```sh\nls\n';
    expect(scanFences(text)).toEqual([
      {
        fence: { indent: '', marker: '```', info: 'sh' },
        start: 2,
        bodyStart: 8,
        bodyEnd: text.length,
        end: text.length,
        closed: false,
      },
    ]);
  });

  it('does not mistake inline triple backticks for a fence', () => {
    expect(parseFenceOpening('```js const x = 1```')).toBeUndefined();
    expect(scanFences('Use ```code``` inline, then text.')).toEqual([]);
    expect(parseFenceOpening('~~~ info with ``` is fine')).toEqual({
      indent: '',
      marker: '~~~',
      info: 'info with ``` is fine',
    });
  });

  it('accepts Windows line endings', () => {
    expect(scanFences('```ts\r\ncode\r\n```\r\n')[0]?.closed).toBe(true);
  });
});
