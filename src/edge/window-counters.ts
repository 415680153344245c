// Counts per key in fixed windows aligned to the clock (a second, a minute), the
// way every limit of the edge is counted. Counting is synchronous: a request
// never waits for Redis. With a Redis client, every instance also adds its counts
// to a shared counter per key and window, and reads the shared total back, so
// instances and workers share one limit; a key's counts are added together (one
// INCRBY per key at most every SHARE_EVERY_MS), and a Redis outage counts nothing
// there (fail open).
import { sha256Hex } from '../config/index.js';

/** How long an instance's counts may wait to be added to the shared counters: the lag of a shared limit. */
const SHARE_EVERY_MS = 100;

/**
 * What the shared counters need of a store: two Redis commands, which the
 * cache's Redis client (cache/redis/client.ts, a single node or a Cluster) has.
 */
export interface SharedCounterStore {
  /** INCRBY: adds `amount` to the counter at `key`, and resolves to its total */
  incrby(key: string, amount: number): Promise<number>;
  /** PEXPIRE: the counter at `key` expires in `ms` */
  pexpire(key: string, ms: number): Promise<unknown>;
}

export interface WindowCountersSettings {
  windowMs: number;
  /** prefix of the shared counters' keys (cache.redis.keyPrefix and the limit's name) */
  keyPrefix: string;
  /** a store for shared counters; absent = counted in this process */
  redis?: SharedCounterStore;
  now?: () => number;
}

export class WindowCounters {
  private window = -1;
  private readonly counts = new Map<string, number>();
  /** per key, the shared total Redis last reported for this window */
  private readonly shared = new Map<string, number>();
  /** per key, counts of this window not added to the shared counter yet */
  private readonly unshared = new Map<string, number>();
  /** per key, its shared counter's key without the window (a sha256 each, made once) */
  private readonly sharedKeys = new Map<string, string>();
  private shareTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly settings: WindowCountersSettings) {
    this.now = settings.now ?? Date.now;
  }

  /** Adds `amount` to `key`'s count in this window; the total, as far as this instance knows it. */
  add(key: string, amount: number): number {
    this.turn();
    const count = (this.counts.get(key) ?? 0) + amount;
    this.counts.set(key, count);
    if (this.settings.redis !== undefined && amount > 0) {
      this.unshared.set(key, (this.unshared.get(key) ?? 0) + amount);
      this.shareTimer ??= setTimeout(() => this.share(), SHARE_EVERY_MS).unref();
    }
    return Math.max(count, this.shared.get(key) ?? 0);
  }

  /** `key`'s total in this window, as far as this instance knows it. */
  total(key: string): number {
    this.turn();
    return Math.max(this.counts.get(key) ?? 0, this.shared.get(key) ?? 0);
  }

  /** Milliseconds until this window ends and the counts start again. */
  msUntilReset(): number {
    const { windowMs } = this.settings;
    return windowMs - (this.now() % windowMs);
  }

  get windowMs(): number {
    return this.settings.windowMs;
  }

  private turn(): void {
    const window = Math.floor(this.now() / this.settings.windowMs);
    if (window === this.window) return;
    // The last window's counts still count there.
    this.share();
    this.window = window;
    this.counts.clear();
    this.shared.clear();
    this.sharedKeys.clear();
  }

  /**
   * Adds this window's counts not shared yet to each key's shared counter, and
   * learns the totals. Called every SHARE_EVERY_MS while counts come, at a
   * window's end, and at shutdown.
   */
  share(): void {
    clearTimeout(this.shareTimer);
    this.shareTimer = undefined;
    const redis = this.settings.redis;
    if (redis === undefined) return;
    const window = this.window;
    for (const [key, added] of this.unshared) {
      const sharedKey = `${this.sharedKey(key)}:${window}`;
      redis.incrby(sharedKey, added).then(
        (total) => {
          // This instance made the counter: it expires after its window.
          if (total === added) redis.pexpire(sharedKey, this.settings.windowMs * 2).catch(() => undefined);
          if (this.window === window && total > (this.shared.get(key) ?? 0)) this.shared.set(key, total);
        },
        () => undefined,
      );
    }
    this.unshared.clear();
  }

  private sharedKey(key: string): string {
    let shared = this.sharedKeys.get(key);
    if (shared === undefined) {
      // Hashed: a key holds a client address, which with trustProxy is client-sent text, and must not become a raw Redis key.
      shared = `${this.settings.keyPrefix}${sha256Hex(key)}`;
      this.sharedKeys.set(key, shared);
    }
    return shared;
  }
}
