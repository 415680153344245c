// The cache tiers as the read path writes them: memory at once, with a gzip copy
// made off the event loop, and Redis in the background, each entry expiring near
// the time its version is pruned. A read that began before a purge stores
// nothing: the answer it holds may be one the purge removed.
import { sharedKey } from '../cache/key.js';
import type { MemoryStore } from '../cache/memory.js';
import { ownedCopy, ownsItsBytes } from '../cache/owned.js';
import type { PruneClock } from '../ledger/prune-clock.js';
import type { NodeAnswer } from '../model/node-answer.js';
import { type StoredAnswer, storedAnswerWith } from '../model/read.js';
import { withGzip } from './compress.js';
import type { SharedStore } from './ports.js';

const WRITTEN: Promise<void> = Promise.resolve();

export interface CacheTiersDeps {
  /** synchronous, so a memory hit takes no async hop */
  memory: MemoryStore;
  /** Redis, when configured; `maxTtlSeconds` (cache.redis.maxTtlSeconds) caps every TTL there */
  shared?: { store: SharedStore; maxTtlSeconds: number };
  /** when a version is pruned: a Redis entry expires near then */
  pruneClock: PruneClock;
}

/** An answer to store, and where. */
export interface TierEntry {
  /** the cache key text */
  key: string;
  answer: StoredAnswer;
  /** the route family, which Redis indexes the entry by for purges */
  family: string;
  /** `purges` when the read began: a purge since stores nothing */
  since: number;
  /** the key's shared-store key, when the caller has it already */
  shared?: string;
}

export class CacheTiers {
  #purges = 0;
  /** synchronous, so a memory hit takes no async hop */
  readonly memory: MemoryStore;

  constructor(private readonly deps: CacheTiersDeps) {
    this.memory = deps.memory;
  }

  /** Is there a shared tier (Redis) to look in? */
  get hasShared(): boolean {
    return this.deps.shared !== undefined;
  }

  /** The shared tier's answer for a key text; undefined on a miss, without Redis, or while it is away. */
  async fromShared(key: string): Promise<StoredAnswer | undefined> {
    const redis = this.deps.shared;
    if (redis === undefined) return undefined;
    const redisKey = sharedKey(key);
    if (!redis.store.isHealthy(redisKey)) return undefined;
    return (await redis.store.get(redisKey)) as StoredAnswer | undefined;
  }

  /** Purges so far: a read takes it when it starts, and gives it back to remember() and store(). */
  get purges(): number {
    return this.#purges;
  }

  /** Counts a purge as it begins: reads in flight store nothing. */
  countPurge(): void {
    this.#purges++;
  }

  /**
   * Puts an answer in the memory tier, then (off the event loop) a gzip copy of
   * its body beside it, for clients that accept it: compressed once, never on a
   * hit. `answer` is a node's, or an entry whose check passed: the copy is made
   * from those very bytes. `since`: `purges` when the read began.
   */
  remember(key: string, given: StoredAnswer, since: number): void {
    if (since !== this.#purges) return;
    const memory = this.memory;
    // The tier counts the body's length: it must not be a view that keeps more alive.
    const answer = ownsItsBytes(given.body) ? given : storedAnswerWith(given, ownedCopy(given.body), given.gzip);
    memory.set(key, answer);
    // An answer the tier did not keep (larger than its share) is not compressed either.
    if (memory.get(key) !== answer) return;
    void withGzip(answer).then(
      (compressed) => {
        // Only if the entry is still the one compressed (not evicted or replaced).
        if (compressed !== undefined && memory.get(key) === answer) memory.set(key, compressed);
      },
      () => undefined,
    );
  }

  /**
   * Stores in memory at once and in Redis in the background: a reply never waits
   * for the shared write. The returned promise settles when Redis has it (or failed);
   * undefined when nothing is stored, since a purge began after the read did.
   */
  store(entry: TierEntry): Promise<void> | undefined {
    const { key, answer, family, since, shared } = entry;
    if (since !== this.#purges) return undefined;
    this.remember(key, answer, since);
    const redis = this.deps.shared;
    if (redis === undefined) return WRITTEN;
    const redisKey = shared ?? sharedKey(key);
    if (!redis.store.isHealthy(redisKey)) return WRITTEN;
    return Promise.resolve(
      redis.store.set(
        redisKey,
        answer,
        this.deps.pruneClock.secondsUntilPruned(answer.version, redis.maxTtlSeconds),
        family,
      ),
    );
  }
}

/** A node's answer as it is stored, at the version it belongs to. */
export function storedAnswer(answer: NodeAnswer, version: bigint): StoredAnswer {
  const stored: StoredAnswer = {
    status: answer.status,
    contentType: answer.contentType,
    body: answer.body,
    gasUsed: answer.gasUsed,
    version,
  };
  if (answer.cursor !== undefined) stored.cursor = answer.cursor;
  return stored;
}
