// The stream bridge: the one place that races a provider's stream against the stop.
//
// A provider's own cancel check only runs when a chunk arrives, so a stream that never
// sends its first token, or wedges mid-answer, would hold the turn forever. Here every
// pending chunk is raced against the turn's stop; on a stop the request is aborted
// (closing the connection) and the iterator is let go without waiting for it.
import { ABORTED, StopScope } from './abort.js';
import type { Provider, ProviderChunk, ProviderRequest } from './provider.js';

/**
 * Yields the provider's chunks until the stream ends or the turn stops. After a stop it
 * simply returns: the caller checks the turn's signal (a mid-stream abort does not throw in
 * either SDK, so the signal is the only reliable witness). The provider gets a signal of its
 * own for the call, which follows the turn's: the openai SDK leaves a listener on every
 * signal it is given, and one per call on the turn's would pile up over a long turn.
 */
export async function* bridgeStream(
  provider: Provider,
  request: ProviderRequest,
  turn: StopScope | AbortSignal,
): AsyncGenerator<ProviderChunk, void, undefined> {
  const stop = turn instanceof StopScope ? turn : new StopScope(turn);
  const controller = stop.link(true);
  let iterator: AsyncIterator<ProviderChunk> | undefined;
  let exhausted = false;
  try {
    iterator = provider.stream(request, controller.signal)[Symbol.asyncIterator]();
    for (;;) {
      const next = await stop.race(iterator.next());
      if (next === ABORTED) return;
      if (next.done) {
        exhausted = true;
        return;
      }
      yield next.value;
    }
  } finally {
    stop.unlink(controller, exhausted);
    if (stop !== turn) stop.dispose();
    if (!exhausted) {
      controller.abort();
      // Not awaited: a wedged iterator may never settle, and the turn must not wait for it.
      const closing = iterator?.return?.();
      closing?.catch(() => undefined);
    }
  }
}
