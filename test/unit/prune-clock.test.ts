// api.md §8 "Redis entries live until their version is pruned", on fake timers: a
// chain advancing 100 versions a second, seen once a second, as the watermark
// would see it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LedgerInfo } from '../../src/ledger/info.js';
import { PruneClock } from '../../src/ledger/prune-clock.js';

const MAX_TTL = 86_400;
const RATE = 100;

/** A chain starting at `start`, keeping `window` versions (Infinity: never prunes), observed every second. */
function chain(clock: PruneClock, start: bigint, window: bigint | null, chainId = 4): { latest(): LedgerInfo } {
  const startedAt = Date.now();
  const at = (): LedgerInfo => {
    const ledgerVersion = start + BigInt(Math.floor(((Date.now() - startedAt) * RATE) / 1000));
    const oldestLedgerVersion = window === null || ledgerVersion < window ? 0n : ledgerVersion - window;
    return {
      chainId,
      epoch: 1n,
      ledgerVersion,
      oldestLedgerVersion,
      ledgerTimestampUsec: BigInt(Date.now()) * 1000n,
      blockHeight: ledgerVersion,
      oldestBlockHeight: oldestLedgerVersion,
    };
  };
  clock.observe(at());
  setInterval(() => clock.observe(at()), 1000);
  return { latest: at };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('prune clock TTL', () => {
  it('a young chain that has pruned nothing: every entry lives maxTtlSeconds, never seconds', () => {
    const clock = new PruneClock();
    const c = chain(clock, 0n, null);
    vi.advanceTimersByTime(20_000);
    expect(c.latest().ledgerVersion).toBe(2000n);
    expect(clock.versionsPerSecond()).toBeCloseTo(RATE, 5);
    for (const version of [150n, 1900n, 2000n])
      expect(clock.secondsUntilPruned(version, MAX_TTL), `version ${version}`).toBe(MAX_TTL);
  });

  it('a chain with a window that has not started to slide: maxTtlSeconds', () => {
    const clock = new PruneClock();
    chain(clock, 1000n, 1_000_000n);
    vi.advanceTimersByTime(60_000);
    expect(clock.secondsUntilPruned(1500n, MAX_TTL)).toBe(MAX_TTL);
  });

  it('a chain that prunes steadily: TTL = (N - oldest) / prune rate', () => {
    const clock = new PruneClock();
    const c = chain(clock, 100_000n, 10_000n); // the oldest moves at 100 versions/s
    vi.advanceTimersByTime(30_000);
    const { ledgerVersion, oldestLedgerVersion } = c.latest();
    expect(oldestLedgerVersion).toBe(93_000n);
    expect(clock.prunes()).toBe(true);
    // 5000 versions above the oldest: pruned in 50 s.
    expect(clock.secondsUntilPruned(oldestLedgerVersion + 5000n, MAX_TTL)).toBe(50);
    // The latest version: the whole window, 100 s.
    expect(clock.secondsUntilPruned(ledgerVersion, MAX_TTL)).toBe(100);
    expect(clock.secondsUntilPruned(ledgerVersion, 60)).toBe(60);
  });

  it("reset (and a snapshot of another chain) forgets the old chain's pruning", () => {
    const clock = new PruneClock();
    chain(clock, 100_000n, 10_000n);
    vi.advanceTimersByTime(30_000);
    expect(clock.secondsUntilPruned(95_000n, MAX_TTL)).toBe(20);
    vi.clearAllTimers();
    // A devnet reset: chain 5 from version 0, pruning nothing.
    chain(clock, 0n, null, 5);
    vi.advanceTimersByTime(10_000);
    expect(clock.prunes()).toBe(false);
    expect(clock.secondsUntilPruned(500n, MAX_TTL)).toBe(MAX_TTL);
    clock.reset();
    expect(clock.versionsPerSecond()).toBeNull();
    expect(clock.secondsUntilPruned(500n, MAX_TTL)).toBe(MAX_TTL);
  });
});
