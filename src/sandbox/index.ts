export { BwrapLauncher } from './bwrap-launcher.js';
export {
  BwrapSandbox,
  DEFAULT_SANDBOX_LIMITS,
  SANDBOX_CWD_FILE,
  type ProbeResult,
  type SandboxLimits,
} from './bwrap-sandbox.js';
export {
  botPaths,
  realOrResolved,
  storeFolderOf,
  workspaceProblem,
  type BotPaths,
  type ProtectedPath,
} from './protected-paths.js';
export { parseShellEnvNames, shellEnvironment } from './shell-environment.js';
export {
  decideShellSandbox,
  UNCONFINED_WARNING,
  type SandboxDecision,
  type SandboxMode,
  type ShellSandboxSettings,
} from './shell-sandbox.js';
export { systemView, type SystemView } from './system-mounts.js';
