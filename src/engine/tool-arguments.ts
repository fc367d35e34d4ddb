// Judging the raw argument text a model produced for a tool call. Models cut off by the
// output limit, or small models improvising, send text that is not a JSON object; that
// must become a tool error the model can read and act on, never an exception, and the
// junk must not bloat the history that is replayed on every later call.
import type { FinishReason } from './provider.js';

/** Raw junk longer than this is shrunk to a preview in history. */
const RAW_PREVIEW_CHARS = 200;

export type ParsedArguments =
  { ok: true; value: Record<string, unknown>; stored: string } | { ok: false; raw: string; stored: string };

export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === '') return { ok: true, value: {}, stored: '{}' };
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const record = value as Record<string, unknown>;
      // A call stored as mangled before a restart comes back as `{_raw: …}`: still mangled.
      if (Object.keys(record).length === 1 && typeof record._raw === 'string') {
        return { ok: false, raw: record._raw, stored: raw };
      }
      return { ok: true, value: record, stored: raw };
    }
  } catch {
    // not JSON: falls through to the mangled path
  }
  // Stored as a valid JSON object so every provider can replay the call.
  const preview =
    raw.length > RAW_PREVIEW_CHARS
      ? `${raw.slice(0, RAW_PREVIEW_CHARS)}… [unparsed tool-call text, ${raw.length} chars, truncated in history]`
      : raw;
  return { ok: false, raw, stored: JSON.stringify({ _raw: preview }) };
}

/** What the model is told about arguments that did not parse. */
export function diagnoseMangledArguments(finishReason: FinishReason | undefined): string {
  if (finishReason === 'length') {
    return (
      'the arguments were cut off by the output limit before they were complete. ' +
      'Produce the content in smaller pieces; do not retry the identical call.'
    );
  }
  return 'the arguments are not a JSON object. Re-issue the call with the declared parameters as a JSON object.';
}
