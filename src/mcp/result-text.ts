// What the model reads back from an MCP tool call. A result is a list of content blocks;
// the model gets text. The one idea: everything that enters the history is replayed on
// every later model call of the session, so bytes the model cannot use (base64 images,
// audio, binary resources) are described in a line, never dumped, and text past a cap is
// cut with a note saying how much was cut.
import type { CallToolResult, CompatibilityCallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { thousands } from '../text/thousands.js';

/**
 * About 5k tokens at four characters a token, like the built-in tools' 20,000: under the
 * engine's cap on every result as sent (24,000, result-cap.ts), so an MCP result is cut once,
 * here, where the cut can keep whole content blocks and say what was cut.
 */
export const DEFAULT_MAX_RESULT_CHARS = 20_000;

export function resultText(
  result: CallToolResult | CompatibilityCallToolResult,
  maxChars = DEFAULT_MAX_RESULT_CHARS,
): string {
  return capText(fullText(result), maxChars);
}

function fullText(result: CallToolResult | CompatibilityCallToolResult): string {
  // Servers on protocol 2024-10-07 and older answer `{ toolResult }` instead of content.
  if (!('content' in result)) return JSON.stringify(result.toolResult) ?? 'null';
  const content = result.content as ContentBlock[];
  const hasText = content.some(
    (block) => block.type === 'text' || (block.type === 'resource' && 'text' in block.resource),
  );
  // The spec asks a tool with structured output to repeat it as text; not all do.
  if (!hasText && result.structuredContent !== undefined) {
    return [...content.map(describeBlock), JSON.stringify(result.structuredContent)].join('\n');
  }
  if (content.length === 0) return '(the tool returned no content)';
  return content.map(describeBlock).join('\n');
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${block.mimeType}, ${sizeOfBase64(block.data)}; not shown to the model]`;
    case 'audio':
      return `[audio: ${block.mimeType}, ${sizeOfBase64(block.data)}; not shown to the model]`;
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? `: ${block.description}` : ''}]`;
    case 'resource': {
      const { resource } = block;
      const kind = resource.mimeType ? ` (${resource.mimeType})` : '';
      // An embedded text resource is the answer itself (a file's contents): keep its text.
      if ('text' in resource) return `[resource <${resource.uri}>${kind}]\n${resource.text}`;
      return `[resource <${resource.uri}>${kind}: ${sizeOfBase64(resource.blob)} of binary data; not shown to the model]`;
    }
    default: {
      const unknown: never = block;
      return `[${(unknown as { type: string }).type} content; not shown to the model]`;
    }
  }
}

function sizeOfBase64(data: string): string {
  const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** @internal */
export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let kept = text.slice(0, maxChars);
  // Never end on half a surrogate pair: providers reject lone surrogates in JSON.
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  const cut = text.length - kept.length;
  return `${kept}\n[… ${thousands(cut)} of ${thousands(text.length)} characters cut: MCP tool results are capped at ${thousands(maxChars)}]`;
}
