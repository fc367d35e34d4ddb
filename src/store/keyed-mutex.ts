// Serialises async work per key inside this process: the second resolve of an inbox item
// waits for the first and then sees it resolved. Across processes this is the coordination
// seam's job (a Redis implementation would use an atomic claim instead).
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Whether work holds (or waits for) the key now. */
  isHeld(key: string): boolean {
    return this.tails.has(key);
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(work, work);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
