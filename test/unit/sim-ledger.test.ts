// SimLedger: the documented derivation rules, monotone pruning, auto-advance.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PruneClock } from '../../src/ledger/prune-clock.js';
import { SimLedger, simLedgerInfo, SIM_GENESIS_TIMESTAMP_USEC, startAutoAdvance } from '../../src/sim/index.js';

describe('SimLedger', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts at version 1000 on chain 4 with nothing pruned and derives every header value from the version', () => {
    const ledger = new SimLedger();
    expect(ledger.info()).toEqual({
      chainId: 4,
      epoch: 1n,
      ledgerVersion: 1000n,
      oldestLedgerVersion: 0n,
      ledgerTimestampUsec: 1_700_000_250_000_000n,
      blockHeight: 250n,
      oldestBlockHeight: 0n,
    });
  });

  it('advances by one by default and by n (bigint or number)', () => {
    const ledger = new SimLedger({ startVersion: 10n });
    ledger.advance();
    ledger.advance(4);
    ledger.advance(5n);
    expect(ledger.info().ledgerVersion).toBe(20n);
    expect(() => ledger.advance(-1)).toThrow(RangeError);
  });

  it('derives epoch, block heights and timestamp by the fixed rule', () => {
    expect(simLedgerInfo(7, 25_003n, 12_345n)).toEqual({
      chainId: 7,
      epoch: 3n,
      ledgerVersion: 25_003n,
      oldestLedgerVersion: 12_345n,
      ledgerTimestampUsec: 1_700_000_000_000_000n + 25_003n * 250_000n,
      blockHeight: 6250n,
      oldestBlockHeight: 3086n,
    });
  });

  it('prunes by the window as the ledger advances', () => {
    const ledger = new SimLedger({ startVersion: 1000n, pruneWindow: 100n });
    expect(ledger.info().oldestLedgerVersion).toBe(900n);
    ledger.advance(50);
    expect(ledger.info().oldestLedgerVersion).toBe(950n);
    ledger.setPruneWindow(10n);
    expect(ledger.info().oldestLedgerVersion).toBe(1040n);
  });

  it('never un-prunes: a larger window only slows pruning', () => {
    const ledger = new SimLedger({ startVersion: 1000n, pruneWindow: 100n });
    ledger.setPruneWindow(500n);
    expect(ledger.info().oldestLedgerVersion).toBe(900n);
    ledger.advance(600);
    expect(ledger.info().oldestLedgerVersion).toBe(1100n);
  });

  it('pruneTo raises the oldest version, never lowers it, and stops at the latest', () => {
    const ledger = new SimLedger({ startVersion: 1000n });
    ledger.pruneTo(600n);
    expect(ledger.info().oldestLedgerVersion).toBe(600n);
    expect(ledger.info().oldestBlockHeight).toBe(150n);
    ledger.pruneTo(10n);
    expect(ledger.info().oldestLedgerVersion).toBe(600n);
    ledger.pruneTo(5000n);
    expect(ledger.info().oldestLedgerVersion).toBe(1000n);
  });

  it('changes chain id only to a u8', () => {
    const ledger = new SimLedger();
    ledger.setChainId(1);
    expect(ledger.info().chainId).toBe(1);
    expect(() => ledger.setChainId(256)).toThrow(RangeError);
    expect(() => new SimLedger({ chainId: -1 })).toThrow(RangeError);
  });

  it('auto-advances at the configured rate from elapsed time', () => {
    vi.useFakeTimers();
    const ledger = new SimLedger({ startVersion: 0n });
    const stop = startAutoAdvance(ledger, 4);
    vi.advanceTimersByTime(1000);
    expect(ledger.info().ledgerVersion).toBe(4n);
    vi.advanceTimersByTime(2500);
    expect(ledger.info().ledgerVersion).toBe(14n);
    stop();
    vi.advanceTimersByTime(5000);
    expect(ledger.info().ledgerVersion).toBe(14n);
    expect(() => startAutoAdvance(ledger, 0)).toThrow(RangeError);
  });

  // The proxy reads the rate from ledger timestamps (PruneClock → Redis TTLs). The
  // chain clock used to run at 4 versions/s whatever the rate, so a sim at 2/s looked
  // like one at 4/s and at 10/s like one at 4/s.
  it.each([0.5, 2, 10, 1000])('keeps its chain clock at the wall-clock pace of %s versions/s', (rate) => {
    vi.useFakeTimers();
    const ledger = new SimLedger({ startVersion: 0n, versionsPerSecond: rate });
    const stop = startAutoAdvance(ledger, rate);
    const clock = new PruneClock();
    const before = ledger.info();
    clock.observe(before);
    vi.advanceTimersByTime(20_000);
    const after = ledger.info();
    clock.observe(after);
    stop();
    expect(Number(after.ledgerVersion - before.ledgerVersion)).toBe(rate * 20);
    const chainSeconds = Number(after.ledgerTimestampUsec - before.ledgerTimestampUsec) / 1e6;
    expect(chainSeconds).toBeCloseTo(20, 3);
    expect(clock.versionsPerSecond()).toBeCloseTo(rate, 3);
  });

  it('keeps 4 versions per chain second when it advances only by hand', () => {
    const ledger = new SimLedger({ startVersion: 0n });
    ledger.advance(8n);
    expect(ledger.info().ledgerTimestampUsec - SIM_GENESIS_TIMESTAMP_USEC).toBe(2_000_000n);
  });
});
