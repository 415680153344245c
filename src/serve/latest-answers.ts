// The newest answer to each canonical latest read, with the snapshot it was read
// at, for bounded-staleness latest reads and stale-if-error (both off by default).
import { ENTRY_OVERHEAD_BYTES } from '../cache/memory.js';
import { LRUCache } from 'lru-cache';
import type { LedgerInfo } from '../ledger/info.js';
import type { StoredAnswer } from '../wire/read-request.js';

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


export class LatestAnswers {
  private readonly entries: LRUCache<string, LatestAnswer>;

  constructor(
    readonly settings: StalenessSettings,
    maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (entry, key) => entry.answer.body.length + key.length + ENTRY_OVERHEAD_BYTES,
    });
  }

  /** Is any stale serving configured? When not, nothing is kept. */
  get enabled(): boolean {
    const s = this.settings;
    return s.maxStalenessMs > 0 || s.maxStalenessVersions > 0 || s.staleIfErrorMs > 0;
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
    // Refresh ahead, once half the bound is used, so readers rarely find it expired.
    const refresh =
      (maxStalenessMs > 0 && age * 2 >= maxStalenessMs) ||
      (maxStalenessVersions > 0 && behind * 2n >= BigInt(maxStalenessVersions));
    return { entry, refresh };
  }

  /** An answer young enough to stand in for a failed read. */
  forError(key: string): LatestAnswer | undefined {
    const { staleIfErrorMs } = this.settings;
    if (staleIfErrorMs === 0) return undefined;
    const entry = this.entries.get(key);
    return entry !== undefined && this.now() - entry.fetchedAt <= staleIfErrorMs ? entry : undefined;
  }
}
