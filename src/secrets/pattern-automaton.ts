// One pass over a text finds every search string at once (Aho-Corasick): the masker has
// a dozen forms per secret, and a tool result or a stream chunk is read once whatever their
// number, instead of once per form. Built when the secrets change (rarely), read for every
// text that leaves.
//
// What a pass reports is what masking needs and no more: at each position, the longest
// search string that ends there (a shorter one ending there lies inside it), and at the end,
// how many trailing characters could still be the start of one (a stream holds those back).
//
// Laid out for the common case, ordinary text that matches nothing: the root's edges are one
// table indexed by character, and most other nodes have a single edge, kept in two arrays.

export interface Pattern {
  text: string;
  /**
   * The shortest start of `text` that counts as found (default: all of it). A secret's own
   * value is found from its first FRAGMENT_LENGTH characters on: a piece of it at the end of
   * one result, the rest in the next.
   */
  foundFrom?: number;
  /**
   * How many of its first characters at a text's end make a stream hold that end back
   * (default: 1, any). See `openDepth`.
   */
  holdFrom?: number;
}

export interface PassResult {
  /** [start, end) of the longest match ending at each position that has one, in end order. */
  matches: [number, number][];
  /**
   * How many of the text's last characters are the start of some search string, at least
   * that string's `holdFrom` of them (0: none).
   */
  openDepth: number;
}

const NONE = -1;

export class PatternAutomaton {
  /** The root's edge for each UTF-16 code unit (0: back to the root). */
  private readonly rootNext = new Int32Array(65536);
  /** A node with one edge: its character and target (NONE: no single edge). */
  private readonly onlyCode: Int32Array;
  private readonly onlyNext: Int32Array;
  /** A node with several edges. */
  private readonly branches = new Map<number, Map<number, number>>();
  private readonly depth: Int32Array;
  private readonly fail: Int32Array;
  /** The longest search string that ends at this node, itself or by its failure chain (0: none). */
  private readonly longest: Int32Array;
  /** 1: a text ending at this node is held back by a stream (see Pattern.holdFrom). */
  private readonly holdable: Uint8Array;
  readonly size: number;

  constructor(patterns: Iterable<Pattern>) {
    const children: Map<number, number>[] = [new Map<number, number>()];
    const depth: number[] = [0];
    const found: boolean[] = [false];
    const holdable: number[] = [0];
    const texts = new Set<string>();
    for (const pattern of patterns) {
      if (pattern.text.length === 0) continue;
      texts.add(pattern.text);
      const from = Math.min(pattern.text.length, pattern.foundFrom ?? pattern.text.length);
      let node = 0;
      for (let i = 0; i < pattern.text.length; i++) {
        const code = pattern.text.charCodeAt(i);
        let next = children[node]!.get(code);
        if (next === undefined) {
          next = children.length;
          children[node]!.set(code, next);
          children.push(new Map<number, number>());
          depth.push(i + 1);
          found.push(false);
          holdable.push(0);
        }
        node = next;
        // Every node along the path from depth `from` on ends a search string.
        if (i + 1 >= from) found[node] = true;
        if (i + 1 >= (pattern.holdFrom ?? 1)) holdable[node] = 1;
      }
    }
    this.size = texts.size;
    const count = children.length;
    this.onlyCode = new Int32Array(count).fill(NONE);
    this.onlyNext = new Int32Array(count);
    this.depth = Int32Array.from(depth);
    this.fail = new Int32Array(count);
    this.longest = new Int32Array(count);
    this.holdable = Uint8Array.from(holdable);
    for (const [code, child] of children[0]!) this.rootNext[code] = child;
    for (let node = 1; node < count; node++) {
      const edges = children[node]!;
      if (edges.size === 1) {
        for (const [code, child] of edges) {
          this.onlyCode[node] = code;
          this.onlyNext[node] = child;
        }
      } else if (edges.size > 1) {
        this.branches.set(node, edges);
      }
    }
    // Breadth first: each node's failure link and longest match, from its parent's.
    const queue: number[] = [0];
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]!;
      for (const [code, child] of children[node]!) {
        this.fail[child] = node === 0 ? 0 : this.step(this.fail[node]!, code);
        this.longest[child] = found[child] ? this.depth[child]! : this.longest[this.fail[child]]!;
        queue.push(child);
      }
    }
  }

  private step(node: number, code: number): number {
    for (;;) {
      if (node === 0) return this.rootNext[code]!;
      if (this.onlyCode[node] === code) return this.onlyNext[node]!;
      const next = this.branches.get(node)?.get(code);
      if (next !== undefined) return next;
      node = this.fail[node]!;
    }
  }

  /** One pass over `text` (or, with `reversed`, over it from its end to its start). */
  run(text: string, reversed = false): PassResult {
    const matches: [number, number][] = [];
    const length = text.length;
    let node = 0;
    for (let i = 0; i < length; i++) {
      const at = reversed ? length - 1 - i : i;
      node = this.step(node, text.charCodeAt(at));
      if (node === 0) continue;
      const found = this.longest[node]!;
      if (found > 0) matches.push(reversed ? [at, at + found] : [at + 1 - found, at + 1]);
    }
    // The longest open end worth holding: along the failure chain, depths only shrink.
    while (node !== 0 && this.holdable[node] === 0) node = this.fail[node]!;
    return { matches, openDepth: this.depth[node]! };
  }
}
