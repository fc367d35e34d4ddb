// The OpenAI provider suite: what OpenAIProvider costs on top of the SDK it wraps.
// One 10,000-chunk answer from FakeOpenAI (one small content delta per chunk, no delay)
// is read (a) raw: the SDK stream and a `for await` that only reads `delta.content`, and
// (b) through OpenAIProvider.stream to its final chunk (delta assembly, the stall
// watchdog re-armed per chunk, the abort plumbing). Both pay the same HTTP and SSE
// parsing, so b/a is the provider's own overhead. It reports only, never judges.
import OpenAI from 'openai';
import type { ProviderRequest } from '../src/engine/index.js';
import { OpenAIProvider } from '../src/providers/openai.js';
import { answerEvents, FakeOpenAI } from '../test/fakes/openai-server.js';
import type { RecordedRequest } from '../test/fakes/http-fake.js';
import { median } from './stats.js';
import type { BenchRow, BenchSuite } from './suite.js';

const CHUNKS = 10_000;
const REPEATS = 5;
const WARMUP_RUNS = 3;
const MODEL = 'gpt-4.1';

const request: ProviderRequest = { model: `openai:${MODEL}`, messages: [{ role: 'user', content: 'go' }], tools: [] };

/**
 * The reply, serialised once: the fake runs in this process, so building and encoding
 * 10,000 events per request would land on both timings and dilute the ratio.
 */
function prebuiltReply(): { data: string }[] {
  const asSent = { body: { model: MODEL, stream_options: { include_usage: true } } } as RecordedRequest;
  return answerEvents(asSent, { text: 'x'.repeat(CHUNKS), chunkSize: 1 }).map((event) => ({
    data: typeof event.data === 'string' ? event.data : JSON.stringify(event.data),
  }));
}

async function rawSdk(client: OpenAI): Promise<number> {
  const started = performance.now();
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'go' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let received = 0;
  for await (const chunk of stream) received += chunk.choices[0]?.delta.content?.length ?? 0;
  const elapsed = performance.now() - started;
  if (received !== CHUNKS) throw new Error(`raw SDK: read ${received} of ${CHUNKS} characters`);
  return elapsed;
}

async function throughProvider(provider: OpenAIProvider): Promise<number> {
  const signal = new AbortController().signal;
  const started = performance.now();
  let deltas = 0;
  let finalText: string | null = null;
  for await (const chunk of provider.stream(request, signal)) {
    if (chunk.type === 'text_delta') deltas++;
    else if (chunk.type === 'final') finalText = chunk.turn.text;
  }
  const elapsed = performance.now() - started;
  if (deltas !== CHUNKS || finalText?.length !== CHUNKS)
    throw new Error(`provider: ${deltas} deltas, final of ${finalText?.length} characters`);
  return elapsed;
}

export const openaiProviderSuite: BenchSuite = {
  name: 'openai-provider',
  async run(): Promise<BenchRow[]> {
    const fake = await new FakeOpenAI().start();
    try {
      const events = prebuiltReply();
      const client = new OpenAI({ apiKey: 'bench', baseURL: fake.baseURL, maxRetries: 0 });
      const provider = new OpenAIProvider({ apiKey: 'bench', baseURL: fake.baseURL, maxRetries: 0 });
      const once = async (read: () => Promise<number>): Promise<number> => {
        fake.reply({ kind: 'sse', events });
        return read();
      };
      for (let i = 0; i < WARMUP_RUNS; i++) {
        await once(() => rawSdk(client));
        await once(() => throughProvider(provider));
      }
      const raw: number[] = [];
      const wrapped: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        raw.push(await once(() => rawSdk(client)));
        wrapped.push(await once(() => throughProvider(provider)));
      }
      const rawMs = median(raw);
      const providerMs = median(wrapped);
      const runs = `${CHUNKS.toLocaleString('en')}-chunk answer from FakeOpenAI; median of ${REPEATS} after ${WARMUP_RUNS} warm-ups`;
      return [
        {
          key: 'providers.openai.raw_sdk_stream_ms',
          value: rawMs,
          unit: 'ms',
          note: `raw SDK stream, reading delta.content; ${runs}`,
        },
        {
          key: 'providers.openai.provider_stream_ms',
          value: providerMs,
          unit: 'ms',
          note: `OpenAIProvider.stream to the final chunk; ${runs}`,
        },
        {
          key: 'providers.openai.parse_overhead_ratio',
          value: providerMs / rawMs,
          unit: 'x',
          note: 'provider / raw SDK, same answer',
        },
      ];
    } finally {
      await fake.stop();
    }
  },
};
