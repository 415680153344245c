// Estimates when a version will be pruned, from what the ledger headers say: the
// versions per second (versions over chain time between two snapshots) and the
// pruning window (latest - oldest). Redis entries expire near that moment.
import type { LedgerInfo } from './info.js';

/** Snapshots this far apart in chain time give a usable rate. */
const MIN_SPAN_USEC = 1_000_000n;

export class PruneClock {
  private first: LedgerInfo | null = null;
  private last: LedgerInfo | null = null;

  observe(info: LedgerInfo): void {
    if (this.first === null) this.first = info;
    if (this.last === null || info.ledgerVersion > this.last.ledgerVersion) this.last = info;
  }

  /** Versions per second, or null while too little chain time has been seen. */
  versionsPerSecond(): number | null {
    if (this.first === null || this.last === null) return null;
    const span = this.last.ledgerTimestampUsec - this.first.ledgerTimestampUsec;
    if (span < MIN_SPAN_USEC) return null;
    const versions = Number(this.last.ledgerVersion - this.first.ledgerVersion);
    return versions > 0 ? versions / (Number(span) / 1e6) : null;
  }

  /** Seconds until `version` falls out of the pruning window, capped by maxSeconds. */
  secondsUntilPruned(version: bigint, maxSeconds: number): number {
    const rate = this.versionsPerSecond();
    const last = this.last;
    if (rate === null || last === null) return maxSeconds;
    const ahead = Number(version - last.oldestLedgerVersion);
    if (ahead <= 0) return 1;
    return Math.max(1, Math.min(maxSeconds, Math.ceil(ahead / rate)));
  }
}
