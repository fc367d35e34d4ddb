// The Anthropic provider suite: what AnthropicProvider adds on top of the SDK's own stream.
// One 10,000-event answer (one small text_delta per event, no delay) from FakeAnthropic is
// read (a) by a bare `for await` over `client.messages.create({stream: true})` and (b) by
// AnthropicProvider.stream to its final chunk: conversion, block assembly, the watchdog
// rewound per event and the chunk objects. Both pay the same server and SSE parsing, so
// the ratio b/a is the provider's share. It reports only; no threshold on absolute times.
import Anthropic from '@anthropic-ai/sdk';
import type { ProviderRequest } from '../src/engine/index.js';
import { AnthropicProvider } from '../src/providers/anthropic.js';
import { FakeAnthropic, messageEvents } from '../test/fakes/anthropic-server.js';
import { median } from './stats.js';
import type { BenchSuite } from './suite.js';

const EVENTS = 10_000;
const WARMUP_RUNS = 3;
const REPEATS = 5;
const MODEL = 'claude-bench';
const ANSWER = 'x'.repeat(EVENTS);

async function timeRawSdk(fake: FakeAnthropic, client: Anthropic): Promise<number> {
  fake.replyBlocks([{ type: 'text', text: ANSWER }], { chunkSize: 1 });
  const started = performance.now();
  const stream = await client.messages.create({
    model: MODEL,
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'go' }],
    stream: true,
  });
  let text = '';
  for await (const event of stream) {
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  }
  const elapsed = performance.now() - started;
  if (text.length !== EVENTS) throw new Error(`raw SDK run: expected ${EVENTS} characters, got ${text.length}`);
  return elapsed;
}

async function timeProvider(fake: FakeAnthropic, provider: AnthropicProvider): Promise<number> {
  fake.replyBlocks([{ type: 'text', text: ANSWER }], { chunkSize: 1 });
  const request: ProviderRequest = {
    model: `anthropic:${MODEL}`,
    messages: [{ role: 'user', content: 'go' }],
    tools: [],
  };
  const started = performance.now();
  let finalText: string | null | undefined;
  for await (const chunk of provider.stream(request, new AbortController().signal)) {
    if (chunk.type === 'final') finalText = chunk.turn.text;
  }
  const elapsed = performance.now() - started;
  if (finalText?.length !== EVENTS)
    throw new Error(`provider run: expected a final turn of ${EVENTS} characters, got ${finalText?.length}`);
  return elapsed;
}

export const anthropicProviderSuite: BenchSuite = {
  name: 'anthropic provider',
  async run() {
    const fake = await new FakeAnthropic().start();
    try {
      // Sanity check that the answer really is one delta per event.
      const deltas = messageEvents([{ type: 'text', text: ANSWER }], { chunkSize: 1 }).filter(
        (e) => e.event === 'content_block_delta',
      );
      if (deltas.length !== EVENTS) throw new Error(`expected ${EVENTS} delta events, built ${deltas.length}`);

      const client = new Anthropic({ apiKey: 'bench', baseURL: fake.baseURL, maxRetries: 0 });
      const provider = new AnthropicProvider({ apiKey: 'bench', baseURL: fake.baseURL, maxRetries: 0 });
      for (let i = 0; i < WARMUP_RUNS; i++) {
        await timeRawSdk(fake, client);
        await timeProvider(fake, provider);
      }
      const raw: number[] = [];
      const wrapped: number[] = [];
      // Interleaved, so drift (GC, CPU frequency) lands on both sides alike.
      for (let i = 0; i < REPEATS; i++) {
        raw.push(await timeRawSdk(fake, client));
        wrapped.push(await timeProvider(fake, provider));
      }
      const rawMs = median(raw);
      const providerMs = median(wrapped);
      const runs = `${EVENTS} text_delta events from FakeAnthropic; median of ${REPEATS} after ${WARMUP_RUNS} warm-up runs`;
      return [
        {
          key: 'providers.anthropic.raw_sdk_ms',
          value: rawMs,
          unit: 'ms',
          note: `bare for-await over messages.create({stream:true}); ${runs}`,
        },
        {
          key: 'providers.anthropic.provider_ms',
          value: providerMs,
          unit: 'ms',
          note: `AnthropicProvider.stream to its final chunk; ${runs}`,
        },
        {
          key: 'providers.anthropic.parse_overhead_ratio',
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
