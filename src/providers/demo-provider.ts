// The built-in demo model (`MODEL=demo`): a provider behind the same seam as OpenAI and
// Anthropic that needs no key, no server and no network. What it says is scripted
// (demo-script.ts); this file streams it the way a model would: text in small pieces at a
// pace a person can watch, then one `final` chunk with the whole turn, tool calls included.
//
// One idea: it is a real provider for the engine, so everything around it runs for real (the
// approval cards, the tools, steering, Stop). It honours the AbortSignal: a stop ends the
// stream at once, between two pieces, with the signal's reason, as an HTTP provider's
// closed connection would.
//
// It is what `npm run playground` runs when no MODEL is set, never what `npm start` falls
// back to: a bot on Slack or Discord answering from a script must be asked for by name.
//
// Each answer reports what it used, as a vendor's does, so /usage, the footer and the spend
// limits count the demo like any model (priced at 0: src/ops/pricing.ts). There is no tokenizer
// behind a script: the counts are the usual estimate, four characters a token, the rule the
// spend guard estimates a request with (src/ops/metered-provider.ts).
import type { OutboundMessage } from '../engine/messages.js';
import type { ModelCapabilities, Provider, ProviderChunk, ProviderRequest, TokenUsage } from '../engine/provider.js';
import { capabilitiesOf } from './capabilities.js';
import { DEMO_MODEL } from './model-ref.js';
import { demoReply, type DemoPace, type DemoReply } from './demo-script.js';

export interface DemoProviderOptions {
  /**
   * Milliseconds between streamed pieces, per pace. The defaults are for a person: an answer
   * appears over two or three seconds, the long story over about 15 s (time to press Stop or
   * to reply). Tests in the test runner's process may make them shorter.
   */
  pauseMs?: Partial<Record<DemoPace, number>>;
}

/** Words per piece: a model streams a few characters at a time, never the whole answer. */
const WORDS_PER_PIECE: Record<DemoPace, number> = { normal: 2, slow: 1 };
const PAUSE_MS: Record<DemoPace, number> = { normal: 35, slow: 100 };

export class DemoProvider implements Provider {
  readonly name = 'demo';
  private readonly pauseMs: Record<DemoPace, number>;

  constructor(options: DemoProviderOptions = {}) {
    this.pauseMs = { ...PAUSE_MS, ...options.pauseMs };
  }

  capabilities(): ModelCapabilities {
    return capabilitiesOf('demo', DEMO_MODEL);
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderChunk> {
    signal.throwIfAborted();
    const reply = demoReply(request);
    for (const piece of pieces(reply.text, WORDS_PER_PIECE[reply.pace])) {
      await pause(this.pauseMs[reply.pace], signal);
      yield { type: 'text_delta', text: piece };
    }
    await pause(this.pauseMs[reply.pace], signal);
    yield {
      type: 'final',
      turn: {
        text: reply.text || null,
        toolCalls: reply.toolCalls,
        finishReason: reply.toolCalls.length > 0 ? 'tool_calls' : 'stop',
        usage: estimatedUsage(request, reply),
      },
    };
  }
}

/** The text in pieces of `words` words, each with the spacing after it, so joined they are the text. */
function pieces(text: string, words: number): string[] {
  const tokens = text.match(/\S+\s*/g) ?? [];
  const leading = text.match(/^\s*/)?.[0] ?? '';
  const out: string[] = [];
  for (let at = 0; at < tokens.length; at += words) out.push(tokens.slice(at, at + words).join(''));
  if (leading && out.length > 0) out[0] = leading + out[0];
  return out;
}

/** Wait `ms`, or reject with the signal's reason the moment it is aborted. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('stopped'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Four characters a token: the request as sent (messages, a few tokens each for their framing, and the tools offered), and the answer with its calls. */
function estimatedUsage(request: ProviderRequest, reply: DemoReply): TokenUsage {
  let sent = 0;
  for (const message of request.messages) sent += charactersOf(message);
  for (const tool of request.tools)
    sent += tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length;
  let written = reply.text.length;
  for (const call of reply.toolCalls) written += call.name.length + call.arguments.length;
  return { input: Math.ceil(sent / 4) + request.messages.length * 4, output: Math.ceil(written / 4) };
}

function charactersOf(message: OutboundMessage): number {
  if (message.role === 'user' && typeof message.content !== 'string') {
    return message.content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
  }
  let characters = typeof message.content === 'string' ? message.content.length : 0;
  if (message.role === 'assistant')
    for (const call of message.tool_calls ?? [])
      characters += call.function.name.length + call.function.arguments.length;
  return characters;
}
