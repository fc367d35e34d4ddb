// The contract between bench/run.ts and each suite: a suite measures, then hands back
// rows. Each row is one line of the printed table and, under its key, one number in
// bench/results.json. Suites report; they never fail on absolute times (a goal is shown, not enforced).

export interface BenchRow {
  /** Figure name in the table and key in results.json, e.g. `engine.overhead_ratio`. */
  key: string;
  value: number;
  unit: string;
  note: string;
  /** The most this figure should be, when it has a goal: the table shows it beside the value, met or not (it never fails the run). */
  goal?: number;
}

export interface BenchSuite {
  name: string;
  run(): Promise<BenchRow[]>;
}
