// A Chat Completions stream's token usage, read from wherever the server put it, as the
// engine counts it. OpenAI sends it in a last chunk of its own (`usage`, with `choices: []`)
// when asked (`stream_options.include_usage`); some compatible servers put it on every chunk;
// Moonshot's Kimi servers put it inside the finish chunk's choice (`choices[0].usage`), with
// the prompt's cached tokens beside the counts (`cached_tokens`) rather than in
// `prompt_tokens_details`.
//
// The one idea: what a server sends here is data from outside, so it is parsed (zod), and a
// usage whose counts are not numbers is no usage at all (the metered provider then charges its
// estimate, src/ops/metered-provider.ts), never a NaN in the spend counters.
import { z } from 'zod';
import type { TokenUsage } from '../engine/index.js';

const count = z.number().finite().nonnegative();

const WireUsage = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  prompt_tokens_details: z.object({ cached_tokens: count.nullish() }).nullish(),
  completion_tokens_details: z.object({ reasoning_tokens: count.nullish() }).nullish(),
  /** Moonshot's: prompt tokens read from its context cache (part of prompt_tokens, as OpenAI counts its own). */
  cached_tokens: count.nullish(),
});

/** A choice's own usage field (Kimi), read off the SDK's chunk type, which does not declare it. */
export function choiceUsage(choice: object): unknown {
  return (choice as { usage?: unknown }).usage;
}

/**
 * The engine's counts from a wire usage, or undefined when it is not one. OpenAI counts
 * cached tokens inside `prompt_tokens`; the engine wants them apart.
 */
export function toTokenUsage(raw: unknown): TokenUsage | undefined {
  const parsed = WireUsage.safeParse(raw);
  if (!parsed.success) return undefined;
  const usage = parsed.data;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? usage.cached_tokens ?? undefined;
  const result: TokenUsage = {
    input: Math.max(0, usage.prompt_tokens - (cached ?? 0)),
    output: usage.completion_tokens,
  };
  if (typeof cached === 'number') result.cacheRead = cached;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number' && reasoning > 0) result.reasoning = reasoning;
  return result;
}
