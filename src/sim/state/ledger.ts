// The simulated node's ledger: a latest version that advances (by hand or on a
// timer) and an oldest version that only ever rises (pruning). Every other ledger
// value derives from these two by a fixed rule, so tests can predict the headers:
//   blockHeight        = version / 4
//   oldestBlockHeight  = oldest / 4
//   epoch              = version / 10_000 + 1
//   ledgerTimestampUsec = 1_700_000_000_000_000 + version * usecPerVersion
// usecPerVersion is 1e6 / versionsPerSecond when the ledger advances on a timer, so
// its chain clock keeps pace with the wall clock (the proxy estimates the rate, and
// so Redis TTLs, from these timestamps); 250_000 (4 versions/s) when it advances by hand.
import type { LedgerInfo } from '../../ledger/info.js';

export const SIM_GENESIS_TIMESTAMP_USEC = 1_700_000_000_000_000n;
export const SIM_USEC_PER_VERSION = 250_000n;
export const SIM_VERSIONS_PER_BLOCK = 4n;
export const SIM_VERSIONS_PER_EPOCH = 10_000n;

export interface SimLedgerOptions {
  chainId?: number;
  startVersion?: bigint;
  pruneWindow?: bigint;
  /** the pace of the chain clock (ledger timestamps); default 4, i.e. SIM_USEC_PER_VERSION */
  versionsPerSecond?: number;
}

/** Chain time per version at this rate, in whole microseconds (at least 1). */
export function simUsecPerVersion(versionsPerSecond: number | undefined): bigint {
  if (versionsPerSecond === undefined || versionsPerSecond === 0) return SIM_USEC_PER_VERSION;
  return BigInt(Math.max(1, Math.round(1_000_000 / versionsPerSecond)));
}

/** The deterministic snapshot of a ledger whose latest version is `latest` and oldest `oldest`. */
export function simLedgerInfo(
  chainId: number,
  latest: bigint,
  oldest: bigint,
  usecPerVersion = SIM_USEC_PER_VERSION,
): LedgerInfo {
  return {
    chainId,
    epoch: latest / SIM_VERSIONS_PER_EPOCH + 1n,
    ledgerVersion: latest,
    oldestLedgerVersion: oldest,
    ledgerTimestampUsec: SIM_GENESIS_TIMESTAMP_USEC + latest * usecPerVersion,
    blockHeight: latest / SIM_VERSIONS_PER_BLOCK,
    oldestBlockHeight: oldest / SIM_VERSIONS_PER_BLOCK,
  };
}

function checkChainId(id: number): number {
  if (!Number.isInteger(id) || id < 0 || id > 255) throw new RangeError(`chain id must be a u8: ${id}`);
  return id;
}

function checkNonNegative(name: string, value: bigint): bigint {
  if (value < 0n) throw new RangeError(`${name} must not be negative: ${value}`);
  return value;
}

export class SimLedger {
  #chainId: number;
  #latest: bigint;
  #pruneWindow: bigint;
  readonly #usecPerVersion: bigint;
  /**
   * Pruned data never comes back (as on a real node): the oldest version is a floor
   * that rises with the window or by pruneTo, and enlarging the window only slows pruning.
   */
  #oldest: bigint;

  constructor(options: SimLedgerOptions = {}) {
    this.#chainId = checkChainId(options.chainId ?? 4);
    this.#latest = checkNonNegative('startVersion', options.startVersion ?? 1000n);
    this.#pruneWindow = checkNonNegative('pruneWindow', options.pruneWindow ?? 1_000_000n);
    this.#usecPerVersion = simUsecPerVersion(options.versionsPerSecond);
    this.#oldest = 0n;
    this.#applyWindow();
  }

  /** The current snapshot; all seven header values come from it. */
  info(): LedgerInfo {
    return simLedgerInfo(this.#chainId, this.#latest, this.#oldest, this.#usecPerVersion);
  }

  /** The snapshot the ledger had when its latest version was `version` (at most the current one). */
  snapshotAt(version: bigint): LedgerInfo {
    const at = version < this.#latest ? version : this.#latest;
    // biome-ignore lint/complexity/useMathMinMax: versions are bigints, which Math.min does not take
    const oldest = this.#oldest < at ? this.#oldest : at;
    return simLedgerInfo(this.#chainId, at, oldest, this.#usecPerVersion);
  }

  /** The ledger timestamp of a version (its transaction's, its block's). */
  timestampAt(version: bigint): bigint {
    return SIM_GENESIS_TIMESTAMP_USEC + version * this.#usecPerVersion;
  }

  /** latest += n (default 1). */
  advance(n: bigint | number = 1n): void {
    const step = checkNonNegative('advance step', BigInt(n));
    this.#latest += step;
    this.#applyWindow();
  }

  setPruneWindow(window: bigint): void {
    this.#pruneWindow = checkNonNegative('pruneWindow', window);
    this.#applyWindow();
  }

  /** Raises the oldest version; a node always keeps its latest version, so it is capped there. */
  pruneTo(oldest: bigint): void {
    const target = oldest > this.#latest ? this.#latest : oldest;
    if (target > this.#oldest) this.#oldest = target;
  }

  setChainId(id: number): void {
    this.#chainId = checkChainId(id);
  }

  #applyWindow(): void {
    const byWindow = this.#latest > this.#pruneWindow ? this.#latest - this.#pruneWindow : 0n;
    if (byWindow > this.#oldest) this.#oldest = byWindow;
  }
}

/**
 * Advances the ledger at `versionsPerSecond` from wall-clock time elapsed (so a late
 * tick catches up instead of drifting). The timer is unref'd: it never keeps a process alive.
 */
export function startAutoAdvance(ledger: SimLedger, versionsPerSecond: number): () => void {
  if (!(versionsPerSecond > 0) || !Number.isFinite(versionsPerSecond)) {
    throw new RangeError(`versionsPerSecond must be a positive number: ${versionsPerSecond}`);
  }
  const started = Date.now();
  let advanced = 0;
  const periodMs = Math.max(10, Math.floor(1000 / versionsPerSecond));
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) * versionsPerSecond) / 1000);
    if (due > advanced) {
      ledger.advance(due - advanced);
      advanced = due;
    }
  }, periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
