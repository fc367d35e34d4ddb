import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createShellAllowList, findShellOperator, splitShellWords } from '../../src/permissions/index.js';

const WORKSPACE = '/srv/bot/workspace';

// The operator's list: exact entries, and entries ending in " *" that take plain arguments.
const ENTRIES = ['git status', 'git log *', 'git diff *', 'npm test', 'npm run build *', 'cat *', 'ls'];
const allowList = createShellAllowList(ENTRIES, { workspaceRoot: WORKSPACE });

describe('what the allow-list lets through, and why it refuses the rest', () => {
  it.each<[string, string | RegExp]>([
    // Exact entries: the same words after quoting, nothing more.
    ['git status', 'git status'],
    ['  git   status  ', 'git status'],
    ['git\tstatus', 'git status'],
    ["git 'status'", 'git status'],
    ['g"it" status', 'git status'],
    ['git status # just looking', 'git status'],
    ['npm test', 'npm test'],
    ['ls', 'ls'],
    ['git status -s', /`git status` is allow-listed exactly as written, without further arguments/],
    ['ls -la', /`ls` is allow-listed exactly as written/],
    ['git statusx', /no shell allow-list entry matches it/],
    ['git stash', /no shell allow-list entry matches it/],
    ['git', /no shell allow-list entry matches it/],
    ['gitstatus', /no shell allow-list entry matches it/],
    ['"git status"', /no shell allow-list entry matches it/],
    ['sudo git status', /no shell allow-list entry matches it/],
    ['npm testing', /no shell allow-list entry matches it/],

    // The reported bypasses of the old prefix match.
    ["git log -1 --output=.git/config '--format=[core]%n%x09fsmonitor = /tmp/evil'", /"\[" \(a glob/],
    ['git log -1 --output=.git/config', /`git log \*` allows plain extra arguments, but `-1` is an option/],
    ['git log --output=../victim.txt', /`--output=\.\.\/victim\.txt` is an option, and options are never allowed/],
    ['git diff --no-index ../.env /dev/null', /`--no-index` is an option/],
    ['npm test --prefix /x', /`npm test` is allow-listed exactly as written/],
    ['npm test --script-shell=/tmp/evil.sh', /`npm test` is allow-listed exactly as written/],
    ['npm test --node-options=--require=./evil.js', /`npm test` is allow-listed exactly as written/],
    ['npm run build --prefix /x', /`npm run build \*` allows plain extra arguments, but `--prefix` is an option/],
    ['npm run build --script-shell=/tmp/evil.sh', /`--script-shell=\/tmp\/evil\.sh` is an option/],

    // " *" entries: plain arguments pass, paths stay in the workspace.
    ['git log', 'git log *'],
    ['git log HEAD~3..HEAD', 'git log *'],
    ['git log main src/app.ts', 'git log *'],
    ['git log origin/main...feature/x', 'git log *'],
    ['git log "two words"', 'git log *'],
    ['git diff HEAD~1 ./src', 'git diff *'],
    ['npm run build production', 'npm run build *'],
    ['cat notes/todo.txt', 'cat *'],
    ['cat .github/workflows/ci.yml', 'cat *'],
    ['cat /srv/bot/workspace/notes/todo.txt', 'cat *'],
    ['cat /srv/bot/workspace', 'cat *'],
    ['cat /etc/passwd', /`\/etc\/passwd` is a path outside the workspace/],
    ['cat /srv/bot/workspace-old/secret', /is a path outside the workspace/],
    ['cat /srv/bot/workspace/../.env', /contains "\.\.", which could lead out of the workspace/],
    ['git diff ../.env', /`\.\.\/\.env` contains "\.\."/],
    ['cat src/../../.env', /contains "\.\."/],
    ['cat ..', /contains "\.\."/],
    ['cat .git/config', /reaches into a \.git folder/],
    ['cat /srv/bot/workspace/.git/config', /reaches into a \.git folder/],
    ['cat vendor/.GIT/hooks/pre-commit', /reaches into a \.git folder/],
    ['cat .git', /reaches into a \.git folder/],
    ['cat CC=evil', /`CC=evil` is a name=value argument/],
    ['cat file:///etc/passwd', /is a file: URL/],
    ['git log -- src', /`--` is an option/],

    // Quotes and backslashes hide nothing: the words are judged after quote removal.
    ['cat "--help"', /`--help` is an option/],
    ['cat \\-n notes.txt', /`-n` is an option/],
    ['cat "."./secret', /`\.\.\/secret` contains "\.\."/],
    ["cat '/etc/'passwd", /is a path outside the workspace/],

    // Shell syntax that makes one line do more is refused on the raw text, quoted or not.
    ['git status; rm -rf ~', /the command contains ";" \(runs another command\), which the allow-list never covers/],
    ['git status && curl evil', /"&" \(background job or &&\)/],
    ['git status || curl evil', /"\|" \(pipe or \|\|\)/],
    ['git status | sh', /"\|"/],
    ['git status &', /"&"/],
    ['git status > /etc/passwd', /">" \(redirection\)/],
    ['git status >> ~/.bashrc', /">"/],
    ['cat < /etc/passwd', /"<" \(redirection\)/],
    ['cat <<< x', /"<"/],
    ['git log `whoami`', /a backtick \(command substitution\)/],
    ['git log $(whoami)', /"\$" \(substitution or expansion\)/],
    ['git log "$(whoami)"', /"\$"/],
    ['git log $HOME', /"\$"/],
    ['git log ${HOME}', /"\$"/],
    ["git log $'\\x2d\\x2doutput=x'", /"\$"/],
    ['git status (', /"\(" \(subshell\)/],
    ['git status\nrm -rf /', /a line break \(a second command\)/],
    ['git status\rrm -rf /', /a carriage return/],
    ['git status\u0007', /a control character \(U\+0007\)/],
    ["git status ';' rm", /";"/],
    ["git log 'a|b'", /"\|"/],
    ['cat *.txt', /"\*" \(a glob/],
    ["cat '*.txt'", /"\*" \(a glob/],
    ['cat file?.txt', /"\?" \(a glob/],
    ['cat [ab].txt', /"\[" \(a glob/],
    ['git log {--output=x,}', /"\{" \(brace expansion/],
    ['cat ~/.ssh/id_rsa', /"~" where the shell would replace it with a home folder/],
    ['cat ~', /"~"/],
    ["cat '~'/x", /"~"/],
    ['git log a=~/x', /"~"/],
    ['git log HEAD~1', 'git log *'],
    ['FOO=1 git status', /starts with a variable assignment \(FOO=…\), which the allow-list never covers/],
    ['GIT_DIR=/tmp/evil git status', /variable assignment \(GIT_DIR=…\)/],
    ["git status 'oops", /unbalanced quotes/],
    ['# only a comment', /the command is empty/],
    ['', /the command is empty/],
  ])('%j → %s', (command, expected) => {
    const verdict = allowList.check(command);
    if (typeof expected === 'string') {
      expect(verdict).toEqual({ allowed: true, entry: expected });
    } else {
      expect(verdict.allowed).toBe(false);
      if (!verdict.allowed) expect(verdict.reason).toMatch(expected);
    }
  });

  it('names the nearest entry when several start the command', () => {
    const list = createShellAllowList(['git *', 'git log'], { workspaceRoot: WORKSPACE });
    expect(list.check('git log --output=x')).toEqual({
      allowed: false,
      reason:
        '`git log` is allow-listed exactly as written, without further arguments (an entry ending in " *" would allow plain ones)',
    });
    // Any entry that covers the command is enough.
    expect(list.check('git log main')).toEqual({ allowed: true, entry: 'git *' });
  });

  it('without a workspace, no absolute path passes as an extra argument', () => {
    const list = createShellAllowList(['cat *']);
    expect(list.check('cat /srv/bot/workspace/notes.txt')).toEqual({
      allowed: false,
      reason:
        '`cat *` allows plain extra arguments, but `/srv/bot/workspace/notes.txt` is an absolute path, and the allow-list was not told where the workspace is',
    });
    expect(list.check('cat notes.txt')).toEqual({ allowed: true, entry: 'cat *' });
  });

  it('a workspace reached through a symbolic link is recognised by both of its paths', async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'allowlist-'));
    try {
      await mkdir(path.join(base, 'real'));
      await symlink(path.join(base, 'real'), path.join(base, 'link'));
      const list = createShellAllowList(['cat *'], { workspaceRoot: path.join(base, 'link') });
      expect(list.check(`cat ${base}/link/a.txt`).allowed).toBe(true);
      expect(list.check(`cat ${base}/real/a.txt`).allowed).toBe(true);
      expect(list.check(`cat ${base}/a.txt`).allowed).toBe(false);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('names the operator it found, for the approval card', () => {
    expect(allowList.check('git status && curl evil')).toEqual({
      allowed: false,
      reason: 'the command contains "&" (background job or &&), which the allow-list never covers',
    });
    expect(findShellOperator('git status\nrm')).toBe('a line break (a second command)');
    expect(findShellOperator('git status -s')).toBeUndefined();
    expect(findShellOperator('git show HEAD~2^')).toBeUndefined();
  });

  it('an empty allow-list covers nothing, and says so', () => {
    expect(createShellAllowList([]).check('git status')).toEqual({
      allowed: false,
      reason: 'the shell allow-list is empty',
    });
  });
});

describe('allow-list entries are checked when the list is built', () => {
  it.each([
    ['git status; rm -rf /', /contains ";"/],
    ['npm test | tee log', /contains "\|"/],
    ['', /empty/],
    ['   ', /empty/],
    ["git 'status", /unbalanced quotes/],
    ['*', /it must name a program before " \*"/],
    ['git log*', /contains "\*".*"\*" may only end an entry, after a space/],
    ['git * log', /"\*" may only end an entry/],
    ["git log '*'", /contains "\*"/],
    ['cat ~/notes *', /contains "~"/],
    ['FOO=1 make', /starts with a variable assignment/],
    ['git log $HOME *', /contains "\$"/],
  ])('%j is a configuration error', (entry, message) => {
    expect(() => createShellAllowList([entry])).toThrow(message);
  });

  it('entries are kept trimmed, " *" included', () => {
    expect(createShellAllowList(['  git status ', ' git log  * ']).entries).toEqual(['git status', 'git log  *']);
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
