import { describe, expect, it } from 'vitest';
import { capText, resultText } from '../../src/mcp/result-text.js';

const PNG_BYTES = Buffer.alloc(3000, 7).toString('base64');

describe('what the model reads back from an MCP tool', () => {
  it('joins the text parts', () => {
    expect(
      resultText({
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
      }),
    ).toBe('first\nsecond');
  });

  it('describes images, audio and binary resources in a line instead of dumping their bytes', () => {
    const text = resultText({
      content: [
        { type: 'text', text: 'the chart' },
        { type: 'image', data: PNG_BYTES, mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///report.pdf', mimeType: 'application/pdf', blob: PNG_BYTES } },
        {
          type: 'resource_link',
          uri: 'file:///notes.md',
          name: 'notes.md',
          mimeType: 'text/markdown',
          description: 'the notes',
        },
      ],
    });
    expect(text).toBe(
      [
        'the chart',
        '[image: image/png, 2.9 KB; not shown to the model]',
        '[audio: audio/wav, 3 bytes; not shown to the model]',
        '[resource <file:///report.pdf> (application/pdf): 2.9 KB of binary data; not shown to the model]',
        '[resource link: notes.md <file:///notes.md> (text/markdown): the notes]',
      ].join('\n'),
    );
    expect(text).not.toContain(PNG_BYTES.slice(0, 20));
  });

  it('keeps the text of an embedded text resource: it is the answer', () => {
    expect(resultText({ content: [{ type: 'resource', resource: { uri: 'file:///a.txt', text: 'hello' } }] })).toBe(
      '[resource <file:///a.txt>]\nhello',
    );
  });

  it('falls back to structured content when a tool sends no text', () => {
    expect(resultText({ content: [], structuredContent: { temperature: 21 } })).toBe('{"temperature":21}');
  });

  it('says so when a tool returns nothing', () => {
    expect(resultText({ content: [] })).toBe('(the tool returned no content)');
  });

  it('reads an old-protocol `toolResult` answer', () => {
    expect(resultText({ toolResult: { ok: true } })).toBe('{"ok":true}');
  });

  it('caps a large result and says how much was cut', () => {
    const text = resultText({ content: [{ type: 'text', text: 'a'.repeat(120_000) }] }, 50_000);
    expect(text.startsWith('a'.repeat(50_000) + '\n')).toBe(true);
    expect(text).toContain('[… 70,000 of 120,000 characters cut: MCP tool results are capped at 50,000]');
  });

  it('never cuts a character in half', () => {
    const capped = capText(`ab${'😀'.repeat(10)}`, 3);
    expect(capped.startsWith('ab\n')).toBe(true);
    expect(capped).toContain('20 of 22 characters cut');
  });
});
