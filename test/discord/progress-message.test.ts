import { describe, expect, it } from 'vitest';
import type { ProgressStep } from '../../connectors/shared/thread-surface.js';
import { progressContent } from '../../connectors/discord/progress-message.js';

const step = (id: number, status: ProgressStep['status'], extra: Partial<ProgressStep> = {}): ProgressStep => ({
  id: `call_${id}`,
  title: `tool_${id}`,
  status,
  ...extra,
});

describe('the Discord progress checklist', () => {
  it('one line per step with its mark, details once, and a short output in small print once finished', () => {
    const text = progressContent(
      [
        step(1, 'complete', { details: 'path: .', output: '3 files' }),
        step(2, 'in_progress', { details: 'ls -la', output: 'not shown yet' }),
        step(3, 'pending'),
        step(4, 'error', { output: 'boom' }),
      ],
      { limit: 1_900, closed: false },
    );
    expect(text.split('\n')).toEqual([
      '✅ **tool\\_1** · path: .',
      '-# ↳ 3 files',
      '⏳ **tool\\_2** · ls -la',
      '⬜ **tool\\_3**',
      '❌ **tool\\_4**',
      '-# ↳ boom',
    ]);
  });

  it('a closed checklist shows no step as running or waiting: they are paused (their outcome follows below)', () => {
    const text = progressContent([step(1, 'complete'), step(2, 'in_progress'), step(3, 'pending')], {
      limit: 1_900,
      closed: true,
    });
    expect(text).not.toMatch(/⏳|⬜/);
    expect(text.split('\n').filter((line) => line.startsWith('⏸️'))).toHaveLength(2);
  });

  it('untrusted text stays on one line and cannot open markup', () => {
    const text = progressContent(
      [
        step(1, 'complete', {
          title: '# big\n> quote',
          details: '```js\n[link](https://evil.example) **bold**',
          output: '- item\n1. one',
        }),
      ],
      { limit: 1_900, closed: false },
    );
    expect(text.split('\n')).toHaveLength(2);
    expect(text).not.toMatch(/(?<!\\)`|(?<!\\)\[|(?<!\\)\*\*bold/);
    expect(text).toContain('\\*\\*bold\\*\\*');
  });

  it('past the limit the oldest steps lose their output, then their details, then fold into a count; the newest stays whole', () => {
    const many = Array.from({ length: 150 }, (_, i) =>
      step(i, i === 3 ? 'error' : 'complete', { details: 'd'.repeat(150), output: 'o'.repeat(150) }),
    );
    const text = progressContent(many, { limit: 1_900, closed: false });
    expect(text.length).toBeLessThanOrEqual(1_900);
    expect(text).toMatch(/^-# … \d+ earlier steps \(\d+ ✅, 1 ❌\)/);
    expect(text.endsWith(`-# ↳ ${'o'.repeat(150)}`)).toBe(true);
    const few = progressContent(many.slice(0, 8), { limit: 1_900, closed: false });
    expect(few.length).toBeLessThanOrEqual(1_900);
    expect(few).not.toContain('earlier step');
    expect(few.split('\n')[0]).toBe('✅ **tool\\_0** · ' + 'd'.repeat(150));
  });
});
