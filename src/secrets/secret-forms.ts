// The forms one secret value takes in text that leaves the bot, as the masker searches for
// them (in a text's view: percent-encoding decoded, line breaks taken out; see text-view.ts):
// - as written, JSON-escaped once and twice (a tool result or a log line is JSON, and a JSON
//   string inside it is escaped twice), percent-encoded (decoded by the view, whatever its
//   case or mix; the encoded form itself is kept for a value encoded twice);
// - hex of its UTF-8 bytes, lower and upper case (`xxd -p`, `od`, a hash tool's input dump);
// - base64 and base64url: the value's own encoding, and the part of it that is the same
//   wherever the value sits in a longer encoded blob (`env | base64`): the value starts at one
//   of three byte offsets modulo 3, and for each the characters that depend only on the
//   value's own bytes are known; the one or two at each edge that mix in a neighbour's bits
//   are not searched for (they say at most 4 bits of the value);
// - UTF-16, little- and big-endian, as its bytes read one character each (a file checked by
//   attach_file is read as latin1, so the value's UTF-16 bytes are found wherever they sit, with
//   or without a byte-order mark before them, at an even or odd offset: `iconv -t UTF-16`,
//   PowerShell's `Out-File`, a Windows registry export);
// - reversed (`rev`) and ROT13 (`tr A-Za-z N-ZA-Mn-za-m`): two transforms a person tries first,
//   as cheap to look for as the value itself. Any other transform is not looked for: docs/security.md
//   says what cannot be.
import { viewOf } from './text-view.js';

/** The shortest search string kept: a shorter encoded part would match ordinary text by chance. */
const MIN_FORM_LENGTH = 6;

/** Every form of `value`, as searched for (in view form), without repeats. */
export function formsOf(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const once = JSON.stringify(value).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  const forms = [value, once, twice, encodeURIComponent(value)];
  // A percent-encoded non-ASCII value decodes, byte by byte, to its UTF-8 bytes as characters.
  const byteChars = bytes.toString('latin1');
  if (byteChars !== value) forms.push(byteChars);
  forms.push(utf16Bytes(value, 'le'), utf16Bytes(value, 'be'), [...value].reverse().join(''), rot13(value));
  const hex = bytes.toString('hex');
  forms.push(hex, hex.toUpperCase());
  for (const encoding of ['base64', 'base64url'] as const) {
    forms.push(bytes.toString(encoding));
    for (let offset = 0; offset < 3; offset++) forms.push(stableBase64(bytes, offset, encoding));
  }
  const searched = forms.map((form) => viewOf(form).text).filter((form) => form.length >= MIN_FORM_LENGTH);
  return [...new Set(searched)];
}

/**
 * The characters of `bytes`' base64 that do not depend on its neighbours, when it starts
 * `offset` bytes (0, 1 or 2) into a 3-byte group of a longer blob. A base64 character holds 6
 * bits: those wholly inside the value's bits are stable, the ones straddling its edges are not.
 */
function stableBase64(bytes: Buffer, offset: number, encoding: 'base64' | 'base64url'): string {
  const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
  const encoded = padded.toString(encoding);
  const first = Math.ceil((offset * 8) / 6);
  const last = Math.floor(((offset + bytes.length) * 8) / 6);
  return encoded.slice(first, last);
}

/** The value's UTF-16 bytes (without a byte-order mark), one character per byte (latin1). */
function utf16Bytes(value: string, order: 'le' | 'be'): string {
  const little = Buffer.from(value, 'utf16le');
  return (order === 'le' ? little : little.swap16()).toString('latin1');
}

/** ASCII letters rotated by 13; everything else as it is. */
function rot13(value: string): string {
  return value.replace(/[A-Za-z]/g, (letter) => {
    const base = letter <= 'Z' ? 65 : 97;
    return String.fromCharCode(((letter.charCodeAt(0) - base + 13) % 26) + base);
  });
}
