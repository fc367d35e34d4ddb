import { describe, expect, it } from 'vitest';
import { ellipsize, truncateForDisplay } from '../../connectors/shared/truncate.js';

describe('truncateForDisplay', () => {
  it('leaves text that fits alone', () => {
    expect(truncateForDisplay('short', 10)).toBe('short');
  });

  it('says how much it cut, and stays within the limit', () => {
    const text = 'word '.repeat(1000).trim();
    const shown = truncateForDisplay(text, 300);
    expect(shown.length).toBeLessThanOrEqual(300);
    const match = /^([\s\S]*) … \(([\d,]+) more characters\)$/.exec(shown);
    expect(match).not.toBeNull();
    const [, kept = '', missing = ''] = match!;
    expect(text.startsWith(kept)).toBe(true);
    expect(kept.length + Number(missing.replace(/,/g, ''))).toBe(text.length);
  });

  it('closes a code block it cuts, so the note is not swallowed into the code', () => {
    const code = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const shown = truncateForDisplay(`Output:\n\n\`\`\`\n${code}\n\`\`\`\n\nEnd.`, 200);
    expect(shown.length).toBeLessThanOrEqual(200);
    expect(shown).toMatch(/\n```\n… \([\d,]+ more characters\)$/);
  });

  it('refuses a limit that cannot even hold the note', () => {
    expect(() => truncateForDisplay('x'.repeat(100), 10)).toThrow(RangeError);
  });
});

describe('ellipsize', () => {
  it('keeps a one-line summary on one line and marks the cut', () => {
    expect(ellipsize('git commit -m "first\nsecond"', 80)).toBe('git commit -m "first\\nsecond"');
    expect(ellipsize('read the whole file please', 12)).toBe('read the wh…');
    expect(ellipsize('🚀🚀🚀', 4)).toBe('🚀…');
  });
});
