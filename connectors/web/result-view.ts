// A tool's result as the playground's card shows it: readable, not a line of raw JSON. The
// card gets the engine's preview (the start of what the model got, at most ~300 characters,
// its newlines written `\n`: src/engine/tool-calls.ts previewOf); the whole result, as the
// model got it, is behind the card's "Full result" toggle, read from the transcript when opened
// (web-inbound.ts toolResult), so a thread's stored page does not carry every result twice.
//
// Readable means: a JSON object as `key: value` lines (a multi-line string under its key, as
// the lines it holds: a command's output reads as it printed), an array as one line per item,
// anything else as text with its line breaks. A preview cut mid-JSON is closed where it was
// cut (strings, arrays, objects; a member cut in half is left out) and ends with "…".

/** The card's readable form of a result preview. */
export function readableResult(preview: string): string {
  const cut = preview.endsWith('…');
  const body = cut ? preview.slice(0, -1) : preview;
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const value = parseJson(trimmed) ?? (cut ? closedJson(trimmed) : undefined);
    if (value !== undefined && typeof value === 'object' && value !== null)
      return `${describe(value)}${cut ? '\n…' : ''}`;
  }
  // Plain text (read_file's content, an MCP tool's words): its lines back.
  return `${body.replace(/\\n/g, '\n')}${cut ? '…' : ''}`;
}

/** The whole result for the "Full result" toggle: JSON indented, anything else as it is. */
export function fullResultText(content: string): { text: string; json: boolean } {
  const value = parseJson(content.trim());
  return value === undefined ? { text: content, json: false } : { text: JSON.stringify(value, null, 2), json: true };
}

function describe(value: object): string {
  if (Array.isArray(value)) return value.map((item) => `- ${inline(item)}`).join('\n') || '(empty list)';
  const lines: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' && item.includes('\n')) lines.push(`${key}:\n${item.replace(/\n$/, '')}`);
    else if (item !== null && typeof item === 'object') lines.push(`${key}: ${JSON.stringify(item, null, 2)}`);
    else lines.push(`${key}: ${inline(item)}`);
  }
  return lines.join('\n') || '(empty)';
}

function inline(item: unknown): string {
  if (typeof item === 'string') return item;
  return JSON.stringify(item) ?? String(item);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * JSON cut short, closed: an open string ended (a half escape dropped), the member cut in half
 * left out when it cannot stand, every open array and object closed. Undefined when even that
 * does not parse.
 */
function closedJson(text: string): unknown {
  const open: { char: '{' | '['; at: number; lastComma: number }[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{' || char === '[') open.push({ char, at: i, lastComma: -1 });
    else if (char === '}' || char === ']') open.pop();
    else if (char === ',' && open.length > 0) open[open.length - 1]!.lastComma = i;
  }
  let head = text;
  if (inString) head = `${head.replace(/\\u[0-9a-fA-F]{0,3}$/, '').replace(/(?<!\\)((?:\\\\)*)\\$/, '$1')}"`;
  const closers = open
    .map((entry) => (entry.char === '{' ? '}' : ']'))
    .reverse()
    .join('');
  const innermost = open.at(-1);
  head = head.replace(/,\s*$/, '');
  const attempts = [`${head}${closers}`, `${head.replace(/\s*:\s*$/, ': ""')}${closers}`];
  // Without the member cut in half: back to the last comma of the innermost open container, or to its opening.
  if (innermost)
    attempts.push(`${text.slice(0, innermost.lastComma >= 0 ? innermost.lastComma : innermost.at + 1)}${closers}`);
  for (const attempt of attempts) {
    const value = parseJson(attempt);
    if (value !== undefined) return value;
  }
  return undefined;
}
