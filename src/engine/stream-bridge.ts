// The stream bridge: the one place that races a provider's stream against the stop signal.
//
// A provider's own cancel check only runs when a chunk arrives, so a stream that never
// sends its first token, or wedges mid-answer, would hold the turn forever. Here every
// pending chunk is raced against the turn's signal; on a stop the request is aborted
// (closing the connection) and the iterator is let go without waiting for it.
import { ABORTED, linkedAbortController, raceAbort } from './abort.js';
import type { Provider, ProviderChunk, ProviderRequest } from './provider.js';

/**
 * Yields the provider's chunks until the stream ends or `turnSignal` fires. After a stop
 * it simply returns: the caller checks `turnSignal.aborted` (a mid-stream abort does not
 * throw in either SDK, so the signal is the only reliable witness).
 */
export async function* bridgeStream(
  provider: Provider,
  request: ProviderRequest,
  turnSignal: AbortSignal,
): AsyncGenerator<ProviderChunk, void, undefined> {
  const { controller, release } = linkedAbortController(turnSignal);
  let iterator: AsyncIterator<ProviderChunk> | undefined;
  let exhausted = false;
  try {
    iterator = provider.stream(request, controller.signal)[Symbol.asyncIterator]();
    for (;;) {
      const next = await raceAbort(iterator.next(), turnSignal);
      if (next === ABORTED) return;
      if (next.done) {
        exhausted = true;
        return;
      }
      yield next.value;
    }
  } finally {
    release();
    if (!exhausted) {
      controller.abort();
      // Not awaited: a wedged iterator may never settle, and the turn must not wait for it.
      const closing = iterator?.return?.();
      closing?.catch(() => undefined);
    }
  }
}
