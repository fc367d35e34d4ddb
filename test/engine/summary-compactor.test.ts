import { describe, expect, it } from 'vitest';
import {
  chooseBoundary,
  ProviderError,
  SummarizingCompactor,
  SUMMARY_SYSTEM_PROMPT,
  TurnEngine,
  type CompactionContext,
  type Message,
  type ModelCapabilities,
} from '../../src/engine/index.js';
import { call, callTools, say, ScriptedProvider, type ScriptStep } from '../fakes/scripted-provider.js';
import { collect, lowRisk, only, recordingTool, typesOf } from '../support/engine-kit.js';

const caps = (contextWindow: number): ModelCapabilities => ({ tools: true, vision: true, pdf: true, contextWindow });

function context(messages: Message[], overrides: Partial<CompactionContext> = {}): CompactionContext {
  return {
    messages,
    state: null,
    capabilities: caps(100_000),
    provider: new ScriptedProvider([]),
    model: 'm',
    lastUsage: undefined,
    signal: new AbortController().signal,
    ...overrides,
  };
}

const words = (n: number) => 'word '.repeat(n);

describe('when compaction is due', () => {
  it('triggers at min(threshold × context window, cap)', () => {
    const compactor = new SummarizingCompactor();
    expect(compactor.triggerTokens({ capabilities: caps(100_000) })).toBe(80_000);
    expect(compactor.triggerTokens({ capabilities: caps(1_000_000) })).toBe(250_000);
    expect(
      new SummarizingCompactor({ threshold: 0.5, capTokens: 10_000 }).triggerTokens({ capabilities: caps(100_000) }),
    ).toBe(10_000);
  });

  it('uses the last reported input and cache tokens, plus what was appended since', () => {
    const compactor = new SummarizingCompactor();
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'tool', tool_call_id: 'x', content: 'y'.repeat(4_000) },
    ];
    const reported = context(messages, { lastUsage: { input: 70_000, output: 500, cacheRead: 9_000 } });
    expect(compactor.currentTokens(reported)).toBe(70_000 + 500 + 9_000 + 1_004);
    expect(compactor.isDue(reported)).toBe(true);
    expect(compactor.isDue(context(messages, { lastUsage: { input: 10, output: 10 } }))).toBe(false);
  });

  it('estimates characters / 4 of the outbound view when no usage is known', () => {
    const compactor = new SummarizingCompactor({ capTokens: 1_000 });
    expect(compactor.isDue(context([{ role: 'user', content: 'x'.repeat(3_000) }]))).toBe(false);
    expect(compactor.isDue(context([{ role: 'user', content: 'x'.repeat(5_000) }]))).toBe(true);
  });
});

describe('choosing the boundary', () => {
  const history: Message[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: words(400) }, // 1
    { role: 'assistant', content: words(400) }, // 2
    { role: 'user', content: words(40) }, // 3
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'a', type: 'function', function: { name: 't', arguments: '{}' } }],
    }, // 4
    { role: 'tool', tool_call_id: 'a', content: words(40) }, // 5
    { role: 'assistant', content: words(20) }, // 6
  ];

  it('keeps the earliest user turn whose tail fits', () => {
    expect(chooseBoundary(history, 0, 200)).toBe(3);
  });

  it('falls inside a giant final turn, on an assistant message, never on a tool result', () => {
    expect(chooseBoundary(history, 0, 40)).toBe(6);
    const giant: Message[] = [
      { role: 'user', content: 'start' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 't', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'z'.repeat(10_000) },
    ];
    expect(chooseBoundary(giant, 0, 100)).toBe(1);
  });

  it('must move past the previous boundary, and needs something to summarise', () => {
    expect(chooseBoundary(history, 3, 200)).toBe(4);
    expect(chooseBoundary(history, 6, 200)).toBeNull();
    expect(
      chooseBoundary(
        [
          { role: 'system', content: 's' },
          { role: 'user', content: 'only' },
        ],
        0,
        1,
      ),
    ).toBeNull();
  });
});

describe('the summary', () => {
  const history: Message[] = [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: 'Deploy the API to staging.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'run_shell', arguments: '{"command":"make deploy"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'error: missing STAGING_URL' },
    { role: 'notice', kind: 'error', text: 'never summarised' },
    { role: 'user', content: 'Use https://staging.example.com' },
    { role: 'assistant', content: words(100) },
    { role: 'user', content: 'Now the newest request.' },
  ];

  it('is one non-tool call with a structured prompt covering every user message and the previous summary', async () => {
    const provider = new ScriptedProvider([say('## Goals and constraints\nDeploy to staging.')]);
    const compactor = new SummarizingCompactor({ capTokens: 100 });
    const result = await compactor.compact(
      context(history, { provider, state: { boundary: 1, summary: 'EARLIER SUMMARY' } }),
    );
    expect(result).toEqual({
      state: { boundary: 7, summary: '## Goals and constraints\nDeploy to staging.' },
      notice: 'Compacted 5 earlier messages into a summary.',
    });
    const request = provider.requests[0]!;
    expect(request.tools).toEqual([]);
    expect(request.messages[0]).toEqual({ role: 'system', content: SUMMARY_SYSTEM_PROMPT });
    for (const section of [
      'Goals and constraints',
      'Decisions',
      'Files and artifacts',
      'Errors and corrections',
      'User messages',
      'Pending work',
      'Next step',
    ]) {
      expect(SUMMARY_SYSTEM_PROMPT).toContain(`## ${section}`);
    }
    const body = request.messages[1]!.content as string;
    expect(body).toContain('<previous-summary>\nEARLIER SUMMARY\n</previous-summary>');
    expect(body).toContain('USER: Deploy the API to staging.');
    expect(body).toContain('USER: Use https://staging.example.com');
    expect(body).toContain('TOOL CALL run_shell({"command":"make deploy"})');
    expect(body).toContain('TOOL RESULT: error: missing STAGING_URL');
    expect(body).not.toContain('never summarised');
    expect(body).not.toContain('Now the newest request.');
  });

  it('uses a configured summariser model instead of the active one', async () => {
    const cheap = new ScriptedProvider([say('summary by the cheap model')]);
    const active = new ScriptedProvider([]);
    const compactor = new SummarizingCompactor({
      capTokens: 100,
      summarizer: { provider: cheap, model: 'cheap-model' },
    });
    const result = await compactor.compact(context(history, { provider: active }));
    expect(result?.state.summary).toBe('summary by the cheap model');
    expect(cheap.requests[0]!.model).toBe('cheap-model');
    expect(active.requests).toEqual([]);
  });

  it('retries a failed summary once', async () => {
    const provider = new ScriptedProvider([{ error: new Error('summary model 500') }, say('second try worked')]);
    const result = await new SummarizingCompactor({ capTokens: 100 }).compact(context(history, { provider }));
    expect(result?.state.summary).toBe('second try worked');
    expect(result?.notice).toContain('the second worked');
  });

  it('after two failures trims the oldest ~10% and says so', async () => {
    const provider = new ScriptedProvider([{ error: new Error('boom one') }, say('')]);
    const result = await new SummarizingCompactor({ capTokens: 100 }).compact(context(history, { provider }));
    expect(provider.requests).toHaveLength(2);
    expect(result?.state.boundary).toBe(5);
    expect(result?.state.summary).toContain('older messages were dropped without a summary');
    expect(result?.notice).toMatch(/could not summarise \(boom one\), twice; trimmed the oldest 3 messages/);
  });
});

describe('compaction by summary inside a turn', () => {
  /** Answers summary requests with a summary, everything else from the script. */
  function routed(script: ScriptStep[], summaries: string[] = []) {
    return new ScriptedProvider(
      Array.from({ length: 40 }, () => (request) => {
        const isSummary =
          request.messages[0]?.role === 'system' && request.messages[0].content === SUMMARY_SYSTEM_PROMPT;
        if (isSummary) return say(summaries.shift() ?? 'a summary of the earlier work');
        return script.shift() ?? say('(script ran out)');
      }),
      { capabilities: { contextWindow: 2_000 } },
    );
  }

  it('compacts before the model call once the history nears the window, and the model sees summary + tail', async () => {
    const provider = routed([say(words(500)), say(words(500)), say(words(500)), say('final answer')], ['SUMMARY ONE']);
    const engine = new TurnEngine({
      provider,
      model: 'small',
      instructions: 'Be useful.',
      ports: { compactor: new SummarizingCompactor() },
    });
    for (const question of ['first question', 'second question', 'third question']) await collect(engine.run(question));
    const events = await collect(engine.run('fourth question'));
    expect(typesOf(events).slice(0, 3)).toEqual(['turn_start', 'compacting', 'compacted']);
    const last = provider.requests.at(-1)!;
    expect(last.messages[0]).toEqual({ role: 'system', content: 'Be useful.' });
    expect(last.messages[1]).toEqual({
      role: 'user',
      content: '<compacted-history>\nSUMMARY ONE\n</compacted-history>',
    });
    expect(last.messages.at(-1)).toEqual({ role: 'user', content: 'fourth question' });
    expect(engine.messages.filter((m) => m.role === 'user')).toHaveLength(4);
    expect(engine.compaction).toMatchObject({ summary: 'SUMMARY ONE' });
  });

  it('a forced compaction on overflow folds the previous summary into the next one', async () => {
    const overflow = (): ScriptStep => ({ error: new ProviderError('context_overflow', 'prompt is too long') });
    const provider = routed(
      [
        callTools(call('look')),
        say(words(200)),
        callTools(call('look')),
        overflow(),
        say(words(200)),
        overflow(),
        say('done after compaction'),
      ],
      ['FIRST SUMMARY', 'SECOND SUMMARY'],
    );
    const engine = new TurnEngine({
      provider,
      model: 'small',
      tools: [recordingTool('look', lowRisk, { result: () => words(300) })],
      ports: { compactor: new SummarizingCompactor() },
    });
    await collect(engine.run('look around'));
    const second = await collect(engine.run('look again'));
    expect(only(second, 'compacted')).toHaveLength(1);
    const third = await collect(engine.run('and finish'));
    expect(only(third, 'turn_end')[0]).toMatchObject({ status: 'completed' });
    expect(only(third, 'error')).toEqual([]);
    const summaryRequests = provider.requests.filter((r) => r.messages[0]?.content === SUMMARY_SYSTEM_PROMPT);
    expect(summaryRequests).toHaveLength(2);
    expect(summaryRequests[0]!.messages[1]!.content).not.toContain('<previous-summary>');
    expect(summaryRequests[1]!.messages[1]!.content).toContain(
      '<previous-summary>\nFIRST SUMMARY\n</previous-summary>',
    );
    expect(engine.compaction?.summary).toBe('SECOND SUMMARY');
    expect(provider.requests.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'and finish' });
    expect(JSON.parse(JSON.stringify(engine.compaction))).toEqual(engine.compaction);
  });
});
