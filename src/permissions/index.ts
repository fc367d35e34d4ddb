// The permissions layer's public surface: modes, risk classes, the shell allow-list and the
// policy that combines them for the engine.
export * from './permission-mode.js';
export * from './policy.js';
export * from './risk-class.js';
export * from './shell-allowlist.js';
