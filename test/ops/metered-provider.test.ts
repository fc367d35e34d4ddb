// The metered provider: the spend guard admits a call before anything is sent, a refusal never
// reaches the provider, every admitted call is settled exactly once (with the usage it reported,
// or none when it failed or was stopped), and the bus hears the call's life in order.
import { describe, expect, it } from 'vitest';
import { ProviderError, type ProviderChunk, type ProviderRequest } from '../../src/engine/index.js';
import {
  estimateRequestTokens,
  meteredResolver,
  outputCeiling,
  type Admission,
  type CallEstimate,
  type SpendGuard,
} from '../../src/ops/metered-provider.js';
import { OpsBus, type OpsEvent, type TokenCounts } from '../../src/ops/ops-events.js';
import { ScriptedProvider, type Step } from '../fakes/scripted-provider.js';

const PLACE = { sessionId: 'slack:T1:C1:1.0', platform: 'slack', workspace: 'T1', channel: 'C1' };

class RecordingGuard implements SpendGuard {
  readonly asked: CallEstimate[] = [];
  readonly settled: { ticket: unknown; usage: TokenCounts | undefined }[] = [];
  refuse = false;
  async admit(estimate: CallEstimate): Promise<Admission> {
    this.asked.push(estimate);
    return this.refuse
      ? { ok: false, limit: 'channel_daily', message: 'Paused: the channel budget is spent.' }
      : { ok: true, ticket: `t${this.asked.length}` };
  }
  async settle(ticket: unknown, usage: TokenCounts | undefined): Promise<void> {
    this.settled.push({ ticket, usage });
  }
}

function setup(steps: Step[]) {
  const inner = new ScriptedProvider(steps);
  const bus = new OpsBus();
  const heard: OpsEvent[] = [];
  bus.add({ handle: (event) => heard.push(event) });
  const guard = new RecordingGuard();
  let clock = 1_000;
  const provider = meteredResolver(() => inner, {
    place: PLACE,
    ops: bus,
    guard,
    fallbackRequester: () => 'U-starter',
    now: () => (clock += 10),
  })('openai:gpt-4.1');
  return { inner, heard, guard, provider };
}

const request = (extra: Partial<ProviderRequest> = {}): ProviderRequest => ({
  model: 'openai:gpt-4.1',
  messages: [{ role: 'user', content: 'x'.repeat(400) }],
  tools: [],
  meta: { purpose: 'turn', requester: 'U1' },
  ...extra,
});

async function drain(stream: AsyncIterable<ProviderChunk>): Promise<ProviderChunk[]> {
  const chunks: ProviderChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('the metered provider', () => {
  it("carries the call's messages and answer only when traces capture content", async () => {
    for (const captureContent of [false, true]) {
      const inner = new ScriptedProvider([{ text: 'the answer' }]);
      const bus = new OpsBus();
      const heard: OpsEvent[] = [];
      bus.add({ handle: (event) => heard.push(event) });
      const provider = meteredResolver(() => inner, { place: PLACE, ops: bus, captureContent })('openai:gpt-4.1');
      const sent = request();
      await drain(provider.stream(sent, new AbortController().signal));
      const ended = heard.find((event) => event.type === 'model_call_ended');
      if (!captureContent) expect(ended).not.toHaveProperty('content');
      else
        expect(ended).toMatchObject({
          content: { input: sent.messages, output: { text: 'the answer', finishReason: 'stop' } },
        });
    }
  });

  it('asks the guard with an estimate, reports the call in order, and settles the usage the provider reported', async () => {
    const { heard, guard, provider } = setup([
      { text: 'hello', usage: { input: 100, output: 20, cacheRead: 50, reasoning: 5 } },
    ]);
    await drain(provider.stream(request(), new AbortController().signal));
    expect(guard.asked).toEqual([
      {
        place: PLACE,
        requester: 'U1',
        model: 'openai:gpt-4.1',
        purpose: 'turn',
        inputTokens: 104,
        maxOutputTokens: 32_768,
      },
    ]);
    expect(heard.map((event) => event.type)).toEqual([
      'model_call_started',
      'model_call_first_token',
      'model_call_ended',
    ]);
    expect(heard[2]).toMatchObject({
      provider: 'openai',
      model: 'openai:gpt-4.1',
      requester: 'U1',
      finishReason: 'stop',
      tokens: { input: 100, cachedInput: 50, cacheWrite: 0, output: 20, reasoning: 5 },
    });
    expect(heard[2]).not.toHaveProperty('error');
    expect(guard.settled).toEqual([
      { ticket: 't1', usage: { input: 100, cachedInput: 50, cacheWrite: 0, output: 20, reasoning: 5 } },
    ]);
  });

  it('a finished call whose stream reported no usage is charged the estimate, marked as estimated, never 0', async () => {
    const { heard, guard, provider } = setup([{ text: 'hello there, friend' }]);
    const chunks = await drain(provider.stream(request(), new AbortController().signal));
    // The input the guard was told before the call; the output counted from the answer (four characters a token).
    const estimate = { input: 104, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0, estimated: true };
    expect(guard.settled).toEqual([{ ticket: 't1', usage: estimate }]);
    expect(heard.at(-1)).toMatchObject({ type: 'model_call_ended', tokens: estimate });
    // The engine records it on the answer too (the thread's usage footer reads it there), marked.
    expect(chunks.at(-1)).toMatchObject({
      type: 'final',
      turn: { text: 'hello there, friend', usage: { input: 104, output: 5, estimated: true } },
    });
  });

  it('a refused call never reaches the provider: a budget error, a refusal on the bus, nothing to settle', async () => {
    const { inner, heard, guard, provider } = setup([{ text: 'never' }]);
    guard.refuse = true;
    const error = await drain(provider.stream(request(), new AbortController().signal)).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'budget', message: 'Paused: the channel budget is spent.' });
    expect(inner.requests).toHaveLength(0);
    expect(heard).toEqual([
      { type: 'budget_refused', at: expect.any(Number), place: PLACE, limit: 'channel_daily', what: 'model_call' },
    ]);
    expect(guard.settled).toEqual([]);
  });

  it('a call that fails before its first token is settled once with no usage and reported with its error kind; a compaction call is paid by the starter', async () => {
    const { heard, guard, provider } = setup([
      { text: 'part', chunkSize: 2, failAfterChunks: 0, error: new ProviderError('server', 'boom') },
    ]);
    await expect(
      drain(provider.stream(request({ meta: { purpose: 'compaction' } }), new AbortController().signal)),
    ).rejects.toThrow('boom');
    expect(guard.asked[0]).toMatchObject({ requester: 'U-starter', purpose: 'compaction' });
    expect(guard.settled).toEqual([{ ticket: 't1', usage: undefined }]);
    expect(heard.at(-1)).toMatchObject({ type: 'model_call_ended', error: 'server', purpose: 'compaction' });
    expect(heard.at(-1)).not.toHaveProperty('tokens');
  });

  it('a call that fails after its answer began is charged its input and what it streamed, marked as estimated', async () => {
    const { heard, guard, provider } = setup([
      { text: 'x'.repeat(40), chunkSize: 20, failAfterChunks: 1, error: new ProviderError('server', 'boom') },
    ]);
    await expect(drain(provider.stream(request(), new AbortController().signal))).rejects.toThrow('boom');
    // The input is the estimate the guard was asked with before the call.
    expect(guard.asked[0]!.inputTokens).toBe(104);
    const charged = { input: 104, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0, estimated: true };
    expect(guard.settled).toEqual([{ ticket: 't1', usage: charged }]);
    expect(heard.at(-1)).toMatchObject({ type: 'model_call_ended', error: 'server', tokens: charged });
  });

  it('a call stopped mid-stream (or walked away from) is settled once, charged its input and what it streamed', async () => {
    const { guard, provider } = setup([{ text: 'abcdef', chunkSize: 1 }]);
    for await (const chunk of provider.stream(request(), new AbortController().signal)) {
      if (chunk.type === 'text_delta') break;
    }
    expect(guard.settled).toEqual([
      { ticket: 't1', usage: { input: 104, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0, estimated: true } },
    ]);

    const stopped = setup([{ text: 'y'.repeat(80), chunkSize: 40 }]);
    const stop = new AbortController();
    const seen: ProviderChunk[] = [];
    // The scripted provider ends quietly on its signal, as the SDKs' streams end on a stop.
    for await (const chunk of stopped.provider.stream(request(), stop.signal)) {
      seen.push(chunk);
      if (chunk.type === 'text_delta') stop.abort();
    }
    expect(seen.filter((chunk) => chunk.type === 'text_delta')).toHaveLength(1);
    expect(stopped.guard.settled).toEqual([
      { ticket: 't1', usage: { input: 104, cachedInput: 0, cacheWrite: 0, output: 10, reasoning: 0, estimated: true } },
    ]);
  });

  it("the output ceiling: the request's max_tokens, else Anthropic's 8192, else the model's limit; images count 1,000 tokens", () => {
    expect(outputCeiling(request({ settings: { max_tokens: 500 } }))).toBe(500);
    expect(outputCeiling(request({ model: 'anthropic:claude-sonnet-4-6' }))).toBe(8192);
    expect(outputCeiling(request({ model: 'openai:gpt-4o-mini-2024-07-18' }))).toBe(16_384);
    expect(outputCeiling(request({ model: 'openai:some-local-model' }))).toBe(16_384);
    const withImage = request({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'abcd' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    });
    expect(estimateRequestTokens(withImage)).toBe(1 + 1_000 + 4);
  });
});
