// A probe schedule a test runs by hand: the proxy probes its nodes when it
// starts, and then only when the test runs a round, so the test decides when the
// proxy learns of a ledger. The round is the proxy's own (the one its timer runs).
import type { ProbeSchedule } from '../../src/upstream/nodes/health.js';

export class ManualProbes implements ProbeSchedule {
  private readonly rounds = new Set<() => Promise<void>>();

  every(_ms: number, round: () => Promise<void>): () => void {
    this.rounds.add(round);
    return () => this.rounds.delete(round);
  }

  /** Runs one probe round of every proxy on this schedule, and waits for it to end. */
  async round(): Promise<void> {
    await Promise.all([...this.rounds].map((round) => round()));
  }
}
