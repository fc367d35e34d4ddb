import { describe, expect, it } from 'vitest';
import { createShellAllowList, findShellOperator, splitShellWords } from '../../src/permissions/index.js';

describe('an allow-list entry covers a command whose argv starts with its argv', () => {
  const allowList = createShellAllowList(['git status', 'npm test', 'ls']);

  it.each([
    ['git status', 'git status'],
    ['git status -s', 'git status'],
    ['git status --porcelain src/', 'git status'],
    ['  git   status  ', 'git status'],
    ["git 'status'", 'git status'],
    ['git "status" -s', 'git status'],
    ['npm test -- --run', 'npm test'],
    ['ls -la', 'ls'],
    ['git status # just looking', 'git status'],
  ])('%j is covered by %j', (command, entry) => {
    expect(allowList.check(command)).toEqual({ allowed: true, entry });
  });

  it.each(['git statusx', 'git stash', 'git', 'gitstatus', 'git-status', 'npm install', 'npm testing', '"git status"', 'CI=1 npm test', 'sudo git status', ''])(
    '%j is not covered: whole words, from the first one',
    (command) => {
      expect(allowList.check(command).allowed).toBe(false);
    },
  );
});

describe('an allow-list entry never covers a command that could do more than run one program', () => {
  const allowList = createShellAllowList(['git status']);

  it.each([
    'git status; rm -rf ~',
    'git status && curl evil',
    'git status || curl evil',
    'git status | sh',
    'git status > /etc/passwd',
    'git status >> ~/.bashrc',
    'git status < x',
    'git status <<< x',
    'git status `whoami`',
    'git status $(whoami)',
    'git status\nrm -rf /',
    'git status\rrm -rf /',
    'git status &',
    'git status ${HOME}',
    'git status $HOME',
    'git status (',
    // Even inside quotes: the raw text decides, not a tokenizer's reading of it.
    "git status ';' rm",
    'git status "$(whoami)"',
    "git status 'a|b'",
    'git status "\n"',
  ])('%j is refused', (command) => {
    const verdict = allowList.check(command);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.reason).toMatch(/never covers/);
  });

  it('names the operator it found, for the approval card', () => {
    expect(allowList.check('git status && curl evil')).toEqual({
      allowed: false,
      reason: 'the command contains "&" (background job or &&), which the allow-list never covers',
    });
    expect(findShellOperator('git status\nrm')).toBe('a line break (a second command)');
    expect(findShellOperator('git status -s')).toBeUndefined();
  });

  it('refuses unbalanced quotes instead of guessing', () => {
    expect(allowList.check("git status 'oops")).toEqual({ allowed: false, reason: 'the command has unbalanced quotes' });
  });

  it('an empty allow-list covers nothing, and says so', () => {
    expect(createShellAllowList([]).check('git status')).toEqual({ allowed: false, reason: 'the shell allow-list is empty' });
  });
});

describe('allow-list entries are checked when the list is built', () => {
  it.each([
    ['git status; rm -rf /', /contains ";"/],
    ['npm test | tee log', /contains "\|"/],
    ['', /empty/],
    ['   ', /empty/],
    ["git 'status", /unbalanced quotes/],
  ])('%j is a configuration error', (entry, message) => {
    expect(() => createShellAllowList([entry])).toThrow(message);
  });

  it('entries are kept trimmed', () => {
    expect(createShellAllowList(['  git status ']).entries).toEqual(['git status']);
  });
});

describe('splitting a command line into words', () => {
  it.each([
    ['a b  c', ['a', 'b', 'c']],
    ["'a b' c", ['a b', 'c']],
    ['"a \\" b"', ['a " b']],
    ['"a \\x"', ['a \\x']],
    ['a\\ b', ['a b']],
    ["it'\"s'", ['it"s']],
    ["''", ['']],
    ['a#b # c', ['a#b']],
    ['a \\\nb', ['a', 'b']],
    ['\t a\t', ['a']],
  ])('%j → %j', (text, words) => {
    expect(splitShellWords(text)).toEqual(words);
  });

  it.each(["'open", '"open', 'trailing\\'])('%j is unbalanced', (text) => {
    expect(splitShellWords(text)).toBeNull();
  });
});
