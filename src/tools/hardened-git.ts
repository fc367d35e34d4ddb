// The environment a command gets when it runs without a human's approval because the shell
// allow-list matched it (ToolContext.approval.via === 'allowlist').
//
// One idea: the repository is not trusted. A `.git/config` in the workspace can name
// programs git runs on its own — `core.fsmonitor` runs on every `git status`, hooks on
// commits and ref updates, helpers on fetches — so an allow-listed `git status` could run
// whatever the last hostile archive or clone left there. Configuration passed through the
// environment (GIT_CONFIG_COUNT) outranks the repository's, so every key below whose name
// is known is set to a harmless value; the system and "global" files are skipped too (the
// shell's HOME is the workspace, so "global" is as writable as the repository).
//
// NOT covered, because git offers no setting that switches them off:
// - `diff.external`: an empty value does not mean "none", it makes every diff fail ("external
//   diff died", git 2.39). Only `--no-ext-diff` disables it.
// - Driver keys named by attributes: `diff.<driver>.command` and `diff.<driver>.textconv`
//   (`git diff` runs both, `git log -p` and `git show` run textconv, by default),
//   `filter.<driver>.clean/smudge/process` (`git status` and `git diff` run clean filters),
//   `merge.<driver>.driver`. Their names are chosen by `.gitattributes`, so they cannot be
//   listed here. `--no-ext-diff --no-textconv` disable the diff ones; nothing disables filters.
//   Ignoring the worktree's attributes (attr.tree, git 2.42+) would not help: the same
//   hostile `.git` can hold `info/attributes`, and it would break LFS and eol handling. Nor
//   is the allow-list refused where a `.gitattributes` exists: attributes alone run nothing
//   (the driver must be defined in a config), and the policy cannot know which repository a
//   command will meet (a batch is judged before an earlier call's `cd` runs).
// - Other per-name keys: `alias.*` (an entry naming an alias runs what the repository says),
//   `submodule.<name>.update=!cmd`, `pager.<cmd>` (only with a terminal, which commands never
//   have), `man.*`/`web.browser` (`git help`), `difftool.*`/`mergetool.*`.
// All of them need a hostile `.git/config` first, which an allow-listed command's arguments
// can no longer reach (options, `.git` paths and `..` are refused: shell-allowlist.ts).
import path from 'node:path';

/**
 * Keys that run programs (or reach them), and the value that makes each harmless. The
 * comment says what the key would otherwise run.
 */
const HARMLESS_CONFIG: readonly (readonly [key: string, value: string])[] = [
  ['core.fsmonitor', 'false'], // a hook program on every index read: `git status`
  ['core.hooksPath', '/dev/null'], // .git/hooks: pre-commit, post-checkout, reference-transaction…
  ['core.pager', 'cat'],
  ['core.editor', ':'], // ":" is git's own "no editor": the message stays as it is
  ['sequence.editor', ':'],
  ['core.askPass', ''], // empty: no program (not even SSH_ASKPASS); prompts are off too
  ['credential.helper', ''], // empty resets the list, URL-specific helpers included
  ['core.sshCommand', 'ssh'],
  ['core.alternateRefsCommand', 'true'], // fetch negotiation with alternates
  ['core.attributesFile', '/dev/null'],
  ['gpg.program', 'gpg'], // also gpg.openpgp.program: the two are one setting
  ['gpg.x509.program', 'gpgsm'],
  ['gpg.ssh.program', 'ssh-keygen'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['log.showSignature', 'false'], // verification runs gpg.program on every `git log`
  ['interactive.diffFilter', 'cat'], // `git add -p`
  ['protocol.ext.allow', 'never'], // `ext::` URLs are shell commands
  // Local and file:// remotes run `remote.<name>.uploadpack` (a per-remote key) on this
  // machine; refusing the transport is the only way to stop it.
  ['protocol.file.allow', 'never'],
  // A bare repository hidden in a folder (an unpacked archive) brings its own config.
  ['safe.bareRepository', 'explicit'],
];

/**
 * The variables to add to an allow-listed command's environment. `roots` are the shell's
 * writable folders (workspace first): git stops looking for a repository at their parents,
 * so an allow-listed `git` never reads one around the workspace (the bot's own checkout).
 */
export function hardenedGitEnvironment(roots: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    // Set, even empty, it replaces core.gitProxy (a program for git:// URLs) entirely.
    GIT_PROXY_COMMAND: '',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_CONFIG_COUNT: String(HARMLESS_CONFIG.length),
  };
  HARMLESS_CONFIG.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  const ceilings = [...new Set(roots.map((root) => path.dirname(root)))];
  if (ceilings.length > 0) env.GIT_CEILING_DIRECTORIES = ceilings.join(':');
  return env;
}
