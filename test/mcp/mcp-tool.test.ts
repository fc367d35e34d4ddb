import { describe, expect, it } from 'vitest';
import {
  isParallelSafe,
  riskBasedPolicy,
  SessionGrants,
  toolSchemaOf,
  type ToolDefinition,
} from '../../src/engine/index.js';
import { argumentsSchemaOf, toolMetadataOf } from '../../src/mcp/mcp-tool.js';
import { engineToolName, TOOL_NAME_PATTERN } from '../../src/mcp/tool-names.js';
import { ODD_SCHEMA } from './fixtures/catalog-server.js';

function asTool(name: string, annotations: Parameters<typeof toolMetadataOf>[0]): ToolDefinition {
  return {
    name,
    description: name,
    schema: argumentsSchemaOf({ type: 'object' }),
    metadata: toolMetadataOf(annotations),
    execute: async () => null,
  };
}

async function decisionFor(annotations: Parameters<typeof toolMetadataOf>[0]): Promise<string> {
  const tool = asTool('t', annotations);
  const verdict = await riskBasedPolicy.evaluate({
    tool,
    arguments: {},
    command: undefined,
    grants: new SessionGrants(),
    requesters: [],
  });
  return verdict.decision;
}

describe('annotations decide how carefully the engine treats an MCP tool', () => {
  it('a read-only tool runs without asking and may run beside other reads', async () => {
    expect(toolMetadataOf({ readOnlyHint: true })).toEqual({ risk: 'low', category: 'read', idempotent: true });
    expect(toolMetadataOf({ readOnlyHint: true, openWorldHint: false })).toEqual({
      risk: 'low',
      category: 'read',
      idempotent: true,
    });
    expect(await decisionFor({ readOnlyHint: true })).toBe('allow');
    expect(isParallelSafe(asTool('t', { readOnlyHint: true }))).toBe(true);
  });

  it('a destructive tool always asks', async () => {
    expect(toolMetadataOf({ destructiveHint: true })).toEqual({
      risk: 'high',
      category: 'write',
      requiresApproval: true,
      idempotent: false,
    });
    expect(toolMetadataOf({ destructiveHint: true, idempotentHint: true })).toMatchObject({ idempotent: true });
    expect(await decisionFor({ destructiveHint: true })).toBe('needs_user');
  });

  it('an open-world tool always asks, even one that says it only reads', async () => {
    expect(toolMetadataOf({ openWorldHint: true })).toEqual({
      risk: 'high',
      category: 'external',
      requiresApproval: true,
      idempotent: false,
    });
    expect(toolMetadataOf({ readOnlyHint: true, openWorldHint: true })).toMatchObject({
      risk: 'high',
      requiresApproval: true,
    });
    expect(await decisionFor({ readOnlyHint: true, openWorldHint: true })).toBe('needs_user');
  });

  it('a tool without hints is medium risk: it asks, and it runs alone', async () => {
    expect(toolMetadataOf(undefined)).toEqual({ risk: 'medium', category: 'external', idempotent: false });
    expect(toolMetadataOf({ title: 'Save' })).toEqual({ risk: 'medium', category: 'external', idempotent: false });
    expect(await decisionFor(undefined)).toBe('needs_user');
    expect(isParallelSafe(asTool('t', undefined))).toBe(false);
  });
});

describe("the model sees the server's own JSON Schema", () => {
  it('keywords zod cannot model (if/then, not, #/definitions refs, nullable) reach the provider unchanged', () => {
    const { parameters } = toolSchemaOf({
      name: 'catalog__files_list',
      description: 'List files',
      schema: argumentsSchemaOf(ODD_SCHEMA),
    });
    const { $schema: _draft, ...expected } = ODD_SCHEMA;
    expect(parameters).toEqual(expected);
  });

  it('a schema that says nothing about extra properties gets the JSON Schema default spelled out', () => {
    const inputSchema = {
      type: 'object' as const,
      properties: { a: { type: 'number', description: 'first' } },
      required: ['a'],
    };
    expect(toolSchemaOf({ name: 't', description: 't', schema: argumentsSchemaOf(inputSchema) }).parameters).toEqual({
      ...inputSchema,
      additionalProperties: {},
    });
  });

  it('a draft-04 `id` is dropped rather than turning the schema into a $ref', () => {
    const { parameters } = toolSchemaOf({
      name: 't',
      description: 't',
      schema: argumentsSchemaOf({ type: 'object', id: 'urn:x', properties: {} }),
    });
    expect(parameters).toEqual({ type: 'object', properties: {}, additionalProperties: {} });
  });

  it('arguments are left for the server to validate: any JSON object passes through untouched', () => {
    const schema = argumentsSchemaOf(ODD_SCHEMA);
    expect(schema.parse({ kind: 'file', extra: [1, 2] })).toEqual({ kind: 'file', extra: [1, 2] });
    expect(schema.safeParse('file').success).toBe(false);
  });
});

describe('engine tool names', () => {
  it('are <server>__<tool> when the tool name is already safe', () => {
    expect(engineToolName('notes', 'delete_note', new Set())).toBe('notes__delete_note');
  });

  it('sanitise characters providers reject, and a hash keeps sanitised names apart', () => {
    const taken = new Set<string>(['catalog__files_list']);
    const dotted = engineToolName('catalog', 'files.list', taken);
    expect(dotted).toMatch(/^catalog__files_list_[0-9a-f]{6}$/);
    // Stable: the same tool gets the same name on every start (grants remember names).
    expect(engineToolName('catalog', 'files.list', taken)).toBe(dotted);
  });

  it('cut long names to 64 characters', () => {
    const name = engineToolName('a_long_server_name_for_testing', `report_${'x'.repeat(120)}`, new Set());
    expect(name).toHaveLength(64);
    expect(name).toMatch(TOOL_NAME_PATTERN);
    expect(name.startsWith('a_long_server_name_for_testing__report_xxx')).toBe(true);
  });

  it('never hand out a name twice, even when server and tool names split the same way', () => {
    const taken = new Set<string>([engineToolName('x__y', 'z', new Set())]);
    const second = engineToolName('x', 'y__z', taken);
    expect(taken.has(second)).toBe(false);
    expect(second).toMatch(TOOL_NAME_PATTERN);
  });

  it('an empty or all-symbol tool name still yields a valid name', () => {
    expect(engineToolName('s', '', new Set())).toMatch(TOOL_NAME_PATTERN);
    expect(engineToolName('s', '...', new Set())).toMatch(TOOL_NAME_PATTERN);
  });
});
