// What is settled before anything is opened, each failing closed with its reason: who may use
// the bot (ALLOWED_USERS, ADMINS), where commands run (the shell and its sandbox), and what
// tools may do (PERMISSION_MODE, SHELL_ALLOWLIST, GRANT_SCOPE, GRANT_ROOTS).
import type { Config } from '../config.js';
import type { EngineLogger } from '../engine/index.js';
import { createPermissionPolicy, type ConfiguredPermissionPolicy } from '../permissions/index.js';
import { prepareShell, type ShellStartup } from '../sandbox/shell-startup.js';
import { AccessPolicy, parseAccessConfig } from '../sessions/access-policy.js';
import { parseGrantRoots } from '../tools/index.js';

/** The settings once MODEL is known to be set: the start refuses to go on without it. */
export type CoreConfig = Config & { MODEL: string };

export function namesModel(config: Config): config is CoreConfig {
  return Boolean(config.MODEL);
}

/** The environment's permission settings, as each session's policy and the profiles read them. */
export interface PolicySettings {
  mode: Config['PERMISSION_MODE'];
  shellAllowList: string[];
  grantScope: Config['GRANT_SCOPE'];
}

export interface CorePolicies {
  access: AccessPolicy;
  /** Where commands run; opening the store may change a folder, so storage.ts checks it again. */
  shell: ShellStartup;
  policySettings: PolicySettings;
  /** The environment's own policy, for the workspace root. */
  policy: ConfiguredPermissionPolicy;
  grantRoots: ReturnType<typeof parseGrantRoots>;
}

export async function settlePolicies(
  config: Config,
  options: { bwrapPath?: string | undefined; logger: EngineLogger },
): Promise<CorePolicies> {
  // Fails closed: a malformed ALLOWED_USERS or ADMINS stops the start, with the reason.
  const access = new AccessPolicy(parseAccessConfig(config.ALLOWED_USERS, config.ADMINS));
  // A workspace that holds the bot's own files, a bad SHELL_ENV, or SHELL_SANDBOX=bwrap where
  // bwrap cannot run stops the start with the reason.
  const shell = await prepareShell(config, { bwrapPath: options.bwrapPath, logger: options.logger });
  const policySettings: PolicySettings = {
    mode: config.PERMISSION_MODE,
    shellAllowList: (config.SHELL_ALLOWLIST ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
    grantScope: config.GRANT_SCOPE,
  };
  // Checks the allow-list's entries at start; each session has its own, for its own folder.
  const policy = createPermissionPolicy({ ...policySettings, workspaceDir: shell.workspaceRoot });
  // A GRANT_ROOTS entry that is not an existing project folder stops the start, with the reason.
  const grantRoots = parseGrantRoots(config.GRANT_ROOTS);
  return { access, shell, policySettings, policy, grantRoots };
}
