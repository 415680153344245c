// Which node should take a call. Pure: it looks only at the nodes' states.
//
// Pinned N: a node whose snapshot covers N (normal nodes first), else the most
// advanced one that has N in its history but not yet (its 404 passes through),
// else pruned when every known node's history starts above N.
// Latest (api.md §8, read-your-latest): the most advanced node, ties spread by
// load and weight. `floor` is the highest version this proxy already reported
// for a latest read: a node known to be below it is taken only when no node at or
// above it is left (failover), and then the caller counts the step back.
import type { NodeState } from './nodes/node-state.js';

export type Choice = { kind: 'node'; node: NodeState } | { kind: 'pruned' } | { kind: 'none' };

export interface ChooseOptions {
  /** the pinned version, or null for a latest read */
  version: bigint | null;
  /** nodes already tried for this call (or taken by its hedge) */
  tried: ReadonlySet<NodeState>;
  /** routing.maxLagVersions: a latest read never goes to a node further behind the most advanced */
  maxLag: number;
  /** read-your-latest: the highest version reported for a latest read so far */
  floor?: bigint | null;
  /** narrows the candidates further (a node's request budget); a node it refuses counts as tried */
  usable?: (node: NodeState) => boolean;
  /** only nodes at or above the floor (a hedge never steps back) */
  atOrAboveFloor?: boolean;
}

/** Least in flight per weight first; then the more advanced. */
function leastLoaded(nodes: readonly NodeState[]): NodeState {
  return nodes.reduce((best, n) => {
    if (n.inFlight * best.weight !== best.inFlight * n.weight)
      return n.inFlight * best.weight < best.inFlight * n.weight ? n : best;
    return (n.ledger?.ledgerVersion ?? -1n) > (best.ledger?.ledgerVersion ?? -1n) ? n : best;
  });
}

export function chooseNode(all: readonly NodeState[], wanted: ChooseOptions): Choice {
  const usable = wanted.usable ?? (() => true);
  const candidates = all.filter((n) => n.available() && !wanted.tried.has(n) && usable(n));
  if (wanted.version === null) return chooseLatest(all, candidates, wanted);
  return choosePinned(all, candidates, wanted.version);
}

function chooseLatest(all: readonly NodeState[], candidates: NodeState[], wanted: ChooseOptions): Choice {
  const known = candidates.filter((n) => n.ledger !== null && n.role === 'normal');
  const pool = known.length > 0 ? known : candidates.filter((n) => n.ledger !== null);
  if (pool.length === 0) {
    // Nodes we know nothing of yet: only when there is no floor to keep.
    if (candidates.length === 0 || (wanted.atOrAboveFloor && wanted.floor != null)) return { kind: 'none' };
    return { kind: 'node', node: leastLoaded(candidates) };
  }
  // The freshness bar is the most advanced node that is up, tried or not: a retry
  // or a hedge must not fall back to a node further behind than maxLag.
  const up = all.filter((n) => n.ledger !== null && !n.quarantined && n.circuit() !== 'open');
  const top = [...up, ...pool].reduce((max, n) => (n.ledger!.ledgerVersion > max ? n.ledger!.ledgerVersion : max), 0n);
  const fresh = pool.filter((n) => n.ledger!.ledgerVersion + BigInt(wanted.maxLag) >= top);
  const floor = wanted.floor ?? null;
  const above = floor === null ? fresh : fresh.filter((n) => n.ledger!.ledgerVersion >= floor);
  // Below the floor only as a failover, and never for a hedge.
  const eligible = above.length > 0 || wanted.atOrAboveFloor ? above : fresh;
  if (eligible.length === 0) return { kind: 'none' };
  // biome-ignore lint/complexity/useMathMinMax: versions are bigints, which Math.max does not take
  const best = eligible.reduce((max, n) => (n.ledger!.ledgerVersion > max ? n.ledger!.ledgerVersion : max), 0n);
  return { kind: 'node', node: leastLoaded(eligible.filter((n) => n.ledger!.ledgerVersion === best)) };
}

function choosePinned(all: readonly NodeState[], candidates: NodeState[], n: bigint): Choice {
  const covering = candidates.filter((node) => node.covers(n));
  const normal = covering.filter((node) => node.role === 'normal');
  if (normal.length > 0) return { kind: 'node', node: leastLoaded(normal) };
  if (covering.length > 0) return { kind: 'node', node: leastLoaded(covering) };
  // Nobody covers n. If some node has n inside its history but has not reached
  // it yet, the most advanced of them answers (404 version_not_found, uncached).
  const notYet = candidates.filter((node) => node.ledger !== null && node.ledger.oldestLedgerVersion <= n);
  if (notYet.length > 0) {
    const top = notYet.reduce((a, b) => (b.ledger!.ledgerVersion > a.ledger!.ledgerVersion ? b : a));
    return { kind: 'node', node: top };
  }
  const known = all.filter((node) => !node.quarantined && node.ledger !== null);
  if (known.length > 0 && known.every((node) => node.ledger!.oldestLedgerVersion > n)) return { kind: 'pruned' };
  // Nodes we know nothing of yet (no probe answered) may still serve it.
  const unknown = candidates.filter((node) => node.ledger === null);
  return unknown.length > 0 ? { kind: 'node', node: leastLoaded(unknown) } : { kind: 'none' };
}
