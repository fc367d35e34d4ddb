import { describe, expect, it } from 'vitest';
import { capOutput, MiddleTrimmedText } from '../../src/tools/output.js';

describe('capOutput', () => {
  it('leaves text that fits alone', () => {
    expect(capOutput('short', 1_000)).toBe('short');
    expect(capOutput('x'.repeat(1_000), 1_000, 'middle')).toBe('x'.repeat(1_000));
  });

  it('cuts the end by default, and says how much', () => {
    const text = 'a'.repeat(500) + 'b'.repeat(1_500);
    const capped = capOutput(text, 1_000);
    expect(capped.length).toBeLessThanOrEqual(1_000);
    expect(capped).toBe(`${'a'.repeat(500)}${'b'.repeat(420)}\n[… 1,080 more characters cut]`);
  });

  it('cuts the middle for shell output, keeping both ends', () => {
    const text = 'H'.repeat(1_000) + 'M'.repeat(5_000) + 'T'.repeat(1_000);
    const capped = capOutput(text, 1_000, 'middle');
    expect(capped.length).toBeLessThanOrEqual(1_000);
    expect(capped).toBe(`${'H'.repeat(460)}\n[… 6,080 characters cut from the middle …]\n${'T'.repeat(460)}`);
  });

  it('never splits an emoji in half', () => {
    const text = '😀'.repeat(1_000);
    for (const trim of ['end', 'middle'] as const) {
      const capped = capOutput(text, 501, trim);
      expect(capped).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    }
  });
});

describe('MiddleTrimmedText: a stream of output in bounded memory', () => {
  it('gives the same answer as capOutput on the whole text', () => {
    const pieces = Array.from({ length: 3_000 }, (_, i) => `line ${i}\n`);
    const collected = new MiddleTrimmedText(2_000);
    for (const piece of pieces) collected.append(piece);
    expect(collected.toString()).toBe(capOutput(pieces.join(''), 2_000, 'middle'));
    expect(collected.length).toBe(pieces.join('').length);
  });

  it('keeps everything while it fits', () => {
    const collected = new MiddleTrimmedText(2_000);
    collected.append('a'.repeat(1_500));
    collected.append('b'.repeat(500));
    expect(collected.toString()).toBe('a'.repeat(1_500) + 'b'.repeat(500));
  });

  it('handles one chunk far larger than the budget', () => {
    const collected = new MiddleTrimmedText(1_000);
    const text = 'x'.repeat(100_000) + 'END';
    collected.append(text);
    expect(collected.toString()).toBe(capOutput(text, 1_000, 'middle'));
  });
});
