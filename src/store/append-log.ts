// An append-only list in a key-value store: one key per entry plus a length key, so
// appending the 10,000th message costs what appending the 10th did (rewriting a whole
// transcript per message would make a long session quadratic).
//
// Each entry is written before the length. A crash in between leaves an entry past the
// recorded length; reading probes past the length and keeps such an entry, so nothing
// written is lost.
import type Keyv from 'keyv';

const READ_BATCH = 500;

export class AppendLog<T> {
  private length: number | undefined;

  constructor(
    private readonly keyv: Keyv,
    private readonly prefix: string,
  ) {}

  private key(index: number): string {
    return `${this.prefix}:${index}`;
  }

  private get lengthKey(): string {
    return `${this.prefix}:len`;
  }

  async size(): Promise<number> {
    if (this.length === undefined) {
      let length = (await this.keyv.get<number>(this.lengthKey)) ?? 0;
      while ((await this.keyv.get(this.key(length))) !== undefined) length++;
      this.length = length;
    }
    return this.length;
  }

  /** Append one entry; returns its index. Callers serialise appends per log (one owner). */
  async append(entry: T): Promise<number> {
    const index = await this.size();
    await this.keyv.set(this.key(index), entry);
    this.length = index + 1;
    await this.keyv.set(this.lengthKey, this.length);
    return index;
  }

  async readAll(): Promise<T[]> {
    const length = await this.size();
    const out: T[] = [];
    for (let start = 0; start < length; start += READ_BATCH) {
      const keys = Array.from({ length: Math.min(READ_BATCH, length - start) }, (_, i) => this.key(start + i));
      const values = await this.keyv.getMany<T>(keys);
      for (const value of values) if (value !== undefined) out.push(value);
    }
    return out;
  }

  async clear(): Promise<void> {
    const length = await this.size();
    const keys = Array.from({ length }, (_, i) => this.key(i));
    for (let start = 0; start < keys.length; start += READ_BATCH)
      await this.keyv.deleteMany(keys.slice(start, start + READ_BATCH));
    await this.keyv.delete(this.lengthKey);
    this.length = 0;
  }
}
