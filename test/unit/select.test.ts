import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LedgerInfo } from '../../src/ledger/info.js';
import { NodeClient } from '../../src/upstream/transport/node-client.js';
import { BrokenCircuitError, CountedFailure, NodeState } from '../../src/upstream/nodes/node-state.js';
import { chooseNode } from '../../src/upstream/select.js';
import { ledgerHeaderNames } from '../../src/ledger/headers.js';

const names = ledgerHeaderNames('x-node-');

function node(
  name: string,
  oldest: bigint | null,
  latest: bigint | null,
  over: { role?: 'normal' | 'archive'; inFlight?: number } = {},
): NodeState {
  const state = new NodeState(
    new NodeClient({ name, url: 'http://127.0.0.1:1', headerNames: names }),
    over.role ?? 'normal',
    1,
    { failureThreshold: 2, openMs: 1000 },
  );
  if (oldest !== null && latest !== null) {
    state.ledger = {
      chainId: 4,
      epoch: 1n,
      ledgerVersion: latest,
      oldestLedgerVersion: oldest,
      ledgerTimestampUsec: 0n,
      blockHeight: 0n,
      oldestBlockHeight: 0n,
    } satisfies LedgerInfo;
  }
  state.inFlight = over.inFlight ?? 0;
  return state;
}

function chosen(nodes: NodeState[], version: bigint | null, maxLag = 10, floor: bigint | null = null): string {
  const c = chooseNode(nodes, { version, tried: new Set(), maxLag, floor });
  return c.kind === 'node' ? c.node.name : c.kind;
}

describe('select', () => {
  it('sends a pinned N only to a node that covers it', () => {
    const a = node('a', 100n, 200n);
    const b = node('b', 150n, 300n);
    expect(chosen([a, b], 120n)).toBe('a');
    expect(chosen([a, b], 250n)).toBe('b');
  });
  it('sends N beyond every latest to the most advanced node', () => {
    expect(chosen([node('a', 100n, 200n), node('b', 100n, 210n)], 500n)).toBe('b');
  });
  it('uses an archive node below every normal oldest, else answers pruned', () => {
    const a = node('a', 100n, 200n);
    expect(chosen([a, node('arch', 0n, 190n, { role: 'archive' })], 5n)).toBe('arch');
    expect(chosen([a], 5n)).toBe('pruned');
  });
  it('prefers normal nodes over archive nodes when both cover N', () => {
    expect(chosen([node('arch', 0n, 200n, { role: 'archive' }), node('a', 100n, 200n)], 150n)).toBe('a');
  });
  it('sends latest reads to the most advanced node, however busy; ties spread by load', () => {
    const lagging = node('lag', 0n, 100n);
    const busy = node('busy', 0n, 500n, { inFlight: 5 });
    const idle = node('idle', 0n, 495n, { inFlight: 1 });
    expect(chosen([lagging, busy, idle], null)).toBe('busy');
    const twin = node('twin', 0n, 500n, { inFlight: 2 });
    expect(chosen([lagging, busy, idle, twin], null)).toBe('twin');
  });
  it('takes a node below the latest floor only when none at or above it is left', () => {
    const behind = node('behind', 0n, 495n);
    const ahead = node('ahead', 0n, 500n);
    expect(chosen([behind, ahead], null, 10, 498n)).toBe('ahead');
    ahead.otherChain = true;
    expect(chosen([behind, ahead], null, 10, 498n)).toBe('behind');
    const hedge = chooseNode([behind, ahead], {
      version: null,
      tried: new Set(),
      maxLag: 10,
      floor: 498n,
      atOrAboveFloor: true,
    });
    expect(hedge.kind).toBe('none');
  });
  it('skips quarantined and open-circuit nodes', async () => {
    const a = node('a', 0n, 500n);
    const b = node('b', 0n, 500n, { inFlight: 3 });
    a.otherChain = true;
    expect(chosen([a, b], null)).toBe('b');
    await b.recordFailure();
    await b.recordFailure();
    expect(chosen([a, b], null)).toBe('none');
  });
  it('tries nodes it knows nothing of yet', () => {
    expect(chosen([node('new', null, null)], 5n)).toBe('new');
  });
});

describe('circuit breaker (cockatiel)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('opens after consecutive failures, half-opens after openMs, one trial decides', async () => {
    const state = new NodeState(
      new NodeClient({ name: 'n', url: 'http://127.0.0.1:1', headerNames: names }),
      'normal',
      1,
      { failureThreshold: 3, openMs: 1000 },
    );
    await state.recordFailure();
    await state.recordFailure();
    expect(state.circuit()).toBe('closed');
    await state.recordFailure();
    expect(state.circuit()).toBe('open');
    expect(state.available()).toBe(false);
    await expect(state.guard(async () => 'called')).rejects.toThrow(BrokenCircuitError);
    vi.advanceTimersByTime(999);
    expect(state.circuit()).toBe('open');
    vi.advanceTimersByTime(1);
    expect(state.circuit()).toBe('half-open');
    expect(state.available()).toBe(true);
    // The trial fails: open again for openMs.
    await expect(state.guard(() => Promise.reject(new CountedFailure(null)))).rejects.toBeInstanceOf(CountedFailure);
    expect(state.circuit()).toBe('open');
    vi.advanceTimersByTime(1000);
    // While the trial runs, nobody else may call; its success closes the circuit.
    let finish!: (v: string) => void;
    const trial = state.guard(() => new Promise<string>((resolve) => (finish = resolve)));
    expect(state.available()).toBe(false);
    finish('ok');
    await expect(trial).resolves.toBe('ok');
    expect(state.circuit()).toBe('closed');
  });

  it('errors that are not counted failures (a cancelled hedge) leave the count alone', async () => {
    const state = new NodeState(
      new NodeClient({ name: 'n', url: 'http://127.0.0.1:1', headerNames: names }),
      'normal',
      1,
      { failureThreshold: 1, openMs: 1000 },
    );
    await expect(state.guard(() => Promise.reject(new Error('aborted')))).rejects.toThrow('aborted');
    expect(state.circuit()).toBe('closed');
  });
});
