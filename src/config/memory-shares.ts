// How the memory bound is shared. `cache.memory.maxBytes` bounds everything the proxy keeps
// per answer, each part in a share of its own: the parsed spellings of requests
// that were hits, the latest answers kept for bounded staleness (only when it is
// on), and the memory tier (identity bytes and gzip copies) in the rest. No share
// has a floor, so their sum is never more than maxBytes.

/** The spellings' share (read-parser.ts charges each what it holds); bench/memory-bound.mjs re-measures the whole process with it. */
export const SPELLINGS_SHARE = 1 / 4;
/** The latest answers' share, when any stale serving is configured. */
export const LATEST_ANSWERS_SHARE = 1 / 8;

export interface MemoryShares {
  /** the memory tier: answers' identity bytes and gzip copies */
  tier: number;
  /** parsed requests by their spelling */
  spellings: number;
  /** the newest answer to each latest read (0 when stale serving is off) */
  latestAnswers: number;
}

/** How `maxBytes` is shared; `keepsLatestAnswers`: some stale serving is configured. */
export function memoryShares(maxBytes: number, { keepsLatestAnswers }: { keepsLatestAnswers: boolean }): MemoryShares {
  const spellings = Math.floor(maxBytes * SPELLINGS_SHARE);
  const latestAnswers = keepsLatestAnswers ? Math.floor(maxBytes * LATEST_ANSWERS_SHARE) : 0;
  return { tier: Math.max(1, maxBytes - spellings - latestAnswers), spellings, latestAnswers };
}

/** Does the `latest` section keep latest answers (bounded staleness or stale-if-error)? */
export function keepsLatestAnswers(latest: {
  maxStalenessMs: number;
  maxStalenessVersions: number;
  staleIfErrorMs: number;
}): boolean {
  return latest.maxStalenessMs > 0 || latest.maxStalenessVersions > 0 || latest.staleIfErrorMs > 0;
}
