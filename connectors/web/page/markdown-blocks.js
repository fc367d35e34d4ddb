// Markdown's blocks, read line by line into plain data (markdown.js builds the page's nodes
// from it): paragraphs, ATX headings, fenced code, rules, block quotes, bullet and ordered
// lists (nested by indentation), and GFM tables. The subset models write, read the way
// CommonMark reads it where it matters (a fence left open runs to the end, as an answer still
// streaming does; a list may interrupt a paragraph). No HTML block exists here: what looks
// like HTML is a paragraph, shown as text.
//
// Hostile input must not hang the page: every loop moves forward by at least one line, and
// quotes and lists nest at most MAX_DEPTH deep (deeper, the rest is read as a paragraph).
// No DOM here, so the reading is tested in Node (test/web/markdown.test.ts).

/** @typedef {'left' | 'center' | 'right' | null} Align */
/**
 * @typedef {{ type: 'paragraph', text: string }
 *   | { type: 'heading', level: number, text: string }
 *   | { type: 'code', lang: string, text: string }
 *   | { type: 'rule' }
 *   | { type: 'quote', blocks: Block[] }
 *   | { type: 'list', ordered: boolean, start: number, items: Block[][] }
 *   | { type: 'table', align: Align[], header: string[], rows: string[][] }} Block
 */

const MAX_DEPTH = 16;
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
const DELIMITER_CELL = /^:?-+:?$/;

/**
 * The text's blocks.
 * @param {string} text
 * @returns {Block[]}
 */
export function parseBlocks(text) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n').map(expandTabs);
  return blocksOf(lines, 0);
}

/**
 * @param {string[]} lines
 * @param {number} depth
 * @returns {Block[]}
 */
function blocksOf(lines, depth) {
  /** @type {Block[]} */
  const blocks = [];
  let at = 0;
  while (at < lines.length) {
    const line = lines[at] ?? '';
    if (isBlank(line)) {
      at++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence && !(fence[2]?.startsWith('`') && fence[3]?.includes('`'))) {
      at = readFence(lines, at, fence, blocks);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ type: 'heading', level: heading[1]?.length ?? 1, text: heading[2] ?? '' });
      at++;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ type: 'rule' });
      at++;
      continue;
    }
    if (depth < MAX_DEPTH && QUOTE.test(line)) {
      at = readQuote(lines, at, depth, blocks);
      continue;
    }
    if (depth < MAX_DEPTH && ITEM.test(line)) {
      at = readList(lines, at, depth, blocks);
      continue;
    }
    if (tableStartsAt(lines, at)) {
      at = readTable(lines, at, blocks);
      continue;
    }
    at = readParagraph(lines, at, blocks);
  }
  return blocks;
}

/**
 * A fenced code block: up to a closing fence of the same character, at least as long; to the
 * end of the text when there is none (an answer still streaming).
 * @param {string[]} lines
 * @param {number} at
 * @param {RegExpExecArray} fence
 * @param {Block[]} blocks
 * @returns {number} the line after it
 */
function readFence(lines, at, fence, blocks) {
  const indent = fence[1]?.length ?? 0;
  const marker = fence[2] ?? '```';
  const lang = (fence[3] ?? '').trim().split(/\s+/)[0] ?? '';
  const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
  const body = [];
  let next = at + 1;
  for (; next < lines.length; next++) {
    const line = lines[next] ?? '';
    if (closing.test(line)) {
      next++;
      break;
    }
    body.push(line.replace(new RegExp(`^ {0,${indent}}`), ''));
  }
  blocks.push({ type: 'code', lang, text: body.join('\n') });
  return next;
}

/**
 * A block quote: its `>` lines (and the lines that lazily continue its paragraph), read again as blocks.
 * @param {string[]} lines
 * @param {number} at
 * @param {number} depth
 * @param {Block[]} blocks
 * @returns {number}
 */
function readQuote(lines, at, depth, blocks) {
  const inner = [];
  let next = at;
  for (; next < lines.length; next++) {
    const line = lines[next] ?? '';
    if (QUOTE.test(line)) inner.push(line.replace(QUOTE, ''));
    else if (!isBlank(line) && !isBlank(inner.at(-1) ?? '') && !startsBlock(lines, next)) inner.push(line);
    else break;
  }
  blocks.push({ type: 'quote', blocks: blocksOf(inner, depth + 1) });
  return next;
}

/**
 * A list: items of one kind (the same bullet, or numbers with the same `.` or `)`), each item's
 * lines indented under its text read again as blocks (nested lists included).
 * @param {string[]} lines
 * @param {number} at
 * @param {number} depth
 * @param {Block[]} blocks
 * @returns {number}
 */
function readList(lines, at, depth, blocks) {
  const first = ITEM.exec(lines[at] ?? '');
  const kind = listKind(first?.[2] ?? '-');
  const ordered = /\d/.test(kind);
  const start = ordered ? Number.parseInt(first?.[2] ?? '1', 10) : 1;
  /** @type {Block[][]} */
  const items = [];
  let next = at;
  while (next < lines.length) {
    const item = ITEM.exec(lines[next] ?? '');
    if (!item || listKind(item[2] ?? '') !== kind || RULE.test(lines[next] ?? '')) break;
    const spaces = item[3]?.length ?? 0;
    const contentIndent = (item[1]?.length ?? 0) + (item[2]?.length ?? 0) + (spaces >= 1 && spaces <= 4 ? spaces : 1);
    const body = [spaces > 4 ? `${' '.repeat(spaces - 1)}${item[4] ?? ''}` : (item[4] ?? '')];
    next++;
    while (next < lines.length) {
      const line = lines[next] ?? '';
      if (isBlank(line)) {
        // A blank line stays in the item only when the item goes on after it.
        const after = lines.slice(next).findIndex((later) => !isBlank(later));
        if (after < 0 || indentOf(lines[next + after] ?? '') < contentIndent) break;
        body.push('');
      } else if (indentOf(line) >= contentIndent) {
        body.push(line.slice(contentIndent));
      } else if (!isBlank(body.at(-1) ?? '') && !startsBlock(lines, next)) {
        body.push(line.trimStart());
      } else {
        break;
      }
      next++;
    }
    items.push(blocksOf(body, depth + 1));
    // Blank lines between two items of the same list.
    let gap = next;
    while (gap < lines.length && isBlank(lines[gap] ?? '')) gap++;
    const following = ITEM.exec(lines[gap] ?? '');
    if (gap > next && following && listKind(following[2] ?? '') === kind) next = gap;
  }
  blocks.push({ type: 'list', ordered, start, items });
  return next;
}

/**
 * A GFM table: its header, the delimiter row (which sets each column's alignment), then every
 * row up to a blank line or another block. Rows are cut or padded to the header's width.
 * @param {string[]} lines
 * @param {number} at
 * @param {Block[]} blocks
 * @returns {number}
 */
function readTable(lines, at, blocks) {
  const header = cellsOf(lines[at] ?? '');
  const align = cellsOf(lines[at + 1] ?? '').map((cell) =>
    cell.startsWith(':') && cell.endsWith(':')
      ? 'center'
      : cell.endsWith(':')
        ? 'right'
        : cell.startsWith(':')
          ? 'left'
          : null,
  );
  const rows = [];
  let next = at + 2;
  for (; next < lines.length; next++) {
    const line = lines[next] ?? '';
    if (isBlank(line) || startsBlock(lines, next)) break;
    const cells = cellsOf(line);
    rows.push(header.map((_, index) => cells[index] ?? ''));
  }
  blocks.push({ type: 'table', align, header, rows });
  return next;
}

/**
 * A paragraph: lines up to a blank one or the start of another block.
 * @param {string[]} lines
 * @param {number} at
 * @param {Block[]} blocks
 * @returns {number}
 */
function readParagraph(lines, at, blocks) {
  const text = [(lines[at] ?? '').trim()];
  let next = at + 1;
  for (; next < lines.length; next++) {
    const line = lines[next] ?? '';
    if (isBlank(line) || startsBlock(lines, next, true)) break;
    text.push(line.trim());
  }
  blocks.push({ type: 'paragraph', text: text.join('\n') });
  return next;
}

/**
 * Whether the line at `at` starts a block other than a paragraph's next line. In a paragraph,
 * an ordered list interrupts only from 1 (so "1986. A good year" wrapped onto a new line stays text).
 * @param {string[]} lines
 * @param {number} at
 * @param {boolean} [inParagraph]
 */
function startsBlock(lines, at, inParagraph = false) {
  const line = lines[at] ?? '';
  const fence = FENCE.exec(line);
  if (
    (fence && !(fence[2]?.startsWith('`') && fence[3]?.includes('`'))) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line)
  )
    return true;
  const item = ITEM.exec(line);
  if (
    item &&
    (!inParagraph || !/\d/.test(item[2] ?? '') || Number.parseInt(item[2] ?? '', 10) === 1) &&
    (item[4] ?? '').trim() !== ''
  )
    return true;
  return tableStartsAt(lines, at);
}

/**
 * A header row with a pipe, and under it a delimiter row of as many cells.
 * @param {string[]} lines
 * @param {number} at
 */
function tableStartsAt(lines, at) {
  const line = lines[at] ?? '';
  const delimiter = lines[at + 1];
  if (!line.includes('|') || delimiter === undefined || !delimiter.includes('-')) return false;
  const cells = cellsOf(delimiter);
  return cells.length > 0 && cells.every((cell) => DELIMITER_CELL.test(cell)) && cells.length === cellsOf(line).length;
}

/**
 * A row's cells: split at pipes (not at an escaped `\|`, which stays a pipe), the outer pipes dropped.
 * @param {string} line
 * @returns {string[]}
 */
function cellsOf(line) {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  const cells = [];
  let cell = '';
  for (let i = 0; i < row.length; i++) {
    const char = row[i];
    if (char === '\\' && row[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (char === '|') {
      cells.push(cell.trim());
      cell = '';
    } else {
      cell += char;
    }
  }
  cells.push(cell.trim());
  return cells;
}

/**
 * What makes items one list: the bullet itself, or an ordered list's delimiter.
 * @param {string} marker
 */
function listKind(marker) {
  return /\d/.test(marker) ? `1${marker.slice(-1)}` : marker;
}

/** @param {string} line */
function indentOf(line) {
  return line.length - line.trimStart().length;
}

/** @param {string} line */
function isBlank(line) {
  return line.trim() === '';
}

/**
 * Leading tabs as four spaces each (indentation is what nests a list).
 * @param {string} line
 */
function expandTabs(line) {
  return line.replace(/^[ \t]+/, (lead) => lead.replace(/\t/g, '    '));
}
