// GitHub-style markdown tables, turned into aligned monospace text in a code block.
//
// The idea to hold: neither Slack mrkdwn nor Discord markdown has tables, and a model's table
// arrives as rows of raw pipes, one of the most common complaints about chat bots.
// Aligned columns in a code block read as a table on both.
// Tables inside code blocks are left alone: they are someone's literal text.
import { scanFences } from './markdown-fences.js';

type Alignment = 'left' | 'right' | 'center';

/** Every GFM table outside code blocks, replaced by a fenced block of aligned columns. */
export function tablesToCodeBlocks(markdown: string): string {
  const lines = markdown.split('\n');
  const inCode = codeLineMask(markdown, lines);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const table = inCode[i] || inCode[i + 1] ? undefined : readTable(lines, i, inCode);
    if (!table) {
      out.push(lines[i]!);
      continue;
    }
    out.push(...renderTable(table));
    i = table.lastLine;
  }
  return out.join('\n');
}

interface Table {
  indent: string;
  header: string[];
  alignments: Alignment[];
  rows: string[][];
  lastLine: number;
}

const DELIMITER_CELL = /^\s*(:?)-+(:?)\s*$/;

/**
 * A table starting at line `at`: a header row, a delimiter row with as many cells, then rows
 * with a pipe. A line without one ends the table (GFM would keep it as a one-cell row).
 */
function readTable(lines: readonly string[], at: number, inCode: readonly boolean[]): Table | undefined {
  const headerLine = lines[at]!;
  const delimiterLine = lines[at + 1];
  if (delimiterLine === undefined || !headerLine.includes('|') || !delimiterLine.includes('-')) return undefined;
  const delimiter = splitRow(delimiterLine);
  if (!delimiter.every((cell) => DELIMITER_CELL.test(cell))) return undefined;
  const header = splitRow(headerLine);
  if (header.length !== delimiter.length) return undefined;
  const alignments = delimiter.map((cell): Alignment => {
    const [, left, right] = DELIMITER_CELL.exec(cell) ?? [];
    if (left && right) return 'center';
    return right ? 'right' : 'left';
  });
  const rows: string[][] = [];
  let last = at + 1;
  while (
    last + 1 < lines.length &&
    !inCode[last + 1] &&
    lines[last + 1]!.includes('|') &&
    lines[last + 1]!.trim() !== ''
  ) {
    last++;
    // GFM pads a short row with empty cells and drops the extra cells of a long one; dropping
    // would lose text, so extra cells get columns of their own.
    const cells = splitRow(lines[last]!);
    rows.push(cells);
  }
  return { indent: /^[ \t]*/.exec(headerLine)![0], header, alignments, rows, lastLine: last };
}

/** Cells of one row: outer pipes optional, `\|` is a literal pipe, inline markup reduced to its text. */
function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => plainCell(cell.trim().replace(/\\\|/g, '|')));
}

/** Code blocks show markup literally, so `**x**` and `` `x` `` would read as noise: keep the words. */
function plainCell(cell: string): string {
  return cell
    .replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, '$1 ($2)')
    .replace(/(\*\*|__|~~)(.+?)\1/g, '$2')
    .replace(/`([^`]+)`/g, '$1');
}

function renderTable(table: Table): string[] {
  const columns = Math.max(table.header.length, ...table.rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, c) =>
    Math.max(3, ...[table.header, ...table.rows].map((row) => (row[c] ?? '').length)),
  );
  const line = (cells: readonly string[]) => {
    // Trailing empty cells would end the line in a dangling " |".
    let used = widths.length;
    while (used > 1 && !cells[used - 1]) used--;
    return widths
      .slice(0, used)
      .map((width, c) => pad(cells[c] ?? '', width, table.alignments[c] ?? 'left'))
      .join(' | ')
      .replace(/\s+$/, '');
  };
  const rule = widths.map((width) => '-'.repeat(width)).join('-+-');
  const body = [line(table.header), rule, ...table.rows.map(line)];
  return ['```', ...body, '```'].map((text) => `${table.indent}${text}`);
}

function pad(text: string, width: number, alignment: Alignment): string {
  const gap = width - text.length;
  if (alignment === 'right') return ' '.repeat(gap) + text;
  if (alignment === 'center') return ' '.repeat(Math.floor(gap / 2)) + text + ' '.repeat(Math.ceil(gap / 2));
  return text + ' '.repeat(gap);
}

/** For each line: is it part of a fenced code block (its fences included)? */
function codeLineMask(markdown: string, lines: readonly string[]): boolean[] {
  const mask = new Array<boolean>(lines.length).fill(false);
  const spans = scanFences(markdown);
  let offset = 0;
  let span = 0;
  for (let i = 0; i < lines.length; i++) {
    while (span < spans.length && spans[span]!.end < offset) span++;
    const current = spans[span];
    if (current && current.start <= offset && offset <= current.end) mask[i] = true;
    offset += lines[i]!.length + 1;
  }
  return mask;
}
