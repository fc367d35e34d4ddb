// The shell allow-list: commands an operator trusts to run without asking, like
// `git status` or `npm test`.
//
// One idea: an entry means exactly what it says. `git log` covers `git log` and nothing
// longer; `git log *` also covers plain extra arguments (revisions, file names), never an
// option, a `name=value` setting, `..`, a `.git` folder or a path outside the workspace —
// an option is how `git log --output=.git/config` rewrote the repository's config and
// `npm test --script-shell=…` ran a program of the model's choosing. Anything that could make
// one line do more than run one program — chaining, pipes, redirection, substitution,
// expansion, globs, a second line — is refused on the raw text before any parsing, even
// inside quotes: a tokenizer that disagrees with bash about quoting in one corner case would
// otherwise turn "git status" into "and then rm -rf ~".
//
// Paths are judged by their spelling, not on disk: the policy decides a whole batch of calls
// before any of them runs (an earlier `cd` may move the shell), so an argument may not climb
// with `..` at all, and an absolute one must lie in the workspace. A symbolic link inside the
// workspace that points out of it is not detected here; the sandbox is what confines that.
import { realpathSync } from 'node:fs';
import path from 'node:path';

const GLOB = 'a glob: the shell would replace it with matching file names';

/**
 * Characters whose presence anywhere in a command disqualifies it. Wider than the
 * operators alone, on purpose: `$` also covers `${…}`, `$VAR` and `$'…'` (expansions whose
 * result the argv comparison cannot see), `(`/`)` cover subshells and extended globs, `{`
 * covers brace expansion (`{--output=x,}` becomes an option), and NUL would be cut by the
 * kernel at exec time. Quotes do not help: `'*'` is refused like `*`.
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
  ['*', `"*" (${GLOB})`],
  ['?', `"?" (${GLOB})`],
  ['[', `"[" (${GLOB})`],
  ['{', '"{" (brace expansion: one word can become several)'],
  ['\n', 'a line break (a second command)'],
  ['\r', 'a carriage return'],
  ['\0', 'a NUL byte'],
]);

/**
 * `~` is expanded to a home folder at the start of a word and after `=` or `:`; after a
 * letter or digit it is git's "parent of" (`HEAD~2`) and harmless. So it passes only there.
 */
const TILDE_MAY_FOLLOW = /[A-Za-z0-9~^]/;

/** A first word like `FOO=1`: bash reads it as a variable for the command, not a program. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

/**
 * The first disqualifying character in `command`, described for a human; undefined if none.
 * @internal
 */
export function findShellOperator(command: string): string | undefined {
  let previous = '';
  for (const character of command) {
    const description = DISQUALIFYING.get(character);
    if (description !== undefined) return description;
    if (character === '~' && !TILDE_MAY_FOLLOW.test(previous)) {
      return '"~" where the shell would replace it with a home folder';
    }
    const code = character.charCodeAt(0);
    if ((code < 0x20 && character !== '\t') || code === 0x7f) {
      return `a control character (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
    }
    previous = character;
  }
  return undefined;
}

/**
 * Split a command line into words the way bash would before expansion: blanks separate
 * words, single quotes are literal, double quotes honour `\"`, `\\`, `` \` `` and `\$`,
 * a backslash outside quotes escapes the next character, `#` at a word start begins a
 * comment. Returns null for unbalanced quotes or a trailing backslash. It expands nothing:
 * callers must refuse text containing `$`, backticks or globs they care about first.
 * @internal
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

type AllowListVerdict = { allowed: true; entry: string } | { allowed: false; reason: string };

export interface ShellAllowList {
  readonly entries: readonly string[];
  /** Whether an entry covers `command`, and if not, why (shown on the approval card). */
  check(command: string): AllowListVerdict;
}

export interface ShellAllowListOptions {
  /**
   * The shell's workspace. An absolute path inside it may be an extra argument of a ` *`
   * entry; without it, no absolute path may.
   */
  workspaceRoot?: string;
}

interface ParsedEntry {
  /** As configured (trimmed), ` *` included: what reasons quote. */
  text: string;
  argv: string[];
  /** Ends in ` *`: plain extra arguments are allowed too. */
  open: boolean;
}

/**
 * Build the allow-list from configured entries. An entry that could never match safely
 * (empty, unbalanced quotes, containing an operator or a glob, starting with a variable)
 * is a configuration mistake and throws at start-up instead of silently covering nothing.
 */
export function createShellAllowList(entries: readonly string[], options: ShellAllowListOptions = {}): ShellAllowList {
  const parsed = entries.map(parseEntry);
  const workspace = workspaceRoots(options.workspaceRoot);

  return {
    entries: parsed.map((entry) => entry.text),
    check(command) {
      if (parsed.length === 0) return refuse('the shell allow-list is empty');
      const operator = findShellOperator(command);
      if (operator !== undefined) return refuse(`the command contains ${operator}, which the allow-list never covers`);
      const argv = splitShellWords(command);
      if (argv === null) return refuse('the command has unbalanced quotes');
      if (argv.length === 0) return refuse('the command is empty');
      const first = argv[0]!;
      if (ASSIGNMENT.test(first)) {
        return refuse(
          `the command starts with a variable assignment (${first.slice(0, first.indexOf('=') + 1)}…), which the allow-list never covers: a variable can change what a program does`,
        );
      }

      // The refusal of the entry that came closest (the longest one whose words start the
      // command), so the card names the argument that made the difference.
      let nearest: { words: number; reason: string } | undefined;
      for (const entry of parsed) {
        if (!startsWithArgv(argv, entry.argv)) continue;
        const extra = argv.slice(entry.argv.length);
        if (extra.length === 0) return { allowed: true, entry: entry.text };
        let reason: string;
        if (entry.open) {
          const problem = extra
            .map((argument) => extraArgumentProblem(argument, workspace()))
            .find((found) => found !== undefined);
          if (problem === undefined) return { allowed: true, entry: entry.text };
          reason = `\`${entry.text}\` allows plain extra arguments, but ${problem}`;
        } else {
          reason = `\`${entry.text}\` is allow-listed exactly as written, without further arguments (an entry ending in " *" would allow plain ones)`;
        }
        if (nearest === undefined || entry.argv.length > nearest.words) nearest = { words: entry.argv.length, reason };
      }
      return refuse(nearest?.reason ?? 'no shell allow-list entry matches it');
    },
  };
}

function parseEntry(raw: string): ParsedEntry {
  const invalid = (why: string): Error => new Error(`invalid shell allow-list entry ${JSON.stringify(raw)}: ${why}`);
  const text = raw.trim();
  if (text === '*') throw invalid('it must name a program before " *"');
  const open = /\s\*$/.test(text);
  const body = open ? text.slice(0, -1).trimEnd() : text;
  const operator = findShellOperator(body);
  if (operator !== undefined) {
    throw invalid(
      `it contains ${operator}${body.includes('*') ? '; "*" may only end an entry, after a space, to allow extra arguments' : ''}`,
    );
  }
  const argv = splitShellWords(body);
  if (argv === null) throw invalid('unbalanced quotes');
  if (argv.length === 0) throw invalid('it is empty');
  if (ASSIGNMENT.test(argv[0]!))
    throw invalid('it starts with a variable assignment; an entry starts with the program to run');
  return { text, argv, open };
}

/**
 * Why one extra argument of a ` *` entry is refused, as the end of a sentence; undefined if
 * it is a plain argument. Every argument is judged as a possible path (a program may read
 * `notes` as a file name as readily as `notes/a.txt`).
 */
function extraArgumentProblem(argument: string, workspace: readonly string[]): string | undefined {
  const shown = `\`${argument.length > 60 ? `${argument.slice(0, 59)}…` : argument}\``;
  if (argument.startsWith('-'))
    return `${shown} is an option, and options are never allowed as extra arguments (some write files or run programs)`;
  if (argument.includes('='))
    return `${shown} is a name=value argument, which programs like make and dd read as a setting`;
  if (/^file:/i.test(argument)) return `${shown} is a file: URL, which can name any file`;
  if (argument.startsWith('~')) return `${shown} names a home folder`;
  const components = argument.split('/');
  if (components.includes('..')) return `${shown} contains "..", which could lead out of the workspace`;
  if (components.some((component) => component.toLowerCase() === '.git')) {
    return `${shown} reaches into a .git folder, where a repository keeps the config and hooks that decide what git runs`;
  }
  if (argument.startsWith('/')) {
    const normalised = path.posix.normalize(argument);
    if (workspace.length === 0)
      return `${shown} is an absolute path, and the allow-list was not told where the workspace is`;
    if (!workspace.some((root) => normalised === root || normalised.startsWith(`${root}/`)))
      return `${shown} is a path outside the workspace`;
  }
  return undefined;
}

/**
 * The workspace root as configured and as it really is (the folder may be created only when
 * the first session starts, so its real path is looked up until it exists).
 */
function workspaceRoots(configured: string | undefined): () => readonly string[] {
  if (configured === undefined) return () => [];
  const resolved = path.resolve(configured);
  let roots: readonly string[] | undefined;
  return () => {
    if (roots) return roots;
    try {
      const real = realpathSync(resolved);
      roots = real === resolved ? [resolved] : [resolved, real];
      return roots;
    } catch {
      return [resolved];
    }
  };
}

function refuse(reason: string): AllowListVerdict {
  return { allowed: false, reason };
}

/** Whole words only: `git status` starts `git status -s`, never `git statusx` or `git stash`. */
function startsWithArgv(argv: readonly string[], prefix: readonly string[]): boolean {
  return argv.length >= prefix.length && prefix.every((word, index) => argv[index] === word);
}
