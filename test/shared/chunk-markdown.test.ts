import { describe, expect, it } from 'vitest';
import {
  MIN_SPLIT_LIMIT,
  splitMarkdown,
  splitMarkdownPieces,
  withoutFenceRepair,
  type MarkdownPiece,
} from '../../connectors/shared/chunk-markdown.js';
import { scanFences } from '../../connectors/shared/markdown-fences.js';
import { mulberry32 } from '../support/seeded-random.js';

const DISCORD_LIMIT = 2000;

/** Every fence a piece opens, it closes: what a reader of that one message needs. */
function isBalanced(piece: string): boolean {
  return scanFences(piece).every((span) => span.closed);
}

/**
 * What must hold for every split, or a message describing what broke: each piece fits, is not
 * blank, closes every fence it opens; and the pieces, with the splitter's fence lines removed,
 * appear in the original in order with nothing but whitespace between and after them (nothing
 * lost, nothing duplicated). Plain checks rather than `expect` per piece: the generated cases
 * produce tens of thousands of pieces.
 */
function splitProblem(original: string, limit: number, pieces: readonly MarkdownPiece[]): string | undefined {
  let cursor = 0;
  for (const [index, piece] of pieces.entries()) {
    if (piece.text.length > limit) return `piece ${index} has ${piece.text.length} characters, over ${limit}`;
    if (piece.text.trim() === '') return `piece ${index} is blank`;
    if (!isBalanced(piece.text)) return `piece ${index} leaves a fence open:\n${piece.text}`;
    const part = withoutFenceRepair(piece);
    const at = original.indexOf(part, cursor);
    if (at < 0) return `piece ${index} is not found in order: ${JSON.stringify(part.slice(0, 80))}`;
    if (original.slice(cursor, at).trim() !== '')
      return `text before piece ${index} was lost: ${JSON.stringify(original.slice(cursor, at))}`;
    cursor = at + part.length;
  }
  if (original.slice(cursor).trim() !== '') return `the end was lost: ${JSON.stringify(original.slice(cursor))}`;
  return undefined;
}

function expectWellFormed(original: string, limit: number): MarkdownPiece[] {
  const pieces = splitMarkdownPieces(original, limit);
  expect(splitProblem(original, limit, pieces)).toBeUndefined();
  return pieces;
}

function paragraph(words: number, seed = 0): string {
  const vocabulary = [
    'the',
    'agent',
    'reads',
    'a',
    'file',
    'and',
    'runs',
    'tests',
    'before',
    'it',
    'answers',
    'quickly',
  ];
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(vocabulary[(i * 7 + seed) % vocabulary.length]!);
  return `${out.join(' ')}.`;
}

describe('splitMarkdown', () => {
  it('leaves a short answer alone', () => {
    expect(splitMarkdown('Done: **3 files** changed.', DISCORD_LIMIT)).toEqual(['Done: **3 files** changed.']);
  });

  it('sends nothing for an empty or blank answer', () => {
    expect(splitMarkdown('', DISCORD_LIMIT)).toEqual([]);
    expect(splitMarkdown(' \n\n \t', DISCORD_LIMIT)).toEqual([]);
  });

  it('a 5,000-character answer with a long code block is split into pieces under the limit, and no piece opens a fence it does not close', () => {
    const code = Array.from({ length: 90 }, (_, i) => `  const value${i} = await compute(${i}); // step ${i}`).join(
      '\n',
    );
    const answer = `## What changed\n\n${paragraph(60)}\n\n\`\`\`ts\n${code}\n\`\`\`\n\n${paragraph(80, 3)}`;
    expect(answer.length).toBeGreaterThan(5000);

    const pieces = expectWellFormed(answer, DISCORD_LIMIT);

    expect(pieces.length).toBeGreaterThanOrEqual(3);
    const reopened = pieces.filter((piece) => piece.reopened !== '');
    expect(reopened.length).toBeGreaterThan(0);
    // The continuation keeps its highlighting: the same info string.
    for (const piece of reopened) expect(piece.text.startsWith('```ts\n')).toBe(true);
  });

  it('cuts between paragraphs rather than inside one', () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => paragraph(30, i));
    const answer = paragraphs.join('\n\n');
    const pieces = expectWellFormed(answer, 600);
    for (const piece of pieces) {
      // Every piece is whole paragraphs: it ends where a paragraph ends.
      expect(piece.text.endsWith('.')).toBe(true);
      for (const part of piece.text.split('\n\n')) expect(paragraphs).toContain(part);
    }
  });

  it('moves a code block that fits in one message to the next message instead of splitting it', () => {
    const code = Array.from({ length: 20 }, (_, i) => `echo step ${i}`).join('\n');
    const answer = `${paragraph(40)}\n\n\`\`\`sh\n${code}\n\`\`\`\n\nThat is all.`;
    const limit = 400;
    expect(answer.length).toBeGreaterThan(limit);

    const pieces = expectWellFormed(answer, limit);

    expect(pieces.every((piece) => piece.reopened === '' && piece.closed === '')).toBe(true);
    expect(pieces.some((piece) => piece.text.startsWith('```sh\n') && piece.text.includes('echo step 19\n```'))).toBe(
      true,
    );
  });

  it('splits a tilde fence and reopens it with tildes, ignoring backtick lines inside it', () => {
    const body = Array.from({ length: 40 }, (_, i) => (i % 5 === 0 ? '```' : `line ${i} of the example`)).join('\n');
    const answer = `Example:\n\n~~~markdown\n${body}\n~~~\n\nEnd.`;
    const pieces = expectWellFormed(answer, 200);
    for (const piece of pieces.slice(1, -1)) {
      expect(piece.reopened).toBe('~~~markdown\n');
      expect(piece.closed.endsWith('~~~')).toBe(true);
    }
  });

  it('balances an answer that ends inside a code block the model never closed', () => {
    const answer = `Here is the script:\n\n\`\`\`python\nprint("hello")\nprint("world")`;
    expect(splitMarkdown(answer, DISCORD_LIMIT)).toEqual([`${answer}\n\`\`\``]);

    const long = `Here is the script:\n\n\`\`\`python\n${Array.from({ length: 50 }, (_, i) => `print(${i})`).join('\n')}`;
    const pieces = expectWellFormed(long, 150);
    expect(pieces.at(-1)!.closed).toBe('\n```');
  });

  it('hard-splits a very long line without spaces, and loses none of it', () => {
    const blob = 'A'.repeat(4500);
    const answer = `The token is ${blob} and that is it.`;
    const pieces = expectWellFormed(answer, DISCORD_LIMIT);
    expect(
      pieces
        .map((piece) => piece.text)
        .join('')
        .replace(/\s/g, ''),
    ).toBe(answer.replace(/\s/g, ''));
  });

  it('breaks a code line longer than a message inside the fence, closing and reopening around the break', () => {
    const answer = `\`\`\`json\n${'{"k":1},'.repeat(400)}\n\`\`\``;
    const pieces = expectWellFormed(answer, 500);
    expect(pieces.length).toBeGreaterThan(6);
    expect(pieces.slice(1).every((piece) => piece.reopened === '```json\n')).toBe(true);
  });

  it('prefers a sentence end over a word boundary when there are no line breaks', () => {
    const sentences = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} says something useful.`).join(' ');
    const pieces = expectWellFormed(sentences, 300);
    for (const piece of pieces) expect(piece.text.endsWith('.')).toBe(true);
  });

  it('never cuts an emoji in half', () => {
    const answer = '🚀'.repeat(300);
    const pieces = expectWellFormed(answer, 101);
    for (const piece of pieces) expect(piece.text).toMatch(/^(?:🚀)+$/u);
  });

  it('keeps a fence indented in a list item, and its indentation when reopening', () => {
    const code = Array.from({ length: 30 }, (_, i) => `   run ${i}`).join('\n');
    const answer = `1. Install:\n\n   \`\`\`sh\n${code}\n   \`\`\`\n2. Done.`;
    const pieces = expectWellFormed(answer, 150);
    expect(pieces.slice(1, -1).every((piece) => piece.reopened === '   ```sh\n')).toBe(true);
  });

  it('refuses a limit too small to hold a fence and some code, rather than truncating', () => {
    expect(() => splitMarkdown('text', MIN_SPLIT_LIMIT - 1)).toThrow(RangeError);
    expect(() => splitMarkdown('text', 100.5)).toThrow(RangeError);
    // An opening line that alone fills a piece cannot be split without corrupting the block.
    const answer = `\`\`\`${'x'.repeat(40)}\n${'code\n'.repeat(20)}\`\`\``;
    expect(() => splitMarkdown(answer, MIN_SPLIT_LIMIT)).toThrow(/opening line/);
  });

  it('drops a long info string when reopening in small pieces, so the code still gets the room', () => {
    const answer = `\`\`\`sh title="deploy.sh"\n${'echo deploy\n'.repeat(30)}\`\`\``;
    const pieces = expectWellFormed(answer, 64);
    expect(pieces.slice(1).every((piece) => piece.reopened === '```\n')).toBe(true);
  });

  describe('on generated answers (seeded)', () => {
    it('every piece fits, is balanced, and together they keep all the content', () => {
      for (let seed = 1; seed <= 300; seed++) {
        const random = mulberry32(seed);
        const answer = generateAnswer(random);
        for (const limit of [40, 64, 97, 200, 512, DISCORD_LIMIT]) {
          const problem = splitProblem(answer, limit, splitMarkdownPieces(answer, limit));
          if (problem !== undefined) expect.fail(`seed ${seed}, limit ${limit}: ${problem}\n--- answer ---\n${answer}`);
        }
      }
    });
  });
});

function generateAnswer(random: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const word = () =>
    random() < 0.03
      ? 'x'.repeat(20 + Math.floor(random() * 300))
      : pick([
          'alpha',
          'beta',
          'gamma',
          'é',
          '🚀',
          'the',
          'a',
          'run',
          'file.ts',
          '`code`',
          '**bold**',
          'https://example.com/a?b=c',
        ]);
  const sentence = () =>
    `${Array.from({ length: 3 + Math.floor(random() * 15) }, word).join(' ')}${pick(['.', '!', '?', ':', ''])}`;
  const codeBlock = (closed: boolean) => {
    const marker = pick(['```', '````', '~~~', '~~~~']);
    const indent = pick(['', '', '   ']);
    const info = pick(['', 'ts', 'python', 'sh title="run.sh"']);
    const lines = Array.from({ length: 1 + Math.floor(random() * 40) }, () => {
      const roll = random();
      if (roll < 0.05) return '';
      if (roll < 0.1 && marker.length === 4) return marker.slice(0, 3); // a shorter fence inside: content
      if (roll < 0.15) return 'y'.repeat(50 + Math.floor(random() * 250));
      return `${indent}${pick(['  ', '', '\t'])}${sentence()}`;
    });
    return `${indent}${marker}${info}\n${lines.join('\n')}${closed ? `\n${indent}${marker}` : ''}`;
  };
  const blocks: string[] = [];
  const count = 1 + Math.floor(random() * 12);
  for (let i = 0; i < count; i++) {
    const roll = random();
    if (roll < 0.3) blocks.push(codeBlock(true));
    else if (roll < 0.45)
      blocks.push(Array.from({ length: 2 + Math.floor(random() * 6) }, () => `- ${sentence()}`).join('\n'));
    else if (roll < 0.5) blocks.push(`## ${sentence()}`);
    else blocks.push(Array.from({ length: 1 + Math.floor(random() * 6) }, sentence).join(pick([' ', '\n'])));
  }
  if (random() < 0.2) blocks.push(codeBlock(false));
  return blocks.join(pick(['\n\n', '\n', '\n\n\n']));
}
