// The tools' JSON Schemas, as the model receives them: every session builds its own tools and
// registry, but over the same argument schemas, so each schema is converted once for the
// process (src/engine/tools.ts), not once per session: 1,000 threads starting at once
// converted the same seven schemas 1,000 times, most of what a new session allocated.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolRegistry } from '../../src/engine/index.js';
import { createBuiltinTools, type BuiltinTools } from '../../src/tools/index.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function session(workspaceDir: string): Promise<BuiltinTools> {
  const builtin = createBuiltinTools({ workspaceDir, shell: { kind: 'host' } });
  cleanups.push(() => builtin.dispose());
  return builtin;
}

describe('tool schemas', () => {
  it('two sessions share one converted schema per tool, and each tool keeps its own', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const first = new ToolRegistry((await session(dir.path)).tools).schemas();
    const second = new ToolRegistry((await session(dir.path)).tools).schemas();
    expect(second.map((tool) => tool.name)).toEqual(first.map((tool) => tool.name));
    for (const [i, tool] of first.entries()) expect(second[i]!.parameters).toBe(tool.parameters);
    const readFile = first.find((tool) => tool.name === 'read_file')!;
    const writeFile = first.find((tool) => tool.name === 'write_file')!;
    expect(readFile.parameters).not.toBe(writeFile.parameters);
    expect(Object.keys(writeFile.parameters.properties as object)).toEqual(expect.arrayContaining(['path', 'content']));
    expect(readFile.parameters.$schema).toBeUndefined();
  });

  it('a tool with its own name and description over a shared schema keeps its name and description', () => {
    const schema = z.object({ query: z.string().describe('what to look for') });
    const make = (name: string) =>
      defineTool({ name, description: `${name} things`, schema, metadata: { risk: 'low' }, execute: async () => 'ok' });
    const [a, b] = new ToolRegistry([make('notes__find'), make('wiki__find')]).schemas();
    expect([a!.name, a!.description, b!.name, b!.description]).toEqual([
      'notes__find',
      'notes__find things',
      'wiki__find',
      'wiki__find things',
    ]);
    expect(a!.parameters).toBe(b!.parameters);
    expect(a!.parameters).toMatchObject({
      type: 'object',
      properties: { query: { type: 'string', description: 'what to look for' } },
    });
  });
});
