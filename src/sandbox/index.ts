export { BwrapSandbox, DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './bwrap-sandbox.js';
export { botPaths, type BotPaths } from './protected-paths.js';
export { shellEnvironment } from './shell-environment.js';
export { decideShellSandbox, UNCONFINED_WARNING } from './shell-sandbox.js';
