import { describe, expect, it } from 'vitest';
import { tablesToCodeBlocks } from '../../connectors/shared/markdown-tables.js';

describe('tablesToCodeBlocks', () => {
  it("a model's comparison table becomes aligned columns a chat client can show", () => {
    const answer =
      'Results:\n\n| Model | Latency | Cost |\n|---|:---:|---:|\n| **gpt-4.1** | 1.2 s | $0.02 |\n| `haiku` | 0.4 s | $0.001 |\n\nPick one.';
    expect(tablesToCodeBlocks(answer)).toBe(
      [
        'Results:',
        '',
        '```',
        'Model   | Latency |   Cost',
        '--------+---------+-------',
        'gpt-4.1 |  1.2 s  |  $0.02',
        'haiku   |  0.4 s  | $0.001',
        '```',
        '',
        'Pick one.',
      ].join('\n'),
    );
  });

  it('reads rows without outer pipes, escaped pipes, short rows and long rows without losing a cell', () => {
    const table = 'a | b\n--|--\n1 \\| 2 | 3\nonly\n4 | 5 | extra';
    // A line without a pipe ends the table (GFM would make it a one-cell row): ending early
    // never hides text, the rest simply shows as written.
    expect(tablesToCodeBlocks(table)).toBe(
      ['```', 'a     | b', '------+----', '1 | 2 | 3', '```', 'only', '4 | 5 | extra'].join('\n'),
    );
    const ragged = '| a | b |\n|---|---|\n| 1 |\n| 2 | 3 | 4 |';
    expect(tablesToCodeBlocks(ragged)).toBe(
      ['```', 'a   | b', '----+-----+----', '1', '2   | 3   | 4', '```'].join('\n'),
    );
  });

  it('leaves a table inside a code block alone: it is literal text', () => {
    const answer = '```md\n| a | b |\n|---|---|\n| 1 | 2 |\n```';
    expect(tablesToCodeBlocks(answer)).toBe(answer);
  });

  it('leaves pipes that are not a table alone', () => {
    const answer = 'Use `a | b` to pipe.\nOr x | y without a delimiter row.\n\n---\n';
    expect(tablesToCodeBlocks(answer)).toBe(answer);
  });
});
