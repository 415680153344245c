// Waiting for a node's budget: a waiter is woken the moment a call
// ends, or when the node's next rate token is due, never by polling.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ledgerHeaderNames } from '../../src/ledger/headers.js';
import { BudgetWaits, budgetShare, SHED_FIRST_SHARE } from '../../src/upstream/budgets.js';
import { NodeClient } from '../../src/upstream/transport/node-client.js';
import { NodeState } from '../../src/upstream/nodes/node-state.js';

function node(budget: { maxInFlight?: number; maxRps?: number }): NodeState {
  const client = new NodeClient({ name: 'n', url: 'http://127.0.0.1:1', headerNames: ledgerHeaderNames('x-node-') });
  return new NodeState(client, 'normal', 1, { failureThreshold: 5, openMs: 1000 }, Date.now, budget);
}

describe('BudgetWaits', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('wakes a waiter as soon as a call ends, long before its wait is up', async () => {
    const waits = new BudgetWaits();
    let woken = false;
    const waiting = waits.next(node({ maxInFlight: 1 }), 10_000).then(() => (woken = true));
    expect(waits.waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(5);
    expect(woken).toBe(false);
    waits.wake();
    await waiting;
    expect(woken).toBe(true);
    expect(waits.waiting).toBe(0);
    // No timer left behind to poll with.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a rate-limited node: the waiter wakes when the next token is due', async () => {
    const n = node({ maxRps: 10 });
    for (let i = 0; i < 10; i++) {
      expect(n.hasBudget()).toBe(true);
      n.spend();
    }
    expect(n.hasBudget()).toBe(false);
    expect(n.msUntilToken()).toBe(100);
    const waits = new BudgetWaits();
    let woken = false;
    void waits.next(n, 10_000).then(() => (woken = true));
    await vi.advanceTimersByTimeAsync(99);
    expect(woken).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(woken).toBe(true);
    expect(n.hasBudget()).toBe(true);
  });

  it('gives the class shed first a share of maxInFlight', () => {
    expect(budgetShare('latest', { latest: true })).toBe(SHED_FIRST_SHARE);
    expect(budgetShare('latest', { latest: false })).toBe(1);
    expect(budgetShare('pinned', { latest: false })).toBe(SHED_FIRST_SHARE);
    expect(budgetShare('none', { latest: true })).toBe(1);
  });
});
