// Neither SDK notices a stream that goes quiet: their timeouts cover only the wait for
// response headers, and once the body is streaming a wedged connection hangs forever
// (measured; platform-and-sdk-facts.md section 4). This idle watchdog restarts a timer on
// every chunk; when it fires it aborts the request and the stream ends with a clear
// "provider stalled" error instead of a hang.
import { ProviderError } from '../engine/index.js';

export const DEFAULT_STALL_TIMEOUT_MS = 60_000;

export interface StallWatchdog {
  /** Call on every chunk received. */
  touch(): void;
  /** Whether the watchdog fired (the abort was ours, not the caller's). */
  readonly fired: boolean;
  /** The error to throw once it fired. */
  error(): ProviderError;
  stop(): void;
}

export function startStallWatchdog(timeoutMs: number, abort: () => void, vendor: string): StallWatchdog {
  let fired = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      fired = true;
      abort();
    }, timeoutMs);
  };
  arm();
  return {
    touch: arm,
    get fired() {
      return fired;
    },
    error: () =>
      new ProviderError(
        'stalled',
        `${vendor} stopped sending data for ${formatDuration(timeoutMs)}, so the call was abandoned. Try again.`,
      ),
    stop: () => clearTimeout(timer),
  };
}

function formatDuration(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}
