// The freshest ledger snapshot the proxy knows. Monotone: a snapshot older than
// one already taken is ignored, so the headers a client sees never step back;
// only a snapshot found to be a node's lie is corrected downwards.
import type { LedgerInfo } from './info.js';

export class Watermark {
  private snapshot: LedgerInfo | null = null;
  private readonly listeners: Array<(info: LedgerInfo) => void> = [];
  private readonly correctionListeners: Array<(info: LedgerInfo) => void> = [];

  /** Offers a snapshot; returns true when it advanced the watermark. */
  observe(info: LedgerInfo): boolean {
    const current = this.snapshot;
    // Same version but pruned further (a node pruned without new versions): the
    // newer observation, so a 410 says where the history now starts.
    const newer =
      current === null ||
      info.ledgerVersion > current.ledgerVersion ||
      (info.ledgerVersion === current.ledgerVersion && info.oldestLedgerVersion > current.oldestLedgerVersion);
    if (!newer) return false;
    this.snapshot = info;
    for (const listener of this.listeners) listener(info);
    return true;
  }

  /**
   * Replaces a snapshot that its node's own probe did not bear out (an answer's
   * headers pushed it ahead) with `info`, the freshest snapshot the nodes bear out.
   */
  correct(info: LedgerInfo): void {
    this.snapshot = info;
    for (const listener of this.correctionListeners) listener(info);
  }

  /** Forgets the snapshot: only when it came from a chain that turned out to be the wrong one. */
  reset(): void {
    this.snapshot = null;
  }

  current(): LedgerInfo | null {
    return this.snapshot;
  }

  onAdvance(listener: (info: LedgerInfo) => void): void {
    this.listeners.push(listener);
  }

  /** Told when the snapshot was corrected downwards (what was learned from the lie goes too). */
  onCorrect(listener: (info: LedgerInfo) => void): void {
    this.correctionListeners.push(listener);
  }
}
