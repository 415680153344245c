// Which node should take a read. Pure: it looks only at the nodes' states.
import type { NodeState } from './node-state.js';

export type Choice = { kind: 'node'; node: NodeState } | { kind: 'pruned' } | { kind: 'none' };

/** Least in-flight first; then the higher weight; then the more advanced. */
function leastLoaded(nodes: NodeState[]): NodeState {
  return nodes.reduce((best, n) => {
    if (n.inFlight * best.weight !== best.inFlight * n.weight) return n.inFlight * best.weight < best.inFlight * n.weight ? n : best;
    return (n.ledger?.ledgerVersion ?? -1n) > (best.ledger?.ledgerVersion ?? -1n) ? n : best;
  });
}

/**
 * `usable` narrows the candidates further (a node's request budget); a node it
 * refuses is treated as if it had been tried.
 */
export function chooseNode(
  all: readonly NodeState[],
  version: bigint | null,
  tried: Set<NodeState>,
  maxLag: number,
  usable: (node: NodeState) => boolean = () => true,
): Choice {
  const candidates = all.filter((n) => n.available() && !tried.has(n) && usable(n));
  if (version === null) return chooseLatest(all, candidates, maxLag);
  return choosePinned(all, candidates, version);
}

/**
 * The freshness bar is the most advanced node that is up, tried or not: a retry or
 * a hedge must not fall back to a node further behind than maxLag.
 */
function chooseLatest(all: readonly NodeState[], candidates: NodeState[], maxLag: number): Choice {
  const known = candidates.filter((n) => n.ledger !== null && n.role === 'normal');
  const pool = known.length > 0 ? known : candidates.filter((n) => n.ledger !== null);
  if (pool.length === 0) return candidates.length > 0 ? { kind: 'node', node: leastLoaded(candidates) } : { kind: 'none' };
  const up = all.filter((n) => n.ledger !== null && !n.quarantined && n.circuit() !== 'open');
  const top = [...up, ...pool].reduce((max, n) => (n.ledger!.ledgerVersion > max ? n.ledger!.ledgerVersion : max), 0n);
  const fresh = pool.filter((n) => n.ledger!.ledgerVersion + BigInt(maxLag) >= top);
  return fresh.length > 0 ? { kind: 'node', node: leastLoaded(fresh) } : { kind: 'none' };
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
