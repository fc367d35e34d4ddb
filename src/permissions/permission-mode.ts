// The session's permission mode: how much a tool call may do without asking a human.
//
// One idea: the mode is a closed vocabulary parsed at the edge. A typo in configuration
// ("readonly", "Auto ") must fail loudly at start-up, never fall back to some mode the
// user did not choose — least of all a more permissive one.

const PERMISSION_MODES = ['interactive', 'auto', 'read-only'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** Reads run; writes, shell commands and network calls ask unless a grant covers them. */
export const DEFAULT_PERMISSION_MODE: PermissionMode = 'interactive';

function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === 'string' && (PERMISSION_MODES as readonly string[]).includes(value);
}

/**
 * Parse a mode from configuration or a chat command. Surrounding whitespace and letter case
 * are forgiven (an env file line, a user typing "Auto"); anything else throws, naming the
 * modes that exist.
 */
export function parsePermissionMode(text: unknown): PermissionMode {
  const expected = `expected one of ${PERMISSION_MODES.join(', ')}`;
  if (typeof text !== 'string') throw new Error(`permission mode must be text (${expected}), got ${typeof text}`);
  const normalised = text.trim().toLowerCase();
  if (isPermissionMode(normalised)) return normalised;
  throw new Error(`unknown permission mode ${JSON.stringify(text)}: ${expected}`);
}
