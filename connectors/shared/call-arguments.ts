// The full text of a tool call's arguments, as an approver reads it: for the built-in tools
// the fields that matter, each under its name (run_shell's command; write_file's file and
// content; edit_file's file, the text replaced and its replacement; fetch_url's URL; the
// folder a directory request asks for), and for any other tool (MCP tools) its arguments as
// JSON with sorted keys.
//
// The idea to hold: nothing here is cut, reflowed or unescaped inside a value. What a part
// holds is exactly what the tool receives, so an approval covers what was seen. How much of
// it fits where (a card, a modal, a Discord message) is each platform's business; how it is
// shown to an approver (hidden characters, blank runs, misleading words) is approval-view.ts's.

/** One named piece of a call's arguments, in full. */
export interface ArgumentPart {
  /** What the piece is, for a person: "Command", "File", "Content", "Arguments". */
  label: string;
  /** The exact text, never cut. */
  text: string;
}

/** A call and the full text of its arguments: what a "show all" view needs. */
export interface CallText {
  name: string;
  parts: ArgumentPart[];
}

/** The fields worth naming, per built-in tool, in the order a person reads them. */
const NAMED_FIELDS: Readonly<Record<string, readonly (readonly [field: string, label: string])[]>> = {
  run_shell: [['command', 'Command']],
  write_file: [
    ['path', 'File'],
    ['content', 'Content'],
  ],
  edit_file: [
    ['path', 'File'],
    ['old', 'Replace'],
    ['new', 'With'],
  ],
  fetch_url: [['url', 'URL']],
  // The engine shows the folder's real path and what becomes writable (src/engine/interactive.ts).
  request_directory: [
    ['path', 'Folder'],
    ['access', 'Access'],
    ['reason', 'Reason'],
  ],
  propose_plan: [['plan', 'Plan']],
};

/**
 * Every character of `args` for tool `tool`, in a stable readable form: the tool's named string
 * fields as they are, then anything else as JSON ("Other arguments"); for a tool with no named
 * fields (an MCP tool), one JSON part. Arguments the model mangled (a string, not an object)
 * are shown as they came.
 */
export function callArguments(tool: string, args: unknown): ArgumentPart[] {
  if (typeof args === 'string') return [{ label: 'Arguments, as the model sent them', text: args }];
  const fields = Object.hasOwn(NAMED_FIELDS, tool) ? NAMED_FIELDS[tool] : undefined;
  if (!fields || !isRecord(args)) return [{ label: 'Arguments', text: stableJson(args ?? {}) }];
  const parts: ArgumentPart[] = [];
  const named = new Set<string>();
  for (const [field, label] of fields) {
    const value = Object.hasOwn(args, field) ? args[field] : undefined;
    if (typeof value !== 'string') continue;
    parts.push({ label, text: value });
    named.add(field);
  }
  const rest = Object.entries(args).filter(([field]) => !named.has(field));
  if (rest.length > 0) parts.push({ label: 'Other arguments', text: stableJson(Object.fromEntries(rest)) });
  return parts;
}

/** How many characters (UTF-16 code units) the parts hold together. */
export function argumentsLength(parts: readonly ArgumentPart[]): number {
  return parts.reduce((sum, part) => sum + part.text.length, 0);
}

/**
 * JSON with object keys sorted at every depth and two-space indentation: the same arguments
 * always read the same, whatever order the model wrote them in. A value JSON cannot hold is
 * shown as text rather than thrown.
 * @internal
 */
export function stableJson(value: unknown): string {
  try {
    return JSON.stringify(sortKeys(value), null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  // fromEntries defines own properties, so a key such as "__proto__" stays a key.
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
