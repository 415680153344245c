// Chain-id integrity: which chain the nodes must be on.
import type { NodeState } from './node-state.js';

/**
 * The configured chain id; when unset, the chain a strict majority of the
 * configured nodes reports (none while they disagree or have not answered), so a
 * minority node that answers first cannot set the chain.
 */
export function expectedChain(nodes: readonly NodeState[], configured: number | undefined): number | undefined {
  if (configured !== undefined) return configured;
  const counts = new Map<number, number>();
  for (const n of nodes) if (n.ledger) counts.set(n.ledger.chainId, (counts.get(n.ledger.chainId) ?? 0) + 1);
  for (const [id, count] of counts) if (count * 2 > nodes.length) return id;
  return undefined;
}
