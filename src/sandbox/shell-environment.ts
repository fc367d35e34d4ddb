// The environment a shell command sees: built from an allow-list, never copied from the
// bot's own. The bot's environment holds its tokens, and a filter on names cannot catch a
// password inside a value (`STORE_URL=postgresql://bot:hunter2@…`), so nothing passes unless
// it is named here or by the operator in SHELL_ENV.
//
// The same environment starts bwrap itself: inside the sandbox's PID namespace, PID 1 is
// bwrap's own child, and `/proc/1/environ` shows whatever bwrap was started with.

/** Copied from the bot's environment when set: locale, time zone, and where programs are. */
const ALWAYS_PASSED = ['PATH', 'LANG', 'LANGUAGE', 'TZ'] as const;

/** Pagers and prompts would wait for a terminal that is not there. */
const NON_INTERACTIVE = { TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' } as const;

const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ShellEnvironmentOptions {
  /** HOME for commands: the workspace, so dotfiles a tool writes stay where the shell may write. */
  home: string;
  /** Extra variable names to pass through (SHELL_ENV). */
  pass?: readonly string[];
  /** Folders the sandbox hides: PATH entries inside them are dropped (they would not work, and name the bot's folders). */
  hide?: readonly string[];
}

export function shellEnvironment(base: NodeJS.ProcessEnv, options: ShellEnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = {};
  const copy = (name: string): void => {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  };
  for (const name of ALWAYS_PASSED) copy(name);
  for (const name of Object.keys(base)) if (name.startsWith('LC_')) copy(name);
  for (const name of options.pass ?? []) copy(name);
  if (env.PATH !== undefined && options.hide?.length) {
    const hidden = options.hide;
    env.PATH = env.PATH.split(':')
      .filter((entry) => entry !== '' && !hidden.some((folder) => entry === folder || entry.startsWith(`${folder}/`)))
      .join(':');
  }
  if (!env.PATH) env.PATH = FALLBACK_PATH;
  return { ...env, ...NON_INTERACTIVE, HOME: options.home };
}

/**
 * Parse SHELL_ENV (comma-separated variable names). Names of the bot's own secrets are
 * refused: handing one to commands is exactly what the allow-list exists to prevent.
 */
export function parseShellEnvNames(raw: string | undefined, secretNames: ReadonlySet<string>): string[] {
  const names = (raw ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const problems: string[] = [];
  for (const name of names) {
    if (!VARIABLE_NAME.test(name)) problems.push(`"${name}" is not a variable name`);
    else if (secretNames.has(name))
      problems.push(`${name} is one of the bot's own secrets and is never handed to commands`);
  }
  if (problems.length > 0) throw new Error(`SHELL_ENV: ${problems.join('; ')}`);
  return [...new Set(names)];
}
