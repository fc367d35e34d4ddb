// One MCP tool as an engine ToolDefinition: its provider-safe name, its arguments schema,
// the metadata that decides how carefully the engine treats it, and an execute that calls
// the server. The one idea: the server is the authority on its own tool. Its JSON Schema
// goes to the model verbatim and its server validates the arguments; its annotations pick
// the risk, and are trusted only as far as the person who put the server in mcp.json.
import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { defineTool, type ToolDefinition, type ToolMetadata } from '../engine/index.js';
import type { McpConnection } from './connection.js';
import { resultText } from './result-text.js';

/**
 * The text of an `isError` result; the engine records it as the tool's error.
 * @internal
 */
export class McpToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpToolError';
  }
}

export function mcpToolDefinition(
  connection: McpConnection,
  tool: Tool,
  engineName: string,
  options: { maxResultChars: number },
): ToolDefinition {
  return defineTool({
    name: engineName,
    description:
      tool.description ??
      tool.annotations?.title ??
      tool.title ??
      `${tool.name} (from the ${connection.server} MCP server)`,
    schema: argumentsSchemaOf(tool.inputSchema),
    metadata: toolMetadataOf(tool.annotations),
    async execute(args, { signal }) {
      signal.throwIfAborted();
      // The SDK's own word for this is "Not connected", which tells the model nothing.
      const unavailable = connection.unavailable;
      if (unavailable) throw new Error(unavailable);
      const result = await connection.callTool(tool.name, args, signal);
      const text = resultText(result, options.maxResultChars);
      if ('isError' in result && result.isError === true) {
        throw new McpToolError(`${connection.server}/${tool.name} reported an error: ${text}`);
      }
      return text;
    },
  });
}

/**
 * Annotations are hints (the spec's word). A read-only tool that is not explicitly
 * open-world runs without asking and may run beside other reads. Anything that says it
 * destroys, or reaches the open world, always asks: an open-world read can still carry
 * data out (a URL built from a secret). No hints at all is neither: medium risk, which
 * asks in interactive mode.
 * @internal
 */
export function toolMetadataOf(annotations: ToolAnnotations | undefined): ToolMetadata {
  const hints = annotations ?? {};
  if (hints.destructiveHint === true)
    return { risk: 'high', category: 'write', requiresApproval: true, idempotent: hints.idempotentHint === true };
  if (hints.openWorldHint === true)
    return { risk: 'high', category: 'external', requiresApproval: true, idempotent: hints.idempotentHint === true };
  if (hints.readOnlyHint === true) return { risk: 'low', category: 'read', idempotent: true };
  return { risk: 'medium', category: 'external', idempotent: hints.idempotentHint === true };
}

/**
 * Arguments pass through as any JSON object: the server validates them against its own
 * schema and answers a mismatch with an error the model can read. We do not validate with
 * `z.fromJSONSchema` (zod 4.6 has it): it throws on `not`, `if`/`then`, `dependentRequired`
 * and draft-07 `#/definitions` refs, which real servers emit, and where it works it is
 * stricter than the server (its `date-time` rejects times without an offset) and lossy
 * (it drops `nullable`), so the model would be shown a different contract than the server's.
 *
 * The model still sees the server's schema: zod merges `.meta()` into `z.toJSONSchema`'s
 * output, which is what the engine's `toolSchemaOf` sends. (A raw `parameters` field on
 * the engine's ToolDefinition would say this more plainly, without leaning on zod.)
 * @internal
 */
export function argumentsSchemaOf(inputSchema: Tool['inputSchema']): z.ZodType<Record<string, unknown>> {
  // `id` is the one key zod's `.meta()` treats as its own (it would move the schema into
  // `$defs` behind a `$ref`); in a JSON Schema it is a draft-04 base URI the model never needs.
  const { id: _id, ...jsonSchema } = inputSchema;
  return z.looseObject({}).meta(jsonSchema);
}
