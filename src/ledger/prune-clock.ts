// Estimates when a version will be pruned (api.md §8 "Redis entries live until
// their version is pruned"), from what the ledger headers say: the versions per
// second (versions over chain time between two snapshots) and the pruning window
// (latest - oldest). Redis entries expire near that moment.
//
// A chain whose oldest version has not moved since the first snapshot prunes
// nothing (a young chain, or a node that keeps everything): its entries live
// maxSeconds. Only once the oldest is seen to move is the window taken to slide
// at the chain's rate, so an entry is never given seconds on a chain that is
// nowhere near pruning it.
import type { LedgerInfo } from './info.js';

/** Snapshots this far apart in chain time give a usable rate. */
const MIN_SPAN_USEC = 1_000_000n;

export class PruneClock {
  private first: LedgerInfo | null = null;
  private last: LedgerInfo | null = null;

  observe(info: LedgerInfo): void {
    // Another chain (a devnet reset) starts a new history: nothing of the old one applies.
    if (this.last !== null && info.chainId !== this.last.chainId) this.reset();
    if (this.first === null) this.first = info;
    if (this.last === null || info.ledgerVersion > this.last.ledgerVersion) this.last = info;
  }

  /** Forgets every snapshot: for a chain change. */
  reset(): void {
    this.first = null;
    this.last = null;
  }

  /** Versions per second, or null while too little chain time has been seen. */
  versionsPerSecond(): number | null {
    if (this.first === null || this.last === null) return null;
    const span = this.last.ledgerTimestampUsec - this.first.ledgerTimestampUsec;
    if (span < MIN_SPAN_USEC) return null;
    const versions = Number(this.last.ledgerVersion - this.first.ledgerVersion);
    return versions > 0 ? versions / (Number(span) / 1e6) : null;
  }

  /** True once the oldest version has been seen to move: the nodes prune. */
  prunes(): boolean {
    return this.first !== null && this.last !== null && this.last.oldestLedgerVersion > this.first.oldestLedgerVersion;
  }

  /**
   * Seconds until `version` falls below the oldest version, capped by
   * maxSeconds: (version - oldest) / rate once the oldest moves, else maxSeconds.
   */
  secondsUntilPruned(version: bigint, maxSeconds: number): number {
    const rate = this.versionsPerSecond();
    const last = this.last;
    if (rate === null || last === null || !this.prunes()) return maxSeconds;
    const ahead = Number(version - last.oldestLedgerVersion);
    if (ahead <= 0) return 1;
    return Math.max(1, Math.min(maxSeconds, Math.ceil(ahead / rate)));
  }
}
