// A reload's node list (SIGHUP) against the nodes in use: a node kept keeps its
// state (snapshots, circuit, budgets in use) and takes the new budget and spread;
// a node whose name, url, role, weight or headers changed is a new node (new
// headers, a rotated API key, need a client that sends them).
import type { NodeState } from './node-state.js';

export interface MergedNodes {
  /** the new list: each node kept in place of its new twin */
  merged: NodeState[];
  /** nodes new to the set: they are probed before they take reads */
  added: NodeState[];
  /** nodes in use that the new list drops: they finish their calls in flight, then close */
  removed: NodeState[];
  /** new twins of kept nodes: never used, their clients destroyed */
  unused: NodeState[];
}

export function mergeNodes(current: readonly NodeState[], next: readonly NodeState[]): MergedNodes {
  const byKey = new Map(current.map((n) => [identity(n), n]));
  const merged = next.map((n) => {
    const kept = byKey.get(identity(n));
    if (kept === undefined) return n;
    kept.budget = n.budget;
    kept.spreadVersions = n.spreadVersions;
    return kept;
  });
  const kept = new Set(merged);
  return {
    merged,
    added: merged.filter((n) => !current.includes(n)),
    removed: current.filter((n) => !kept.has(n)),
    unused: next.filter((n) => !kept.has(n)),
  };
}

function identity(node: NodeState): string {
  return JSON.stringify([node.name, node.client.url, node.role, node.weight, node.client.headers]);
}
