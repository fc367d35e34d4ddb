// The engine's last-line cap: whatever a tool returns, the tool message the model receives
// is within the cap, says how much was cut, and is valid JSON when it was JSON.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type ToolResult } from '../../src/engine/index.js';
import { capResultContent, DEFAULT_MAX_RESULT_CHARS } from '../../src/engine/result-cap.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, lowRisk } from '../support/engine-kit.js';

function returning(name: string, result: ToolResult) {
  return defineTool({ name, description: name, schema: z.object({}), metadata: lowRisk, execute: async () => result });
}

/** What the model was sent as the answer to the one tool call of the first round. */
async function sentContent(result: ToolResult, options: { maxResultChars?: number } = {}): Promise<string> {
  const { engine, provider } = engineWith([callTools(call('big')), say('read it')], {
    tools: [returning('big', result)],
    limits: options,
  });
  await collect(engine.run('go'));
  const sent = provider.requests[1]!.messages.find((message) => message.role === 'tool');
  const stored = engine.messages.find((message) => message.role === 'tool');
  expect(stored?.content).toBe(sent?.content); // the history holds what the model got
  return String(sent?.content);
}

function cutCount(text: string): number {
  const match =
    /\[… ([\d,]+) characters cut from the middle: tool results are capped at ([\d,]+) characters as sent …\]/.exec(
      text,
    );
  if (!match) throw new Error(`no cut note in ${text.slice(0, 200)}…`);
  return Number(match[1]!.replaceAll(',', ''));
}

describe('a tool result over the cap, as the model receives it', () => {
  it('a 200,000-character string loses its middle, keeps both ends, and says how much was cut', async () => {
    const text = `FIRST LINE\n${'x'.repeat(200_000 - 22)}\nLAST LINE\n`;
    const content = await sentContent(text);
    expect(content.length).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_CHARS);
    expect(content.startsWith('FIRST LINE\n')).toBe(true);
    expect(content.endsWith('\nLAST LINE\n')).toBe(true);
    // Everything not shown is accounted for.
    const note = /\n\[… [^\]]+\]\n/.exec(content)![0];
    expect(cutCount(content) + content.length - note.length).toBe(200_000);
  });

  it('an object with a huge nested string field stays valid JSON: that field is cut, with the note inside it', async () => {
    const log = 'a line of the log, "quoted" \\ and\ttabbed\n'.repeat(10_000);
    const content = await sentContent({ status: 'done', details: { steps: ['fetch', 'build'], log }, exitCode: 0 });
    expect(content.length).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_CHARS);
    const answer = JSON.parse(content) as {
      status: string;
      exitCode: number;
      details: { steps: string[]; log: string };
    };
    expect(answer).toMatchObject({ status: 'done', exitCode: 0, details: { steps: ['fetch', 'build'] } });
    expect(answer.details.log.startsWith('a line of the log')).toBe(true);
    expect(answer.details.log.endsWith('tabbed\n')).toBe(true);
    expect(cutCount(answer.details.log)).toBe(
      log.length - (answer.details.log.length - /\n\[… [^\]]+\]\n/.exec(answer.details.log)![0].length),
    );
  });

  it('NUL characters, six characters each as JSON, are measured as sent', async () => {
    const content = await sentContent({ output: '\u0000'.repeat(50_000), exitCode: 0 });
    expect(content.length).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_CHARS);
    expect(JSON.parse(content)).toMatchObject({
      exitCode: 0,
      output: expect.stringContaining('characters cut from the middle'),
    });
  });

  it('what cannot be cut field by field (thousands of small strings) becomes a JSON preview with a note', async () => {
    const items = Array.from({ length: 20_000 }, (_unused, i) => `item ${i}`);
    const content = await sentContent(items);
    expect(content.length).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_CHARS);
    const answer = JSON.parse(content) as { result_cut: string; preview: string };
    expect(answer.result_cut).toContain(
      `this tool result had ${JSON.stringify(items).length.toLocaleString('en-US')} characters as JSON`,
    );
    expect(answer.preview.startsWith('["item 0","item 1"')).toBe(true);
  });

  it('the cap is an engine option; a result within it is left exactly as it was', async () => {
    const content = await sentContent('y'.repeat(5_000), { maxResultChars: 2_000 });
    expect(content.length).toBeLessThanOrEqual(2_000);
    expect(cutCount(content)).toBeGreaterThan(3_000);
    expect(await sentContent({ small: 'fits' })).toBe('{"small":"fits"}');
    expect(() => engineWith([], { limits: { maxResultChars: 10 } })).toThrow(
      /maxResultChars must be an integer of at least 1000/,
    );
  });
});

describe('capResultContent', () => {
  it('never splits an emoji in half, in text or in a field', () => {
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    for (let max = 1_000; max < 1_010; max++) {
      expect(capResultContent('😀'.repeat(5_000), max)).not.toMatch(lone);
      const field = (
        JSON.parse(capResultContent(JSON.stringify({ text: '😀'.repeat(5_000) }), max)) as { text: string }
      ).text;
      expect(field).not.toMatch(lone);
    }
  });

  it('a pretty-printed JSON answer that fits once compact is compacted, not cut', () => {
    const pretty = JSON.stringify({ rows: Array.from({ length: 300 }, (_unused, i) => ({ id: i })) }, null, 8);
    expect(pretty.length).toBeGreaterThan(10_000);
    const capped = capResultContent(pretty, 10_000);
    expect(capped).toBe(JSON.stringify(JSON.parse(pretty)));
  });

  it('text that merely starts with a brace is cut as text', () => {
    const capped = capResultContent(`{ not json ${'z'.repeat(50_000)} end`, 5_000);
    expect(capped.length).toBeLessThanOrEqual(5_000);
    expect(capped.startsWith('{ not json')).toBe(true);
    expect(capped.endsWith(' end')).toBe(true);
  });

  it('several large fields are cut until the object fits', () => {
    const value = { a: 'a'.repeat(30_000), b: '"'.repeat(30_000), c: 'c'.repeat(30_000), keep: 42 };
    const capped = capResultContent(JSON.stringify(value), 24_000);
    expect(capped.length).toBeLessThanOrEqual(24_000);
    const parsed = JSON.parse(capped) as typeof value;
    expect(parsed.keep).toBe(42);
    for (const key of ['a', 'b', 'c'] as const) expect(parsed[key].length).toBeLessThan(30_000);
  });
});
