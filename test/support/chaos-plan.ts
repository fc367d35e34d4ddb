// The seeded part of the restart chaos test: from a seed alone, how the fake model groups
// the steps into answers and the moment(s) the bot is killed. Everything random in a run
// comes from here, so a failing run is reproduced by its seed (CHAOS_SEEDS=<seed>); what
// stays unseeded is the scheduling of two processes, which is the point of the test.
import { mulberry32 } from './seeded-random.js';

/** Where a SIGKILL lands. */
type KillPhase =
  /** While the model streams an answer: the k-th request of the life, `delayMs` into its stream. */
  | 'stream'
  /** While an approval card waits: the k-th new Approve button of the life, before anyone clicks it. */
  | 'card'
  /** Just after a click: `delayMs` after the k-th click of the life was sent. */
  | 'click'
  /** Mid-command: `delayMs` after the k-th step of the life wrote its line (the command then sleeps 300 ms). */
  | 'command'
  /** Between calls: `delayMs` after the k-th step of the life is seen finished (its card shows Done, or the model gets its result). */
  | 'between';

const KILL_PHASES: readonly KillPhase[] = ['stream', 'card', 'click', 'command', 'between'];

export interface KillMoment {
  phase: KillPhase;
  /** Which occurrence in the life (1-based). */
  nth: number;
  delayMs: number;
}

export interface ChaosPlan {
  seed: number;
  /**
   * How many steps have been asked for once each model answer's group of calls is out:
   * `[1, 3, 4, 6]` is one call, then two in one answer, one, two.
   */
  groupEnds: number[];
  /** The first life's kill, and on some seeds a second one in the life after it. */
  kills: KillMoment[];
}

/** Delays that put the kill inside the window its phase names (a stream lasts ≥ 150 ms, a command 300 ms). */
const DELAY_RANGE: Record<KillPhase, [number, number]> = {
  stream: [5, 140],
  card: [0, 30],
  click: [0, 40],
  command: [0, 250],
  between: [0, 15],
};

/**
 * The plan for `seed`. The first kill's phase rotates with the seed (seeds 1–5 cover the five
 * phases), so any five consecutive seeds cover them all; the rest is drawn from the seed.
 */
export function chaosPlan(seed: number, steps: number): ChaosPlan {
  const random = mulberry32(seed);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const groupEnds: number[] = [];
  for (let issued = 0; issued < steps;) {
    issued = Math.min(steps, issued + (random() < 0.5 ? 1 : 2));
    groupEnds.push(issued);
  }
  const moment = (phase: KillPhase, maxNth: number): KillMoment => {
    const [low, high] = DELAY_RANGE[phase];
    return { phase, nth: between(1, maxNth), delayMs: between(low, high) };
  };
  // Every phase happens at least this often in an uninterrupted life: one request per
  // group plus the final answer; one card, click, command and Done per step.
  const occurrences = (phase: KillPhase) => (phase === 'stream' ? groupEnds.length + 1 : steps);
  const firstPhase = KILL_PHASES[(seed - 1) % KILL_PHASES.length]!;
  const kills = [moment(firstPhase, occurrences(firstPhase))];
  if (random() < 0.4) {
    // The second life may have little left to do: aim at its first occurrence of a phase.
    const phase = KILL_PHASES[between(0, KILL_PHASES.length - 1)]!;
    kills.push(moment(phase, 1));
  }
  return { seed, groupEnds, kills };
}

export function describePlan(plan: ChaosPlan): string {
  return plan.kills.map((kill) => `${kill.phase} #${kill.nth} +${kill.delayMs}ms`).join(', then ');
}

/** `"1-24"`, `"1,5,9"`, `"3-5,40"` → the seeds; empty or unset → `fallback`. */
export function parseSeeds(text: string | undefined, fallback: readonly number[]): number[] {
  if (!text?.trim()) return [...fallback];
  const seeds: number[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const range = /^(\d+)\s*-\s*(\d+)$/.exec(part);
    if (range) {
      for (let seed = Number(range[1]); seed <= Number(range[2]); seed++) seeds.push(seed);
    } else if (/^\d+$/.test(part)) {
      seeds.push(Number(part));
    } else {
      throw new Error(`CHAOS_SEEDS: "${part}" is neither a seed nor a range (e.g. 1-24 or 1,5,9)`);
    }
  }
  return seeds;
}
