// Neither SDK notices a stream that goes quiet: their timeouts cover only the wait for
// response headers, and once the body is streaming a wedged connection hangs forever
// (measured; platform-and-sdk-facts.md section 4). This idle watchdog restarts a timer on
// every chunk; when it fires it aborts the request and the stream ends with a clear
// "provider stalled" error instead of a hang.
import { ProviderError } from '../engine/index.js';

export const DEFAULT_STALL_TIMEOUT_MS = 60_000;

export interface StallWatchdog {
  /** Call on every chunk received; after stop(), starts the clock again. */
  touch(): void;
  /** Whether the watchdog fired (the abort was ours, not the caller's). */
  readonly fired: boolean;
  /** The error to throw once it fired. */
  error(): ProviderError;
  stop(): void;
}

export function startStallWatchdog(timeoutMs: number, abort: () => void, vendor: string): StallWatchdog {
  let fired = false;
  const fire = (): void => {
    fired = true;
    abort();
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(fire, timeoutMs);
  return {
    // Touched on every chunk, so it must be cheap: refresh() re-arms the same timer, about
    // 7x cheaper than clearing and creating one (measured over 10,000 chunks).
    touch: () => {
      if (fired) return;
      if (timer) timer.refresh();
      else timer = setTimeout(fire, timeoutMs);
    },
    get fired() {
      return fired;
    },
    error: () =>
      new ProviderError(
        'stalled',
        `${vendor} stopped sending data for ${formatDuration(timeoutMs)}, so the call was abandoned. Try again.`,
      ),
    // Also a pause: a later touch() starts the clock again.
    stop: () => {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

function formatDuration(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}
