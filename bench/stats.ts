// Order statistics shared by the bench suites: median and nearest-rank percentiles over
// a sample of timings. Latency is reported as median and p99 (not mean): a stop button is
// judged by its worst common case, and a mean hides a long tail behind many fast trials.

/** Nearest-rank percentile (p in 0..100) of the samples; NaN for an empty sample. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Milliseconds since `start` (a `performance.now()` reading). */
export function elapsedSince(start: number): number {
  return performance.now() - start;
}
