import { describe, expect, it } from 'vitest';
import {
  applyCompactionView,
  buildOutbound,
  IMAGE_PLACEHOLDER,
  parseMessage,
  type Message,
  type ModelCapabilities,
} from '../../src/engine/index.js';
import { say } from '../fakes/scripted-provider.js';
import { collect, engineWith } from '../support/engine-kit.js';

const full: ModelCapabilities = { tools: true, vision: true, pdf: true, contextWindow: 100_000 };
const textOnly: ModelCapabilities = { tools: true, vision: false, pdf: false, contextWindow: 100_000 };

function sampleHistory(): Message[] {
  return [
    { role: 'system', content: 'You are helpful.' },
    {
      role: 'user',
      content: 'read the report',
      ts: 1,
      source: { platform: 'slack', channel: 'C1', userId: 'U1', userName: 'ada' },
      _display: '/report',
    },
    {
      role: 'assistant',
      content: null,
      ts: 2,
      reasoning: 'I should read it',
      usage: { model: 'm', input: 10, output: 5 },
      tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"r.md"}' } }],
      _anthropic: { blocks: [{ type: 'thinking', signature: 'sig' }] },
    },
    { role: 'tool', tool_call_id: 'call_a', content: '3 results', ts: 3, _display: { hiddenByFilter: 2 } },
    { role: 'notice', kind: 'error', text: 'provider failed', ts: 4 },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'and this picture' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,BBBB' } },
      ],
      ts: 5,
    },
  ];
}

describe('the outbound view (the only provider feed)', () => {
  it('drops notices and strips every display sidecar but keeps provider extras', () => {
    const out = buildOutbound(sampleHistory(), { compactionState: null, capabilities: full });
    expect(out.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    const serialised = JSON.stringify(out);
    for (const sidecar of [
      '"ts"',
      '"source"',
      '"_display"',
      '"reasoning"',
      '"usage"',
      'hiddenByFilter',
      'provider failed',
    ]) {
      expect(serialised).not.toContain(sidecar);
    }
    expect(out[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"r.md"}' } }],
      _anthropic: { blocks: [{ type: 'thinking', signature: 'sig' }] },
    });
  });

  it('never mutates the canonical history', () => {
    const history = sampleHistory();
    const before = structuredClone(history);
    buildOutbound(history, {
      compactionState: { boundary: 3, summary: 'earlier work' },
      capabilities: textOnly,
      systemContext: 'Now: 2026-11-29',
    });
    buildOutbound(history, { compactionState: null, capabilities: textOnly, systemContext: 'again' });
    expect(history).toEqual(before);
  });

  it('copies only messages that carry sidecars', () => {
    const bare: Message = { role: 'tool', tool_call_id: 'x', content: 'ok' };
    const out = buildOutbound([{ role: 'user', content: 'q' }, bare], { compactionState: null, capabilities: full });
    expect(out[1]).toBe(bare);
    expect(out[0]).toEqual({ role: 'user', content: 'q' });
  });

  it('replaces images with a placeholder for a model without vision, and keeps them for one with it', () => {
    const history = sampleHistory();
    const blind = buildOutbound(history, { compactionState: null, capabilities: textOnly });
    const lastBlind = blind.at(-1)!;
    expect(lastBlind.role).toBe('user');
    expect(JSON.stringify(lastBlind)).toContain(IMAGE_PLACEHOLDER);
    expect(JSON.stringify(lastBlind)).not.toContain('data:image/png');

    const seeing = buildOutbound(history, { compactionState: null, capabilities: full });
    expect(JSON.stringify(seeing.at(-1))).toContain('data:image/png');
  });

  it('adapts PDFs through the hook for a model without native PDF support', () => {
    const seen: string[] = [];
    const out = buildOutbound(sampleHistory(), {
      compactionState: null,
      capabilities: textOnly,
      pdfAdapter: (part) => {
        seen.push(part.file.filename ?? '');
        return [{ type: 'text', text: 'extracted text of the PDF' }];
      },
    });
    expect(seen).toEqual(['spec.pdf']);
    expect(JSON.stringify(out.at(-1))).toContain('extracted text of the PDF');
    expect(JSON.stringify(out.at(-1))).not.toContain('application/pdf');
    // The default adapter says what was left out instead of failing.
    const fallback = buildOutbound(sampleHistory(), { compactionState: null, capabilities: textOnly });
    expect(JSON.stringify(fallback.at(-1))).toContain('spec.pdf');
  });

  it('appends the system-context block to the last user message only', () => {
    const out = buildOutbound(sampleHistory(), {
      compactionState: null,
      capabilities: full,
      systemContext: 'Mode: plan',
    });
    const users = out.filter((m) => m.role === 'user');
    expect(JSON.stringify(users[0])).not.toContain('system-context');
    const last = users.at(-1)!;
    expect(Array.isArray(last.content)).toBe(true);
    expect(JSON.stringify(last.content)).toContain('<system-context>\\nMode: plan\\n</system-context>');

    const plain = buildOutbound([{ role: 'user', content: 'hello' }], {
      compactionState: null,
      capabilities: full,
      systemContext: 'x',
    });
    expect(plain[0]).toEqual({ role: 'user', content: 'hello\n\n<system-context>\nx\n</system-context>' });
  });

  it('a growing history gives, call after call, exactly the view a fresh build gives', () => {
    const history: Message[] = [];
    const grow = sampleHistory();
    let state: { boundary: number; summary: string } | null = null;
    for (let i = 0; i < grow.length * 3; i++) {
      history.push(structuredClone(grow[i % grow.length]!));
      if (i === 9) state = { boundary: 4, summary: 'older work' };
      const capabilities = i % 4 === 0 ? textOnly : full;
      const options = { compactionState: state, capabilities, systemContext: `call ${i}` };
      const incremental = buildOutbound(history, options);
      expect(incremental).toEqual(buildOutbound([...history], options));
      // The per-call context block never accumulates: once, on the last user message.
      const blocks = JSON.stringify(incremental).split('<system-context>').length - 1;
      expect(blocks).toBe(incremental.some((m) => m.role === 'user') ? 1 : 0);
    }
  });

  it('shows compacted history as one block before the verbatim tail', () => {
    const history = sampleHistory();
    const view = applyCompactionView(history, { boundary: 5, summary: 'the user asked for a report' });
    expect(view[0]).toEqual(history[0]);
    expect(view[1]).toEqual({
      role: 'user',
      content: '<compacted-history>\nthe user asked for a report\n</compacted-history>',
    });
    expect(view.slice(2)).toEqual(history.slice(5));
  });

  it('parses stored messages with their extras and rejects malformed ones clearly', () => {
    const stored = JSON.parse(JSON.stringify(sampleHistory())) as unknown[];
    expect(stored.map(parseMessage)).toEqual(sampleHistory());
    expect(() => parseMessage({ role: 'tool', content: 'x' })).toThrow(/tool_call_id/);
    expect(() => parseMessage({ role: 'notice', kind: 'party' })).toThrow();
  });
});

describe('what the engine sends', () => {
  it('sends the system context on the last user message and never the sidecars', async () => {
    const { engine, provider } = engineWith([say('hi')], {
      instructions: 'Be brief.',
      ports: { contextProvider: ({ model }) => `Model in use: ${model}` },
    });
    await collect(
      engine.run('hello', { source: { platform: 'slack', userId: 'U1' }, display: 'shown only to humans' }),
    );
    const request = provider.requests[0]!;
    expect(request.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello\n\n<system-context>\nModel in use: scripted-model\n</system-context>' },
    ]);
    // The canonical history keeps what the model must not see.
    expect(engine.messages[1]).toMatchObject({ source: { userId: 'U1' }, _display: 'shown only to humans' });
    expect(JSON.stringify(engine.messages[1])).not.toContain('system-context');
  });
});

describe('tool results reach the model in the order of the calls', () => {
  const round = (ids: string[]): Message => ({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'look', arguments: '{}' } })),
  });
  const result = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: `result ${id}` });

  it('results recorded as calls finished (c, a, b) are sent as a, b, c, and never across a user message', () => {
    const history: Message[] = [
      { role: 'user', content: 'go' },
      round(['a', 'b', 'c']),
      result('c'),
      { role: 'notice', kind: 'interrupted', text: 'x' },
      result('a'),
      result('b'),
      { role: 'user', content: 'again' },
      round(['d', 'e']),
      result('e'),
      result('d'),
    ];
    const out = buildOutbound(history, { compactionState: null, capabilities: full });
    expect(out.map((m) => (m.role === 'tool' ? m.tool_call_id : m.role))).toEqual([
      'user',
      'assistant',
      'a',
      'b',
      'c',
      'user',
      'assistant',
      'd',
      'e',
    ]);
  });

  it('holds when the view is extended call after call (the incremental cache)', () => {
    const history: Message[] = [{ role: 'user', content: 'go' }, round(['a', 'b'])];
    buildOutbound(history, { compactionState: null, capabilities: full });
    history.push(result('b'));
    buildOutbound(history, { compactionState: null, capabilities: full });
    history.push(result('a'));
    const out = buildOutbound(history, { compactionState: null, capabilities: full });
    expect(out.slice(2).map((m) => (m.role === 'tool' ? m.tool_call_id : m.role))).toEqual(['a', 'b']);
    expect(history.slice(2).map((m) => (m.role === 'tool' ? m.tool_call_id : m.role))).toEqual(['b', 'a']); // canonical history untouched
  });
});
