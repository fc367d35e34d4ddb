// A tool's result on the playground's card (connectors/web/result-view.ts): the engine's
// one-line preview made readable (a command's output as the lines it printed, JSON as
// `key: value` lines, a preview cut mid-JSON closed where it was cut), and the whole result for
// the "Full result" toggle, indented.
import { describe, expect, it } from 'vitest';
import { fullResultText, readableResult } from '../../connectors/web/result-view.js';
import { previewOf } from '../../src/engine/tool-calls.js';

describe('a result on the card', () => {
  it("a command's result: its fields, and its output as the lines it printed", () => {
    const content = JSON.stringify({
      exitCode: 0,
      cwd: '/work',
      output: 'total 8\ndrwxr-xr-x 2 bot bot 4096 .\n-rw-r--r-- 1 bot bot  120 demo-note.md\n',
    });
    expect(readableResult(previewOf(content))).toBe(
      'exitCode: 0\ncwd: /work\noutput:\ntotal 8\ndrwxr-xr-x 2 bot bot 4096 .\n-rw-r--r-- 1 bot bot  120 demo-note.md',
    );
  });

  it('a preview cut mid-JSON is closed where it was cut, the cut member left out or ended, with "…"', () => {
    const long = JSON.stringify({
      exitCode: 1,
      output: Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n'),
      stderr: 'x',
    });
    const shown = readableResult(previewOf(long));
    expect(shown.startsWith('exitCode: 1\noutput:\nline 0\nline 1\n')).toBe(true);
    expect(shown.endsWith('…')).toBe(true);
    expect(shown).not.toContain('\\n');
    // Cut in a key, in an escape, after a colon, inside a nested list.
    for (const cut of [
      '{"a":1,"bc',
      '{"a":"x\\',
      '{"a":"x\\u00',
      '{"a":1,"b":',
      '{"a":[1,2,{"c":"d',
      '[{"name":"a"},{"name":"b',
    ]) {
      const text = readableResult(`${cut}…`);
      expect(text, cut).toMatch(/…$/);
      expect(text.startsWith('{') || text.startsWith('['), cut).toBe(false);
    }
    expect(readableResult('{"a":1,"bc…')).toBe('a: 1\n…');
    expect(readableResult('[{"name":"a"},{"name":"b…')).toBe('- {"name":"a"}\n- {"name":"b"}\n…');
  });

  it('plain text (a file read) keeps its lines; an error reads as words', () => {
    expect(readableResult(previewOf('# Title\n\nSome text.\n'))).toBe('# Title\n\nSome text.\n');
    expect(
      readableResult(previewOf(JSON.stringify({ error: 'tool call not executed', reason: 'denied by user' }))),
    ).toBe('error: tool call not executed\nreason: denied by user');
    expect(readableResult('not json {…')).toBe('not json {…');
  });

  it('the whole result for the toggle: JSON indented, text as it is', () => {
    expect(fullResultText('{"exitCode":0,"output":"a\\nb"}')).toEqual({
      text: '{\n  "exitCode": 0,\n  "output": "a\\nb"\n}',
      json: true,
    });
    expect(fullResultText('plain <b>text</b>')).toEqual({ text: 'plain <b>text</b>', json: false });
  });
});
