// Output caps: every tool answer fits a budget of characters, and says how much was cut.
//
// One idea: a cut is never silent. The model must know text is missing (so it narrows the
// request instead of concluding the file ends there), and where: shell output loses its
// middle (the command line and the final error are what matter), everything else loses
// its end (a listing or a file is read from the top).
import { thousands } from '../text/thousands.js';

export const DEFAULT_MAX_OUTPUT_CHARS = 20_000;

/** Room kept for the cut note, so the whole answer stays within the budget. */
const NOTE_RESERVE = 80;

export type TrimFrom = 'end' | 'middle';

/** `text` if it fits in `max` characters, else a trimmed copy with a note naming the cut. */
export function capOutput(text: string, max: number, trim: TrimFrom = 'end'): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, max - NOTE_RESERVE);
  if (trim === 'end') {
    const kept = text.slice(0, safeEnd(text, keep));
    return `${kept}\n[… ${formatCount(text.length - kept.length)} more characters cut]`;
  }
  const headLength = safeEnd(text, Math.ceil(keep / 2));
  const tailStart = safeStart(text, text.length - Math.floor(keep / 2));
  return joinMiddleCut(text.slice(0, headLength), text.slice(tailStart), tailStart - headLength);
}

/**
 * Collects a stream of text (a command's output) in bounded memory, keeping its head and
 * its tail. A command that prints gigabytes costs `max` characters plus one chunk, and the
 * result is the same as `capOutput(everything, max, 'middle')`.
 */
export class MiddleTrimmedText {
  private head = '';
  private tail = '';
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(private readonly max: number) {
    const keep = Math.max(0, max - NOTE_RESERVE);
    this.headLimit = Math.ceil(keep / 2);
    this.tailLimit = Math.floor(keep / 2);
  }

  append(text: string): void {
    this.total += text.length;
    const headRoom = this.headLimit - this.head.length;
    if (headRoom > 0) {
      this.head += text.slice(0, headRoom);
      text = text.slice(headRoom);
    }
    this.tail += text;
    // Trim only past `max`: while everything still fits, nothing may be lost. Trimming in
    // steps of at least `max` keeps the copying linear in the output size.
    if (this.tail.length > this.max + this.tailLimit) this.tail = this.tail.slice(this.tail.length - this.max);
  }

  get length(): number {
    return this.total;
  }

  toString(): string {
    const kept = this.head + this.tail;
    if (this.total <= this.max) return kept;
    const headLength = safeEnd(this.head, this.head.length);
    const tailStart = safeStart(this.tail, this.tail.length - this.tailLimit);
    const tail = this.tail.slice(tailStart);
    return joinMiddleCut(this.head.slice(0, headLength), tail, this.total - headLength - tail.length);
  }
}

function joinMiddleCut(head: string, tail: string, cut: number): string {
  return `${head}\n[… ${formatCount(cut)} characters cut from the middle …]\n${tail}`;
}

export function formatCount(count: number): string {
  return thousands(count);
}

/** An end index that does not split a surrogate pair (a lone half renders as garbage). */
function safeEnd(text: string, end: number): number {
  if (end <= 0) return 0;
  if (end >= text.length) return text.length;
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

function safeStart(text: string, start: number): number {
  if (start <= 0) return 0;
  if (start >= text.length) return text.length;
  const code = text.charCodeAt(start);
  return code >= 0xdc00 && code <= 0xdfff ? start + 1 : start;
}
