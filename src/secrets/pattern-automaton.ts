// One pass over a text finds every search string at once (Aho-Corasick): the masker has
// a dozen forms per secret, and a tool result or a stream chunk is read once whatever their
// number, instead of once per form. Built when the secrets change (rarely), read for every
// text that leaves.
//
// What a pass reports is what masking needs and no more: at each position, the longest
// search string that ends there (a shorter one ending there lies inside it), and at the end,
// how many trailing characters could still be the start of one (a stream holds those back).

export interface Pattern {
  text: string;
  /**
   * The shortest start of `text` that counts as found (default: all of it). A secret's own
   * value is found from its first FRAGMENT characters on: a piece of it at the end of one
   * result, the rest in the next.
   */
  foundFrom?: number;
}

export interface PassResult {
  /** [start, end) of the longest match ending at each position that has one, in end order. */
  matches: [number, number][];
  /** How many of the text's last characters are the start of some search string. */
  openDepth: number;
}

export class PatternAutomaton {
  /** Edges: key `node * 65536 + code unit`. One map for the whole trie: fewer objects than one per node. */
  private readonly edges = new Map<number, number>();
  private readonly depth: number[] = [0];
  private readonly fail: number[] = [0];
  /** The longest search string that ends at this node, itself or by its failure chain (0: none). */
  private readonly longest: number[] = [0];
  readonly size: number;

  constructor(patterns: Iterable<Pattern>) {
    const found: boolean[] = [false];
    let count = 0;
    for (const pattern of patterns) {
      if (pattern.text.length === 0) continue;
      count++;
      let node = 0;
      for (let i = 0; i < pattern.text.length; i++) {
        const key = node * 65536 + pattern.text.charCodeAt(i);
        let next = this.edges.get(key);
        if (next === undefined) {
          next = this.depth.length;
          this.edges.set(key, next);
          this.depth.push(i + 1);
          this.fail.push(0);
          this.longest.push(0);
          found.push(false);
        }
        node = next;
      }
      const from = Math.min(pattern.text.length, pattern.foundFrom ?? pattern.text.length);
      // Every node along the path from depth `from` on ends a search string.
      let walk = 0;
      for (let i = 0; i < pattern.text.length; i++) {
        walk = this.edges.get(walk * 65536 + pattern.text.charCodeAt(i))!;
        if (i + 1 >= from) found[walk] = true;
      }
    }
    this.size = count;
    this.link(found);
  }

  /** Breadth first: each node's failure link and longest match, from its parent's. */
  private link(found: boolean[]): void {
    const children = new Map<number, [number, number][]>();
    for (const [key, child] of this.edges) {
      const parent = Math.floor(key / 65536);
      const list = children.get(parent) ?? [];
      list.push([key - parent * 65536, child]);
      children.set(parent, list);
    }
    const queue: number[] = [0];
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]!;
      for (const [code, child] of children.get(node) ?? []) {
        this.fail[child] = node === 0 ? 0 : this.step(this.fail[node]!, code);
        this.longest[child] = found[child] ? this.depth[child]! : this.longest[this.fail[child]!]!;
        queue.push(child);
      }
    }
  }

  private step(node: number, code: number): number {
    for (;;) {
      const next = this.edges.get(node * 65536 + code);
      if (next !== undefined) return next;
      if (node === 0) return 0;
      node = this.fail[node]!;
    }
  }

  /** One pass over `text` (or, with `reversed`, over it from its end to its start). */
  run(text: string, reversed = false): PassResult {
    const matches: [number, number][] = [];
    let node = 0;
    const length = text.length;
    for (let i = 0; i < length; i++) {
      const at = reversed ? length - 1 - i : i;
      node = this.step(node, text.charCodeAt(at));
      const found = this.longest[node]!;
      if (found > 0) matches.push(reversed ? [at, at + found] : [at + 1 - found, at + 1]);
    }
    return { matches, openDepth: this.depth[node]! };
  }
}
