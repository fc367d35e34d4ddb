// A streamed answer's text and compact-mode steps, paced together (answer-stream.ts): one
// coalescer keeps the order and the interval for both, so a step leaves with the text it came
// after and never overtakes it. Each step travels as a mark in the coalesced text and is put
// back, between the texts it came between, when a flush hands the chunk on.
import { DeltaCoalescer } from '../shared/index.js';
import type { ProgressStep } from '../shared/thread-surface.js';
import type { Outgoing } from './stream-pieces.js';

/** A noncharacter, taken out of the model's text (it never belongs there). */
const STEP_MARK = '\uFFFF';

/** The text with any step mark taken out. */
export function withoutStepMarks(text: string): string {
  return text.includes(STEP_MARK) ? text.split(STEP_MARK).join('') : text;
}

export interface OutgoingCoalescerOptions {
  /** Send text and steps, in order. Never called twice at once. */
  flush: (items: Outgoing[]) => Promise<void>;
  /** The least time between the starts of two flushes. */
  minIntervalMs: number;
}

export class OutgoingCoalescer {
  private readonly coalescer: DeltaCoalescer;
  /** Steps whose marks are still in the coalescer, in order, and the same by id (a newer state of a step replaces its waiting one). */
  private readonly marked: { step: ProgressStep }[] = [];
  private readonly markedById = new Map<string, { step: ProgressStep }>();

  constructor(options: OutgoingCoalescerOptions) {
    this.coalescer = new DeltaCoalescer({
      flush: (chunk) => options.flush(this.unmark(chunk)),
      minIntervalMs: options.minIntervalMs,
    });
  }

  get closed(): boolean {
    return this.coalescer.closed;
  }

  push(text: string): void {
    this.coalescer.push(withoutStepMarks(text));
  }

  /** A step, new or changed: it goes out after the text pushed before it. A step still waiting is replaced in place (one update, not two). */
  step(step: ProgressStep): void {
    const waiting = this.markedById.get(step.id);
    if (waiting) {
      waiting.step = waiting.step.details && !step.details ? { ...step, details: waiting.step.details } : step;
      return;
    }
    const entry = { step };
    this.marked.push(entry);
    this.markedById.set(step.id, entry);
    this.coalescer.push(STEP_MARK);
  }

  /** Flush what waits, then take nothing more. */
  close(): Promise<void> {
    return this.coalescer.close();
  }

  /** The coalesced chunk as text and steps: each mark is the next marked step. */
  private unmark(chunk: string): Outgoing[] {
    const out: Outgoing[] = [];
    chunk.split(STEP_MARK).forEach((text, i) => {
      if (i > 0) {
        const entry = this.marked.shift();
        if (entry) {
          this.markedById.delete(entry.step.id);
          out.push({ step: entry.step });
        }
      }
      if (text) out.push({ text });
    });
    return out;
  }
}
