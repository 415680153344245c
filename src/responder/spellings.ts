// Parsed requests by their exact spelling (read-parser.ts): two generations of
// Map, an approximate LRU that costs a hit one Map lookup (lru-cache's get, with
// its bookkeeping, is most of what a second lookup per hit costs: bench scenario 1,
// memory hits, or bench/ab.mjs against a build that uses it). A spelling
// found in the old generation moves to the young one; when the young one is full
// (half the entries or half the bytes), it becomes the old one and the old one is
// dropped. So at most maxEntries spellings and about maxBytes are held.
import type { ReadRequest } from '../model/read.js';

export class Spellings {
  private young = new Map<string, ReadRequest>();
  private old = new Map<string, ReadRequest>();
  private youngBytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    /** the bytes a spelling and its parsed request hold */
    private readonly sizeOf: (read: ReadRequest, spelling: string) => number,
  ) {}

  get(spelling: string): ReadRequest | undefined {
    const read = this.young.get(spelling);
    if (read !== undefined) return read;
    const aged = this.old.get(spelling);
    if (aged !== undefined) {
      this.old.delete(spelling);
      this.set(spelling, aged);
    }
    return aged;
  }

  set(spelling: string, read: ReadRequest): void {
    this.young.set(spelling, read);
    this.youngBytes += this.sizeOf(read, spelling);
    if (this.young.size >= this.maxEntries / 2 || this.youngBytes >= this.maxBytes / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngBytes = 0;
    }
  }

  /** spellings held, for tests */
  get size(): number {
    return this.young.size + this.old.size;
  }
}
