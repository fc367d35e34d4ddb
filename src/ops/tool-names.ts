// The name a tool call is reported under on the operations side (metrics labels, span names
// and attributes): its own when the bot registered a tool by that name (a built-in, an
// interactive tool, an MCP server's), else `unknown`.
//
// Why: the name of a tool call is chosen by the model. A name the bot never offered can be any
// text at all (a sentence, a person's address, something secret the model read), and what
// /metrics and the exported traces carry leaves the bot. The audit trail, which stays in the
// store and is read by admins, keeps the name as called.
const UNKNOWN_TOOL = 'unknown';

/** Whether the bot registered a tool by this name. */
export type KnownTools = (name: string) => boolean;

/** Nothing is known: every name is reported as `unknown` (a sink built without the registry). */
export const NO_KNOWN_TOOLS: KnownTools = () => false;

export function reportedToolName(name: string, known: KnownTools): string {
  return known(name) ? name : UNKNOWN_TOOL;
}
