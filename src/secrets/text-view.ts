// The text a masker searches: a copy of the text with what hides a secret's characters from a
// plain search taken out, and a map back to where each of its characters came from. Two
// things are undone, in one pass:
// - percent-encoding: `%2D`, `%2d` and `-` are the same character to a URL, so every `%XX`
//   becomes the one character (code 0xXX) it stands for, whatever the case of its digits and
//   whichever characters around it were left unencoded;
// - line breaks: a value wrapped by `base64`, `fold`, `xxd -p` or a person (`\r\n`, `\n`,
//   JSON's escaped `\n`, a trailing `\` continuation, the spaces around them) reads as if the
//   break were not there.
// A match in the view maps back to the span of the original text it was read from, so the
// masker replaces exactly those characters and leaves everything else as it was.

export interface TextView {
  /** The searched text. */
  text: string;
  /** For each character of `text`: where it starts in the original. */
  start: Int32Array;
  /** For each character of `text`: where it ends in the original (exclusive). */
  end: Int32Array;
}

const PERCENT = 0x25;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;
const LOWER_N = 0x6e;
const LOWER_R = 0x72;

/** The view of `text` (see the header). Linear in the text's length. */
export function viewOf(text: string): TextView {
  const length = text.length;
  const start = new Int32Array(length);
  const end = new Int32Array(length);
  // Most text has nothing to undo: the view is the text itself.
  if (!needsView(text)) {
    for (let i = 0; i < length; i++) {
      start[i] = i;
      end[i] = i + 1;
    }
    return { text, start, end };
  }
  // The view is built from slices of the text (the runs left as they are) and the characters
  // percent-escapes stand for.
  const parts: string[] = [];
  let kept = 0;
  let size = 0;
  let at = 0;
  const map = (from: number, to: number) => {
    start[size] = from;
    end[size++] = to;
  };
  while (at < length) {
    const code = text.charCodeAt(at);
    if (code === PERCENT) {
      const byte = percentByte(text, at);
      if (byte !== -1) {
        parts.push(text.slice(kept, at), String.fromCharCode(byte));
        map(at, at + 3);
        at += 3;
        kept = at;
        continue;
      }
    } else if (code === SPACE || code === TAB || code === CR || code === LF || code === BACKSLASH) {
      const run = blankRun(text, at);
      if (run.broken) {
        parts.push(text.slice(kept, at));
        at = run.end;
        kept = at;
        continue;
      }
      // Blanks with no line break among them are ordinary characters.
      if (run.end > at) {
        for (; at < run.end; at++) map(at, at + 1);
        continue;
      }
    }
    map(at, at + 1);
    at++;
  }
  parts.push(text.slice(kept, at));
  return { text: parts.join(''), start: start.subarray(0, size), end: end.subarray(0, size) };
}

/**
 * Where the end of `text` could still change its view once more text follows: `at` is where
 * its trailing blanks begin (a line break may join what comes next to what came before), or
 * its `%` / `%X` that the next characters may complete (`escape`); the text's length when
 * neither.
 */
export function unsettledTail(text: string): { at: number; escape: boolean } {
  const length = text.length;
  if (length >= 1 && text.charCodeAt(length - 1) === PERCENT) return { at: length - 1, escape: true };
  if (length >= 2 && text.charCodeAt(length - 2) === PERCENT && isHex(text.charCodeAt(length - 1)))
    return { at: length - 2, escape: true };
  let at = length;
  while (at > 0) {
    const code = text.charCodeAt(at - 1);
    if (code !== SPACE && code !== TAB && code !== CR && code !== LF && code !== BACKSLASH) break;
    at--;
  }
  return { at, escape: false };
}

function needsView(text: string): boolean {
  return text.includes('%') || text.includes('\n') || text.includes('\r') || text.includes('\\');
}

/**
 * A run of blanks from `at`: spaces, tabs, line breaks (raw, or JSON-escaped `\n` / `\r`),
 * and backslashes that continue a line. `broken`: it holds a line break, so the whole run
 * is taken out of the view.
 */
function blankRun(text: string, at: number): { end: number; broken: boolean } {
  let i = at;
  let broken = false;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === SPACE || code === TAB) {
      i++;
    } else if (code === CR || code === LF) {
      broken = true;
      i++;
    } else if (code === BACKSLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === LOWER_N || next === LOWER_R || next === CR || next === LF) {
        broken = true;
        i += 2;
      } else if (next === BACKSLASH && (text.charCodeAt(i + 2) === LOWER_N || text.charCodeAt(i + 2) === LOWER_R)) {
        // `\\n`: a continuation backslash before an escaped line break, as JSON writes it.
        broken = true;
        i += 3;
      } else {
        break;
      }
    } else {
      break;
    }
  }
  return { end: i, broken };
}

function percentByte(text: string, at: number): number {
  if (at + 2 >= text.length) return -1;
  const high = hexValue(text.charCodeAt(at + 1));
  const low = hexValue(text.charCodeAt(at + 2));
  return high === -1 || low === -1 ? -1 : high * 16 + low;
}

function isHex(code: number): boolean {
  return hexValue(code) !== -1;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10;
  return -1;
}
