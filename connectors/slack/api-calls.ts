// Every Slack Web API call, counted on the operations bus as a `platform_call` (the metrics'
// chat_agent_platform_calls_total): its method (`chat.postMessage`; `response_url` for
// respond()) and its outcome. Wrapped around the outbound guard's `fetch` in bolt-app.ts, the
// one place every client Bolt makes sends through (outbound-guard.ts says why), so a new code
// path is counted without remembering to.
//
// Outcomes: `rate_limited` for a 429 (each attempt: the WebClient retries after Retry-After,
// and each 429 is one Slack answered); `error` for another HTTP error, no answer at all, or a
// 200 whose JSON says `"ok": false` (Slack's own refusals: not_in_channel, message_not_found…,
// read from a clone of the answer, so the WebClient still reads the original); `ok` otherwise.
// With nothing listening on the bus it is a plain pass-through.
import type { FetchFunction } from '@slack/web-api';
import type { OpsBus } from '../../src/ops/ops-events.js';
import { methodOf } from './outbound-guard.js';

type Outcome = 'ok' | 'rate_limited' | 'error';

export function countedFetch(inner: FetchFunction, ops: OpsBus, now: () => number = Date.now): FetchFunction {
  return async (url, init) => {
    if (!ops.listening) return inner(url, init);
    const method = methodOf(url) || 'response_url';
    const report = (outcome: Outcome) =>
      ops.emit({ type: 'platform_call', at: now(), platform: 'slack', method, outcome });
    let response: Awaited<ReturnType<FetchFunction>>;
    try {
      response = await inner(url, init);
    } catch (error) {
      report('error');
      throw error;
    }
    if (response.status === 429) report('rate_limited');
    else if (response.status >= 400) report('error');
    else void bodyOutcome(response).then(report);
    return response;
  };
}

/** `error` when a JSON answer says `"ok": false`; `ok` for anything else (a response_url's plain `ok`). */
async function bodyOutcome(response: Awaited<ReturnType<FetchFunction>>): Promise<Outcome> {
  const clone = (response as { clone?: () => { json(): Promise<unknown> } }).clone;
  if (typeof clone !== 'function' || !/json/i.test(response.headers.get('content-type') ?? '')) return 'ok';
  try {
    const body = await clone.call(response).json();
    return body && typeof body === 'object' && (body as { ok?: unknown }).ok === false ? 'error' : 'ok';
  } catch {
    return 'ok'; // not JSON after all: the WebClient reports that itself
  }
}
