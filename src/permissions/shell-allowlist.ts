// The shell allow-list: commands an operator trusts to run without asking, like
// `git status` or `npm test`.
//
// One idea: an entry covers a command only when the command is *one program with
// arguments* whose argv starts with the entry's argv. Anything that could make one line do
// more — chaining, pipes, redirection, substitution, a second line — is refused on the raw
// text before any parsing, even inside quotes: a tokenizer that disagrees with bash about
// quoting in one corner case would otherwise turn "git status" into "and then rm -rf ~".

/**
 * Characters whose presence anywhere in a command disqualifies it. Wider than the
 * operators alone, on purpose: `$` also covers `${…}` and `$'…'` (expansions whose result
 * the argv comparison cannot see), `(`/`)` cover subshells and extended globs, and NUL
 * would be cut by the kernel at exec time.
 */
const DISQUALIFYING: ReadonlyMap<string, string> = new Map([
  [';', '";" (runs another command)'],
  ['&', '"&" (background job or &&)'],
  ['|', '"|" (pipe or ||)'],
  ['>', '">" (redirection)'],
  ['<', '"<" (redirection)'],
  ['`', 'a backtick (command substitution)'],
  ['$', '"$" (substitution or expansion)'],
  ['(', '"(" (subshell)'],
  [')', '")" (subshell)'],
  ['\n', 'a line break (a second command)'],
  ['\r', 'a carriage return'],
  ['\0', 'a NUL byte'],
]);

/** The first disqualifying character in `command`, described for a human; undefined if none. */
export function findShellOperator(command: string): string | undefined {
  for (const character of command) {
    const description = DISQUALIFYING.get(character);
    if (description !== undefined) return description;
  }
  return undefined;
}

/**
 * Split a command line into words the way bash would before expansion: blanks separate
 * words, single quotes are literal, double quotes honour `\"`, `\\`, `` \` `` and `\$`,
 * a backslash outside quotes escapes the next character, `#` at a word start begins a
 * comment. Returns null for unbalanced quotes or a trailing backslash. It expands nothing:
 * callers must refuse text containing `$`, backticks or globs they care about first.
 */
export function splitShellWords(text: string): string[] | null {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  for (let i = 0; i < text.length; i++) {
    const character = text[i]!;
    if (character === ' ' || character === '\t' || character === '\n') {
      endWord();
      continue;
    }
    if (character === '#' && !inWord) {
      const lineEnd = text.indexOf('\n', i);
      if (lineEnd < 0) break;
      i = lineEnd - 1;
      continue;
    }
    if (character === '\\') {
      if (i + 1 >= text.length) return null;
      i++;
      // Backslash-newline is a line continuation: it vanishes and starts no word.
      if (text[i] === '\n') continue;
      word += text[i];
      inWord = true;
      continue;
    }
    inWord = true;
    if (character === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      word += text.slice(i + 1, end);
      i = end;
      continue;
    }
    if (character === '"') {
      let closed = false;
      for (i++; i < text.length; i++) {
        const inner = text[i]!;
        if (inner === '"') {
          closed = true;
          break;
        }
        const next = text[i + 1];
        if (inner === '\\' && next !== undefined && '"\\$`\n'.includes(next)) {
          if (next !== '\n') word += next;
          i++;
          continue;
        }
        word += inner;
      }
      if (!closed) return null;
      continue;
    }
    word += character;
  }
  endWord();
  return words;
}

export type AllowListVerdict = { allowed: true; entry: string } | { allowed: false; reason: string };

export interface ShellAllowList {
  readonly entries: readonly string[];
  /** Whether an entry covers `command`, and if not, why (shown on the approval card). */
  check(command: string): AllowListVerdict;
}

interface ParsedEntry {
  text: string;
  argv: string[];
}

/**
 * Build the allow-list from configured entries. An entry that could never match safely
 * (empty, unbalanced quotes, containing an operator) is a configuration mistake and throws
 * at start-up instead of silently covering nothing.
 */
export function createShellAllowList(entries: readonly string[]): ShellAllowList {
  const parsed: ParsedEntry[] = entries.map((raw) => {
    const text = raw.trim();
    const operator = findShellOperator(text);
    if (operator !== undefined) throw new Error(`invalid shell allow-list entry ${JSON.stringify(raw)}: it contains ${operator}`);
    const argv = splitShellWords(text);
    if (argv === null) throw new Error(`invalid shell allow-list entry ${JSON.stringify(raw)}: unbalanced quotes`);
    if (argv.length === 0) throw new Error(`invalid shell allow-list entry ${JSON.stringify(raw)}: it is empty`);
    return { text, argv };
  });

  return {
    entries: parsed.map((entry) => entry.text),
    check(command) {
      if (parsed.length === 0) return { allowed: false, reason: 'the shell allow-list is empty' };
      const operator = findShellOperator(command);
      if (operator !== undefined) {
        return { allowed: false, reason: `the command contains ${operator}, which the allow-list never covers` };
      }
      const argv = splitShellWords(command);
      if (argv === null) return { allowed: false, reason: 'the command has unbalanced quotes' };
      const entry = parsed.find((candidate) => startsWithArgv(argv, candidate.argv));
      if (entry) return { allowed: true, entry: entry.text };
      return { allowed: false, reason: 'no shell allow-list entry matches it' };
    },
  };
}

/** Whole words only: `git status` covers `git status -s`, never `git statusx` or `git stash`. */
function startsWithArgv(argv: readonly string[], prefix: readonly string[]): boolean {
  return argv.length >= prefix.length && prefix.every((word, index) => argv[index] === word);
}
