// The in-process tier: a byte-bounded LRU. get/set/delete are synchronous so a
// memory hit costs no extra async hop.
import { LRUCache } from 'lru-cache';
import type { StoredAnswer } from '../model/read.js';
import type { AnswerStore } from './store.js';

/**
 * Bytes charged per entry on top of its key, content type and body: the answer
 * object, the Buffer object and its own ArrayBuffer with the native record behind
 * it (about 250 bytes outside V8's heap, in malloc), the bigint, the strings'
 * headers, and lru-cache's per-slot bookkeeping (key map entry, key/value/prev/
 * next/size array slots). Measured, not guessed: V8 heap used plus the process's
 * memory outside V8's heap, after GC, per entry kept (100,000 entries with bodies
 * of 8 B to 4.6 KiB: 400 to 580 bytes beyond the lengths), so maxBytes bounds
 * real memory, and many tiny entries (e.g. 404 bodies) cannot escape it.
 */
export const ENTRY_OVERHEAD_BYTES = 600;

/**
 * Bytes charged for a gzip copy beyond its length: its Buffer object and its own
 * ArrayBuffer with their native record, and the entry's larger answer object.
 * Measured as ENTRY_OVERHEAD_BYTES is, per entry with a copy against one without
 * (about 630 bytes).
 */
export const GZIP_COPY_OVERHEAD_BYTES = 640;

/** The bytes an entry is charged against maxBytes. String lengths stand in for their size. */
export function entrySize(key: string, answer: StoredAnswer): number {
  const gzip = answer.gzip === undefined ? 0 : GZIP_COPY_OVERHEAD_BYTES + answer.gzip.length;
  return (
    ENTRY_OVERHEAD_BYTES +
    key.length +
    answer.contentType.length +
    (answer.gasUsed?.length ?? 0) +
    (answer.cursor?.length ?? 0) +
    answer.body.length +
    gzip
  );
}

export interface MemoryStoreOptions {
  /** Upper bound of the summed entrySize() of all entries. Must be a positive finite number. */
  maxBytes: number;
}

/**
 * ttlSeconds is ignored: entries are pinned answers, immutable while N is not
 * pruned, and serve/ answers 410 for a pruned N before it looks in any tier, so
 * the byte bound (LRU eviction) is the only limit needed here.
 *
 * Stored answers are shared with callers, not copied: do not mutate a returned body.
 */
export class MemoryStore implements AnswerStore {
  readonly tier = 'memory' as const;
  readonly #cache: LRUCache<string, StoredAnswer>;

  constructor(options: MemoryStoreOptions) {
    const { maxBytes } = options;
    // lru-cache would accept some of these and then never bound anything.
    if (!Number.isFinite(maxBytes) || maxBytes <= 0) {
      throw new RangeError(`cache.memory.maxBytes must be a positive finite number, got ${maxBytes}`);
    }
    this.#cache = new LRUCache<string, StoredAnswer>({
      maxSize: Math.floor(maxBytes) || 1,
      // An entry larger than maxSize (the default maxEntrySize) is not stored.
      sizeCalculation: (answer, key) => entrySize(key, answer),
    });
  }

  get(key: string): StoredAnswer | undefined {
    return this.#cache.get(key);
  }

  set(key: string, answer: StoredAnswer, _ttlSeconds?: number): void {
    this.#cache.set(key, answer);
  }

  delete(key: string): void {
    this.#cache.delete(key);
  }

  /**
   * Drops the entries `matches` picks, or every entry without it; returns how
   * many. A purge: one pass over the entries, off the read path.
   */
  purge(matches?: (key: string, answer: StoredAnswer) => boolean): number {
    const cache = this.#cache;
    if (matches === undefined) {
      const dropped = cache.size;
      cache.clear();
      return dropped;
    }
    const doomed: string[] = [];
    for (const [key, answer] of cache.entries()) if (matches(key, answer)) doomed.push(key);
    for (const key of doomed) cache.delete(key);
    return doomed.length;
  }

  stats(): { entries: number; bytes: number } {
    return { entries: this.#cache.size, bytes: this.#cache.calculatedSize };
  }

  async close(): Promise<void> {
    this.#cache.clear();
  }
}
