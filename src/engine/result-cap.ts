// The last line of the output budget: a tool result is capped as the model receives it.
//
// Tools cap their own answers (src/tools/output.ts), but they count the characters of what
// they return, and the model reads the tool message content: for an object result, its
// JSON, where a control character costs six characters (`\u0000`) and a quote or a line
// break two. A 20,000-character shell answer once reached the model as 119,607. So the
// engine measures that content itself, for every tool, and trims what is over the cap. A cut
// is never silent (it says how many characters went) and never breaks JSON: in a JSON result
// the largest string fields lose their middle, the note inside them; only if that cannot
// fit is the content replaced by a JSON object holding a preview of its start and a note.
// Plain text loses its middle too: a tool's own closing note (what it cut, which lines these
// are) is at the end.
import { thousands } from '../text/thousands.js';

/**
 * The tools' default budget (20,000) plus room for the JSON around it and its escapes. It binds
 * every tool, so a tool's own larger cap (MCP's 50,000, src/mcp/result-text.ts) is held to it.
 */
export const DEFAULT_MAX_RESULT_CHARS = 24_000;
/** Below this, the notes would crowd out the content. */
export const MIN_MAX_RESULT_CHARS = 1_000;

/** At most this many string fields are cut before the whole content is replaced. */
const MAX_FIELDS_CUT = 8;

/** `content` if it is at most `maxChars` long, else a trimmed copy that is, saying what was cut. */
export function capResultContent(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  const structured = parseStructured(content);
  if (structured === undefined) return trimMiddle(content, maxChars, maxChars, 'plain');
  return shrinkStringFields(structured, maxChars) ?? previewObject(content, maxChars);
}

function parseStructured(content: string): object | undefined {
  const first = content.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    const value: unknown = JSON.parse(content);
    return value !== null && typeof value === 'object' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Cut the largest string fields, one at a time, until the JSON fits. Null when it cannot
 * (many small strings, huge keys): cutting a string shorter than its note only adds.
 */
function shrinkStringFields(value: object, maxChars: number): string | null {
  // Measured again: a pretty-printed answer (an MCP server's) may fit once compact.
  let json = JSON.stringify(value);
  if (json.length <= maxChars) return json;
  for (let round = 0; round < MAX_FIELDS_CUT; round++) {
    const largest = largestString(value);
    if (!largest) return null;
    const budget = largest.escapedLength - (json.length - maxChars);
    const text = largest.holder[largest.key] as string;
    const trimmed = trimMiddle(text, Math.max(0, budget), maxChars, 'field');
    if (escapedLength(trimmed) >= largest.escapedLength) return null;
    largest.holder[largest.key] = trimmed;
    json = JSON.stringify(value);
    if (json.length <= maxChars) return json;
  }
  return null;
}

interface StringField {
  holder: Record<string | number, unknown>;
  key: string | number;
  /** Its length as JSON, quotes excluded. */
  escapedLength: number;
}

function largestString(root: object): StringField | null {
  let largest: StringField | null = null;
  const stack: object[] = [root];
  while (stack.length > 0) {
    const holder = stack.pop() as Record<string | number, unknown>;
    const keys: (string | number)[] = Array.isArray(holder) ? holder.map((_item, index) => index) : Object.keys(holder);
    for (const key of keys) {
      const item = holder[key];
      if (typeof item === 'string') {
        const length = escapedLength(item);
        if (!largest || length > largest.escapedLength) largest = { holder, key, escapedLength: length };
      } else if (item !== null && typeof item === 'object') {
        stack.push(item);
      }
    }
  }
  return largest;
}

/**
 * `text` without its middle, with a note saying how many characters went. For a field,
 * `budget` counts the text as JSON (escapes included), so the object it sits in fits.
 */
function trimMiddle(text: string, budget: number, maxChars: number, where: 'plain' | 'field'): string {
  const note = (cut: number): string =>
    `\n[… ${formatCount(cut)} characters cut from the middle: tool results are capped at ${formatCount(maxChars)} characters as sent …]\n`;
  const cost = where === 'field' ? escapedLength : (piece: string) => piece.length;
  // The note at its longest (every character cut), so the real one fits where it stood.
  const room = Math.max(0, budget - cost(note(text.length)));
  const headEnd = takeHead(text, Math.ceil(room / 2), where);
  const tailStart = takeTail(text, Math.floor(room / 2), headEnd, where);
  return text.slice(0, headEnd) + note(tailStart - headEnd) + text.slice(tailStart);
}

/** The last resort: a valid JSON object with the start of the content as a string and a note. */
function previewObject(content: string, maxChars: number): string {
  const answer = {
    result_cut: `this tool result had ${formatCount(content.length)} characters as JSON, over the engine's cap of ${formatCount(maxChars)} on tool results; only its start is shown, as text`,
    preview: '',
  };
  const room = Math.max(0, maxChars - JSON.stringify(answer).length);
  answer.preview = content.slice(0, takeHead(content, room, 'field'));
  return JSON.stringify(answer);
}

/** The end of the longest start of `text` that costs at most `budget`, never half a surrogate pair. */
function takeHead(text: string, budget: number, where: 'plain' | 'field'): number {
  if (where === 'plain') return safeEnd(text, Math.min(budget, text.length));
  let spent = 0;
  let end = 0;
  while (end < text.length) {
    const cost = unitCost(text, end);
    if (spent + cost > budget) break;
    spent += cost;
    end++;
  }
  return safeEnd(text, end);
}

/** The start of the longest end of `text` (not before `floor`) that costs at most `budget`. */
function takeTail(text: string, budget: number, floor: number, where: 'plain' | 'field'): number {
  if (where === 'plain') return safeStart(text, Math.max(floor, text.length - budget));
  let spent = 0;
  let start = text.length;
  while (start > floor) {
    const cost = unitCost(text, start - 1);
    if (spent + cost > budget) break;
    spent += cost;
    start--;
  }
  return safeStart(text, start);
}

/** What one UTF-16 unit costs in JSON.stringify's output. */
function unitCost(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code >= 0x20 && code !== 0x22 && code !== 0x5c && (code < 0xd800 || code > 0xdfff)) return 1;
  if (
    code === 0x22 ||
    code === 0x5c ||
    code === 0x08 ||
    code === 0x09 ||
    code === 0x0a ||
    code === 0x0c ||
    code === 0x0d
  )
    return 2;
  if (code < 0x20) return 6;
  // A surrogate: one character when paired, escaped as \udXXX when alone.
  if (code <= 0xdbff) return isLowSurrogate(text.charCodeAt(index + 1)) ? 1 : 6;
  return isHighSurrogate(text.charCodeAt(index - 1)) ? 1 : 6;
}

function escapedLength(text: string): number {
  return JSON.stringify(text).length - 2;
}

function safeEnd(text: string, end: number): number {
  return end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end;
}

function safeStart(text: string, start: number): number {
  return start > 0 && start < text.length && isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function formatCount(count: number): string {
  return thousands(count);
}
