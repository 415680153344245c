// The newest answer to each canonical latest read, with the snapshot it was read
// at, for bounded-staleness latest reads and stale-if-error (both off by default).
import { ENTRY_OVERHEAD_BYTES } from '../cache/memory.js';
import { keepsLatestAnswers } from '../config/memory-shares.js';
import { LRUCache } from 'lru-cache';
import type { LedgerInfo } from '../ledger/info.js';
import type { StoredAnswer } from '../model/read.js';

export interface StalenessSettings {
  /** serve an answer fetched at most this long ago (0 = off) */
  maxStalenessMs: number;
  /** serve an answer read at most this many versions behind the watermark (0 = off) */
  maxStalenessVersions: number;
  /** when the nodes fail, serve an answer fetched at most this long ago (0 = off) */
  staleIfErrorMs: number;
}

export interface LatestAnswer {
  answer: StoredAnswer;
  /** the answering node's snapshot: it says at which version the data was read */
  ledger: LedgerInfo;
  fetchedAt: number;
}

/**
 * The share of the bound after which a read of the key starts a background
 * refresh. At half the bound a hot key costs its node two calls per bound where
 * one would do (the wallet bench: node calls 1.05 × an oracle's with the same
 * window; 1.01 at 0.9). A refresh still in flight when the bound ends is joined
 * by the readers who find the entry expired, so it costs no second call.
 */
export const REFRESH_AT = 0.9;

/**
 * Bytes charged per latest answer beyond its body and key: what a memory-tier
 * entry holds, and the snapshot it was read at (an object of six bigints) with the
 * record around both. Measured as the tier's overhead is (memory.ts): about 850
 * bytes beyond the lengths.
 */
const LATEST_ANSWER_OVERHEAD_BYTES = ENTRY_OVERHEAD_BYTES + 250;

export class LatestAnswers {
  private readonly entries: LRUCache<string, LatestAnswer>;

  constructor(
    readonly settings: StalenessSettings,
    /** its share of cache.memory.maxBytes (config/memory-shares.ts) */
    maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (entry, key) => entry.answer.body.length + key.length + LATEST_ANSWER_OVERHEAD_BYTES,
    });
  }

  /** Is any stale serving configured? When not, nothing is kept. */
  get enabled(): boolean {
    return keepsLatestAnswers(this.settings);
  }

  remember(key: string, answer: StoredAnswer, ledger: LedgerInfo): void {
    if (!this.enabled) return;
    const current = this.entries.get(key);
    // A slower node's older answer must not replace a newer one.
    if (current !== undefined && current.ledger.ledgerVersion > ledger.ledgerVersion) return;
    this.entries.set(key, { answer, ledger, fetchedAt: this.now() });
  }

  /** An answer within the staleness bound, and whether it is due for a refresh. */
  withinBound(key: string, watermarkVersion: bigint | null): { entry: LatestAnswer; refresh: boolean } | undefined {
    const { maxStalenessMs, maxStalenessVersions } = this.settings;
    if (maxStalenessMs === 0 && maxStalenessVersions === 0) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const age = this.now() - entry.fetchedAt;
    const behind = watermarkVersion === null ? 0n : watermarkVersion - entry.ledger.ledgerVersion;
    const byTime = maxStalenessMs > 0 && age <= maxStalenessMs;
    const byVersions = maxStalenessVersions > 0 && behind <= BigInt(maxStalenessVersions);
    if (!byTime && !byVersions) return undefined;
    // Refresh ahead, late in the bound: readers of a hot key rarely find it expired,
    // and the node is asked about once per bound, not twice.
    const refresh =
      (maxStalenessMs > 0 && age >= maxStalenessMs * REFRESH_AT) ||
      (maxStalenessVersions > 0 && Number(behind) >= maxStalenessVersions * REFRESH_AT);
    return { entry, refresh };
  }

  /** Forgets every answer (a purge); returns how many there were. */
  clear(): number {
    const dropped = this.entries.size;
    this.entries.clear();
    return dropped;
  }

  /** An answer young enough to stand in for a failed read. */
  forError(key: string): LatestAnswer | undefined {
    const { staleIfErrorMs } = this.settings;
    if (staleIfErrorMs === 0) return undefined;
    const entry = this.entries.get(key);
    return entry !== undefined && this.now() - entry.fetchedAt <= staleIfErrorMs ? entry : undefined;
  }
}
