// Waiting for a node's request budget (upstreams[].maxInFlight, maxRps): a read
// whose node is out of budget sleeps until a call to some node finishes or a
// rate token comes back, whichever first, then looks again. No polling: the
// pool wakes the waiters when a call ends, and a rate wait is one timer set for
// the moment the next token is due.
import type { Priority } from '../config/index.js';
import type { NodeState } from './nodes/node-state.js';

/** A class of reads that is shed first (shedding.shedFirst) may use this part of a node's maxInFlight. */
export const SHED_FIRST_SHARE = 0.8;

export type ShedFirst = 'none' | 'latest' | 'pinned';

/**
 * The part of a budget (a node's maxInFlight and maxRps, shedding.maxInFlight) a
 * tenant's calls may use, by its priority (api.md §10.3): when budgets run short,
 * low is refused while normal still gets a slot, and normal while high does.
 */
export const PRIORITY_SHARE: Readonly<Record<Priority, number>> = { high: 1, normal: 0.8, low: 0.6 };

/** The part of a node's budget a call of this class (a latest read or not) and priority may use. */
export function budgetShare(shedFirst: ShedFirst, call: { latest: boolean; priority?: Priority | undefined }): number {
  const { latest, priority = 'high' } = call;
  const loses = (shedFirst === 'latest' && latest) || (shedFirst === 'pinned' && !latest);
  return (loses ? SHED_FIRST_SHARE : 1) * PRIORITY_SHARE[priority];
}

export class BudgetWaits {
  private readonly waiters = new Set<() => void>();

  /** A call ended (a slot is free somewhere): every waiter looks again. */
  wake(): void {
    // Every call's end wakes: most find nobody waiting, and copy nothing.
    if (this.waiters.size === 0) return;
    for (const wake of [...this.waiters]) wake();
  }

  /** How many reads are waiting for a budget now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Resolves at the next wake(), when `node` gets its next rate token, or after
   * `ms`, whichever comes first.
   */
  next(node: NodeState, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const tokenMs = node.msUntilToken();
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, tokenMs > 0 ? Math.min(ms, tokenMs) : ms));
      this.waiters.add(done);
    });
  }
}
