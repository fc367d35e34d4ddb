// Reads /metrics the way a scraper would: over HTTP, parsed by a Prometheus text-format
// parser (prom2javascript: counters, gauges, and histograms with their labels, buckets, count
// and sum), checked with zod, then looked up by family name and labels.
import { getMetricsFromIterator } from 'prom2javascript';
import { z } from 'zod';

const Sample = z.object({
  labels: z.record(z.string(), z.string()),
  value: z.number().optional(),
  buckets: z.record(z.string(), z.number()).optional(),
  count: z.number().optional(),
  sum: z.number().optional(),
});
const Families = z.record(z.string(), z.object({ type: z.string(), help: z.string(), data: z.array(Sample) }));
export type Sample = z.infer<typeof Sample>;
export interface Family {
  name: string;
  type: string;
  help: string;
  metrics: Sample[];
}

export class Scrape {
  constructor(readonly families: Family[]) {}

  family(name: string): Family {
    const found = this.families.find((family) => family.name === name);
    if (!found) throw new Error(`no ${name} in /metrics; families: ${this.families.map((f) => f.name).join(', ')}`);
    return found;
  }

  /** The samples of a family whose labels include `labels`. */
  samples(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.family(name).metrics.filter((sample) =>
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  }

  /** A counter's or gauge's value summed over the matching samples (0 when none match). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.samples(name, labels).reduce((total, sample) => total + Number(sample.value ?? 0), 0);
  }

  /** A histogram's observation count summed over the matching samples. */
  count(name: string, labels: Record<string, string> = {}): number {
    return this.samples(name, labels).reduce((total, sample) => total + Number(sample.count ?? 0), 0);
  }

  /** Every label value of every family, as `family{label}` → the values seen. */
  labelValues(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const family of this.families) {
      for (const sample of family.metrics) {
        for (const [label, value] of Object.entries(sample.labels)) {
          const key = `${family.name}{${label}}`;
          if (!out.has(key)) out.set(key, new Set());
          out.get(key)!.add(value);
        }
      }
    }
    return out;
  }
}

export async function parseMetrics(text: string): Promise<Scrape> {
  const parsed = Families.parse(await getMetricsFromIterator(text.split('\n')[Symbol.iterator]()));
  return new Scrape(
    Object.entries(parsed).map(([name, family]) => ({
      name,
      type: family.type,
      help: family.help,
      metrics: family.data,
    })),
  );
}

/** GET the metrics page; throws on anything but a 200 in Prometheus text format. */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${text}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain; version=0.0.4')) throw new Error(`GET ${url}: content-type ${type}`);
  return parseMetrics(text);
}
