// Counters and histograms for the events of every model↔tool iteration (model-call duration,
// time to first token, tokens, tool calls), rendered by the same prom-client Registry as the
// rest. Why not prom-client's own Counter and Histogram there: each of their `inc`/`observe`
// calls validates the labels and hashes them into a key (its `labels()` child does the same
// again per call), about half a microsecond each; on the engine's fastest path (an instant
// model and a no-op tool) that alone put metrics-on about 5-10 % over metrics-off. Here a
// series is resolved once (`series(labels)`, cached by the caller) and an observation is a
// few additions on it.
//
// They hand the Registry what prom-client's own types hand it from `get()` (name, help, type,
// and values with labels, `metricName` for a histogram's _bucket/_sum/_count lines), so the
// exposition (escaping, ordering, content type) is prom-client's.
import type { Metric, MetricValueWithName, Registry } from 'prom-client';

type Labels = Record<string, string>;

export interface CounterSeries {
  inc(by?: number): void;
}

export interface HistogramSeries {
  observe(value: number): void;
}

abstract class HotFamily<S> {
  protected readonly children = new Map<string, { labels: Labels; series: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // The Registry reads name, help, type and get() (see the header); the cast is the type's
    // nominal class standing in for that protocol.
    registry.registerMetric(this as unknown as Metric);
  }

  abstract readonly type: 'counter' | 'histogram';

  /** The series for these labels (the same object for the same labels). Cache it: this hashes. */
  series(labels: Labels): S {
    const key = keyOf(labels);
    let child = this.children.get(key);
    if (!child) {
      child = { labels: { ...labels }, series: this.create() };
      this.children.set(key, child);
    }
    return child.series;
  }

  protected abstract create(): S;
}

export class HotCounter extends HotFamily<CounterSeries & { value: number }> {
  readonly type = 'counter';

  protected create(): CounterSeries & { value: number } {
    return {
      value: 0,
      inc(by = 1) {
        if (by > 0 && Number.isFinite(by)) this.value += by;
      },
    };
  }

  get(): Promise<{ name: string; help: string; type: string; values: MetricValueWithName<string>[] }> {
    // Like prom-client's: a series shows once it has counted something.
    const values = [...this.children.values()]
      .filter(({ series }) => series.value > 0)
      .map(({ labels, series }) => ({ labels, value: series.value }));
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values });
  }
}

interface HistogramState extends HistogramSeries {
  /** Per bucket, not cumulative; the last is +Inf. */
  counts: number[];
  sum: number;
  count: number;
}

export class HotHistogram extends HotFamily<HistogramState> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, registry);
  }

  protected create(): HistogramState {
    const bounds = this.buckets;
    return {
      counts: new Array<number>(bounds.length + 1).fill(0),
      sum: 0,
      count: 0,
      observe(value) {
        if (!Number.isFinite(value)) return;
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        this.counts[i]!++;
        this.sum += value;
        this.count++;
      },
    };
  }

  get(): Promise<{ name: string; help: string; type: string; values: MetricValueWithName<string>[] }> {
    const values: MetricValueWithName<string>[] = [];
    for (const { labels, series } of this.children.values()) {
      if (series.count === 0) continue; // resolved ahead, never observed
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += series.counts[i]!;
        const le = i < this.buckets.length ? String(this.buckets[i]) : '+Inf';
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: series.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values });
  }
}

function keyOf(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((name) => `${name}\u0000${labels[name]}`)
    .join('\u0001');
}
