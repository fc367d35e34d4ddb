// Engine tool names for MCP tools: `<server>__<tool>`, made safe for every provider.
// OpenAI and Anthropic both reject a tool whose name does not match
// `^[a-zA-Z0-9_-]{1,64}$`, and one bad name fails the whole model call, not just that
// tool. MCP tool names may hold dots, slashes or spaces and run to 128 characters, so
// names are sanitised and cut; the one idea to hold is that a name that had to be changed
// gets a short hash of the original, so two tools never end up with the same name.
import { createHash } from 'node:crypto';

/** @internal */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_TOOL_NAME_LENGTH = 64;
const SEPARATOR = '__';
const HASH_LENGTH = 6;

/**
 * The engine name for `tool` on `server`, unique within `taken` (which it does not modify).
 * `server` is already restricted by the config to 1-32 safe characters.
 */
export function engineToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const safe = tool.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
  const plain = `${server}${SEPARATOR}${safe}`;
  if (safe === tool && plain.length <= MAX_TOOL_NAME_LENGTH && !taken.has(plain)) return plain;

  // Changed, too long, or clashing (e.g. `a.b` and `a_b`, or server `x__y` tool `z` and
  // server `x` tool `y__z`): keep as much of the name as fits and add a hash of the
  // original so the result stays stable across restarts (grants remember tool names).
  const room = MAX_TOOL_NAME_LENGTH - server.length - SEPARATOR.length - 1 - HASH_LENGTH;
  for (let salt = 0; ; salt++) {
    const hash = createHash('sha256').update(`${server}\0${tool}\0${salt}`).digest('hex').slice(0, HASH_LENGTH);
    const candidate = `${server}${SEPARATOR}${safe.slice(0, room)}_${hash}`;
    if (!taken.has(candidate)) return candidate;
  }
}
