// Markdown inside a block, read into plain data (markdown.js builds the nodes): `code`,
// **strong**, *emphasis* (and _emphasis_ between words, never inside snake_case), ~~struck~~,
// [links](https://…), <https://…> and bare https:// addresses, and a backslash that makes the
// next mark literal.
//
// A link is a link only to an absolute http or https address: `javascript:`, `data:`, a
// relative path or anything else stays text, exactly as written, so nothing is hidden behind
// words. An image is never loaded: `![alt](https://…)` is a link to it. HTML is never HTML.
//
// Hostile input must not hang the page: a search for a closing mark that failed from one place
// fails from every later one (the closer does not depend on the opener), so it is not repeated;
// brackets are matched in one pass; emphasis nests at most MAX_DEPTH deep.

/**
 * @typedef {{ type: 'text', text: string }
 *   | { type: 'code', text: string }
 *   | { type: 'strong' | 'em' | 'del', children: Inline[] }
 *   | { type: 'link', href: string, children: Inline[] }} Inline
 */

const MAX_DEPTH = 8;
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const BARE_URL = /^https?:\/\/[^\s<>]*[^\s<>.,;:!?'")\]*_~]/i;
const AUTOLINK = /^<(https?:\/\/[^\s<>]+)>/i;

/**
 * A link's address when it may be one: absolute, http or https. Anything else: null.
 * @param {string} address
 * @returns {string | null}
 */
export function safeHref(address) {
  if (!/^https?:\/\//i.test(address)) return null;
  try {
    const url = new URL(address);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The text's inline nodes.
 * @param {string} text
 * @returns {Inline[]}
 */
export function parseInline(text) {
  return new InlineReader(text, 0, false).read();
}

class InlineReader {
  /**
   * @param {string} text
   * @param {number} depth
   * @param {boolean} inLink no link inside a link
   */
  constructor(text, depth, inLink) {
    this.text = text;
    this.depth = depth;
    this.inLink = inLink;
    /** @type {Inline[]} */
    this.out = [];
    this.plain = '';
    /** Where a search for a closing mark failed: from there on, it fails again. */
    /** @type {Map<string, number>} */
    this.noCloser = new Map();
    /** @type {Map<number, number> | undefined} */
    this.brackets = undefined;
  }

  /** @returns {Inline[]} */
  read() {
    const { text } = this;
    let i = 0;
    while (i < text.length) {
      const next = this.step(i);
      if (next > i) {
        i = next;
      } else {
        this.plain += text[i];
        i++;
      }
    }
    this.flush();
    return this.out;
  }

  /**
   * Read a construct that starts at `i`; the index after it, or `i` when none starts there.
   * @param {number} i
   * @returns {number}
   */
  step(i) {
    const { text } = this;
    const char = text[i];
    if (char === '\\' && PUNCTUATION.test(text[i + 1] ?? '')) {
      this.plain += text[i + 1];
      return i + 2;
    }
    if (char === '`') return this.code(i);
    if (!this.inLink && char === '<') return this.autolink(i);
    if (!this.inLink && (char === 'h' || char === 'H') && !/[\p{L}\p{N}]/u.test(text[i - 1] ?? ''))
      return this.bareUrl(i);
    if (!this.inLink && char === '[') return this.link(i, false);
    if (!this.inLink && char === '!' && text[i + 1] === '[') return this.link(i + 1, true);
    if (this.depth < MAX_DEPTH && (char === '*' || char === '_' || char === '~')) return this.emphasis(i);
    return i;
  }

  flush() {
    if (this.plain) this.out.push({ type: 'text', text: this.plain });
    this.plain = '';
  }

  /** @param {Inline} node */
  emit(node) {
    this.flush();
    this.out.push(node);
  }

  /**
   * `code`: up to a run of as many backticks; no closing run, the backticks are text.
   * @param {number} i
   */
  code(i) {
    const { text } = this;
    const run = runLength(text, i, '`');
    const key = `\`${run}`;
    // Inside code a backslash is a backslash (`C:\path\`): no escapes while looking for its end.
    const close = this.findCloser(key, i + run, (k) => runLength(text, k, '`') === run && text[k - 1] !== '`', false);
    if (close < 0) {
      this.plain += '`'.repeat(run);
      return i + run;
    }
    let content = text.slice(i + run, close).replace(/\n/g, ' ');
    if (content.length > 2 && content.startsWith(' ') && content.endsWith(' ') && content.trim())
      content = content.slice(1, -1);
    this.emit({ type: 'code', text: content });
    return close + run;
  }

  /** @param {number} i */
  autolink(i) {
    const match = AUTOLINK.exec(this.text.slice(i, i + 2_100));
    const href = match ? safeHref(match[1] ?? '') : null;
    if (!match || !href) return i;
    this.emit({ type: 'link', href, children: [{ type: 'text', text: match[1] ?? '' }] });
    return i + match[0].length;
  }

  /** @param {number} i */
  bareUrl(i) {
    const match = BARE_URL.exec(this.text.slice(i, i + 2_100));
    if (!match) return i;
    let url = match[0];
    // A closing parenthesis belongs to the address only when it opened one: "(see https://x.y/a_(b))".
    while (url.endsWith(')') && count(url, '(') < count(url, ')')) url = url.slice(0, -1);
    const href = safeHref(url);
    if (!href) return i;
    this.emit({ type: 'link', href, children: [{ type: 'text', text: url }] });
    return i + url.length;
  }

  /**
   * [text](address "title"), or an image ![alt](address) shown as a link to it. Not a safe
   * address: the whole thing is text, as written.
   * @param {number} open the `[`
   * @param {boolean} image
   */
  link(open, image) {
    const { text } = this;
    const close = this.bracketMatch(open);
    // Not a link: nothing is read here (for an image, not even its `!`).
    const none = image ? open - 1 : open;
    if (close === undefined || text[close + 1] !== '(') return none;
    const destination = readDestination(text, close + 2);
    if (!destination) return none;
    const href = safeHref(destination.address);
    const start = image ? open - 1 : open;
    if (!href) {
      this.plain += text.slice(start, destination.end);
      return destination.end;
    }
    const label = text.slice(open + 1, close);
    const children = image
      ? [{ type: /** @type {const} */ ('text'), text: label || href }]
      : new InlineReader(label, this.depth + 1, true).read();
    this.emit({ type: 'link', href, children: children.length > 0 ? children : [{ type: 'text', text: href }] });
    return destination.end;
  }

  /**
   * **strong**, *em*, ***both***, _em_, __strong__, ~~del~~: an opener followed by a
   * non-space, a closer of the same run after a non-space; `_` only between non-words.
   * @param {number} i
   */
  emphasis(i) {
    const { text } = this;
    const char = text[i] ?? '*';
    const run = runLength(text, i, char);
    const after = text[i + run] ?? '';
    if (!after || /\s/.test(after)) return this.literal(i, run, char);
    if (char === '_' && /[\p{L}\p{N}]/u.test(text[i - 1] ?? '')) return this.literal(i, run, char);
    if (char === '~' && run !== 2) return this.literal(i, run, char);
    for (const size of run >= 3 ? [3, 2, 1] : run === 2 ? [2, 1] : [1]) {
      if (char === '~' && size !== 2) continue;
      const key = `${char}${size}`;
      const close = this.findCloser(key, i + size, (k) => {
        if (runLength(text, k, char) !== size || text[k - 1] === char || /\s/.test(text[k - 1] ?? '')) return false;
        return char !== '_' || !/[\p{L}\p{N}]/u.test(text[k + size] ?? '');
      });
      if (close < 0 || close === i + size) continue;
      // A longer opener than its closer: the extra marks are text ("***a**" is "*" and a strong "a").
      this.plain += char.repeat(run - size);
      const inner = new InlineReader(text.slice(i + run, close), this.depth + 1, this.inLink).read();
      /** @type {Inline} */
      const node =
        char === '~'
          ? { type: 'del', children: inner }
          : size === 3
            ? { type: 'strong', children: [{ type: 'em', children: inner }] }
            : { type: size === 2 ? 'strong' : 'em', children: inner };
      this.emit(node);
      return close + size;
    }
    return this.literal(i, run, char);
  }

  /**
   * A run of marks that opens nothing: text.
   * @param {number} i
   * @param {number} run
   * @param {string} char
   */
  literal(i, run, char) {
    this.plain += char.repeat(run);
    return i + run;
  }

  /**
   * The first index from `from` where `isCloser` holds, or -1. A failed search is remembered:
   * whether a place closes does not depend on where the search began.
   * @param {string} key
   * @param {number} from
   * @param {(at: number) => boolean} isCloser
   * @param {boolean} [escapes] whether `\` hides the character after it
   */
  findCloser(key, from, isCloser, escapes = true) {
    const failedFrom = this.noCloser.get(key);
    if (failedFrom !== undefined && from >= failedFrom) return -1;
    const { text } = this;
    // Past where an earlier search failed, there is none.
    const end = failedFrom ?? text.length;
    for (let k = from; k < end; k++) {
      if (escapes && text[k] === '\\') {
        k++;
        continue;
      }
      if (isCloser(k)) return k;
    }
    this.noCloser.set(key, Math.min(from, failedFrom ?? from));
    return -1;
  }

  /**
   * The `]` that closes the `[` at `open` (escapes skipped, nesting counted), found in one pass over the text.
   * @param {number} open
   * @returns {number | undefined}
   */
  bracketMatch(open) {
    if (!this.brackets) {
      this.brackets = new Map();
      const stack = [];
      const { text } = this;
      for (let k = 0; k < text.length; k++) {
        if (text[k] === '\\') k++;
        else if (text[k] === '[') stack.push(k);
        else if (text[k] === ']') {
          const opened = stack.pop();
          if (opened !== undefined) this.brackets.set(opened, k);
        }
      }
    }
    return this.brackets.get(open);
  }
}

/**
 * A link's destination after `(`: `<address>` or an address without spaces (parentheses
 * balanced), an optional title, then `)`.
 * @param {string} text
 * @param {number} from
 * @returns {{ address: string, end: number } | null}
 */
function readDestination(text, from) {
  let k = from;
  while (text[k] === ' ') k++;
  let address = '';
  if (text[k] === '<') {
    const end = text.indexOf('>', k);
    if (end < 0 || text.slice(k, end).includes('\n')) return null;
    address = text.slice(k + 1, end);
    k = end + 1;
  } else {
    let depth = 0;
    const start = k;
    for (; k < text.length; k++) {
      const char = text[k];
      if (char === '\\') k++;
      else if (char === '(') depth++;
      else if (char === ')') {
        if (depth === 0) break;
        depth--;
      } else if (char !== undefined && /\s/.test(char)) break;
    }
    address = text.slice(start, k);
  }
  while (text[k] === ' ') k++;
  const quote = text[k];
  if (quote === '"' || quote === "'") {
    const end = text.indexOf(quote, k + 1);
    if (end < 0) return null;
    k = end + 1;
    while (text[k] === ' ') k++;
  }
  if (text[k] !== ')') return null;
  return { address, end: k + 1 };
}

/**
 * @param {string} text
 * @param {number} at
 * @param {string} char
 */
function runLength(text, at, char) {
  let end = at;
  while (text[end] === char) end++;
  return end - at;
}

/**
 * @param {string} text
 * @param {string} char
 */
function count(text, char) {
  return text.split(char).length - 1;
}
