// The contract between bench/run.ts and each suite: a suite measures, then hands back
// rows. Each row is one line of the printed table and, under its key, one number in
// bench/results.json. Suites report; they never fail on absolute times.

export interface BenchRow {
  /** Figure name in the table and key in results.json, e.g. `engine.overhead_ratio`. */
  key: string;
  value: number;
  unit: string;
  note: string;
}

export interface BenchSuite {
  name: string;
  run(): Promise<BenchRow[]>;
}
