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
// Driver keys named by attributes — `filter.<driver>.clean/smudge/process` (`git status` and
// `git diff` run clean filters: a filter planted by an approved command in one thread ran at
// another thread's allow-listed `git status`), `diff.<driver>.command` and `.textconv`,
// `merge.<driver>.driver` — cannot be listed ahead: `.gitattributes` picks their names.
// Ignoring attributes would not help (attr.tree is git 2.42+, and the same hostile `.git` can
// hold `info/attributes`). So the command's bash gets a `git` function (exported through the
// environment, as bash imports `BASH_FUNC_git%%`, so every bash the command starts has it)
// that asks git which such keys the repository's configuration defines (`git config` runs
// no program) and adds an empty value for each after the list below. A filter with no
// command passes content through unchanged (and `required` is set false, so nothing fails);
// a diff or merge driver with an empty command fails instead of running ("cannot run"),
// which is safe and says why. It covers `git` as a bash command, which is what an
// allow-list entry starts with; a program that runs git itself (`make`) is not an entry to
// allow-list on an untrusted repository. With WORKSPACE_SCOPE=thread another conversation
// cannot write this repository at all; in channel or shared scope it is this function that
// keeps one conversation's config from running in another's allow-listed git.
//
// NOT covered, because git offers no setting that switches them off:
// - `diff.external`: an empty value does not mean "none", it makes every diff fail ("external
//   diff died", git 2.39). Only `--no-ext-diff` disables it.
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
 * bash's `git` for an allow-listed command (see the header): the repository's driver keys,
 * each overridden after the HARMLESS_CONFIG entries already counted in GIT_CONFIG_COUNT.
 * `local -x`: exported to that one git, gone when the function returns.
 */
const GIT_FUNCTION = `() {
  local count=\${GIT_CONFIG_COUNT:-0} key
  while IFS= read -r -d '' key; do
    case "\${key,,}" in
      filter.*.clean|filter.*.smudge|filter.*.process|diff.*.command|diff.*.textconv|merge.*.driver)
        local -x "GIT_CONFIG_KEY_$count=$key" "GIT_CONFIG_VALUE_$count="; count=$((count + 1)) ;;
      filter.*.required)
        local -x "GIT_CONFIG_KEY_$count=$key" "GIT_CONFIG_VALUE_$count=false"; count=$((count + 1)) ;;
    esac
  done < <(command git config -z --name-only --get-regexp '^(filter|diff|merge)[.]' 2>/dev/null)
  GIT_CONFIG_COUNT=$count command git "$@"
}`;

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
    'BASH_FUNC_git%%': GIT_FUNCTION,
  };
  HARMLESS_CONFIG.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  const ceilings = [...new Set(roots.map((root) => path.dirname(root)))];
  if (ceilings.length > 0) env.GIT_CEILING_DIRECTORIES = ceilings.join(':');
  return env;
}
