// A binary min-heap of (instant, id) pairs: the scheduler's queue of what is due next, so
// thousands of schedules share one timer set for the earliest of them. Entries are never
// removed from the middle; the scheduler drops the ones that no longer match its own record
// of the schedule when they come to the top (a lazy delete), which keeps every change
// O(log n).
export interface DueItem {
  at: number;
  id: string;
  /** Which version of the schedule's place in the queue this is (stale ones are skipped). */
  seq: number;
}

export class DueHeap {
  private readonly items: DueItem[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): DueItem | undefined {
    return this.items[0];
  }

  push(item: DueItem): void {
    const items = this.items;
    items.push(item);
    let child = items.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (items[parent]!.at <= item.at) break;
      items[child] = items[parent]!;
      child = parent;
    }
    items[child] = item;
  }

  pop(): DueItem | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const smaller = right < items.length && items[right]!.at < items[left]!.at ? right : left;
      if (items[smaller]!.at >= last.at) break;
      items[parent] = items[smaller]!;
      parent = smaller;
    }
    items[parent] = last;
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}
