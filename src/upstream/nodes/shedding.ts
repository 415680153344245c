// A node shedding load: aptos-core's memory admission gate answers every request
// but GET /v1/-/healthy with 503 `overloaded` (no ledger headers, no Retry-After)
// while the node's memory is over its cap. Such an answer says "not now", not
// "broken": the node is left alone for a moment (its own Retry-After when it sends
// one, else one probe interval), its circuit, health and chain are left as they
// are, and the call goes on to another node. When every node that could answer is
// shedding, the client is told so, and when to come back.
import { NodeError } from '../../errors.js';
import type { NodeAnswer } from '../../model/node-answer.js';
import type { NodeState } from './node-state.js';

/** A node's own Retry-After is followed up to this long: one answer must not take a node out for good. */
const MAX_BACK_OFF_MS = 30_000;
/** Without a Retry-After, a node is left alone for one probe interval, at most this long. */
const DEFAULT_BACK_OFF_MS = 1_000;

/** The node's answer is its load shedding. */
export function isOverloaded(answer: NodeAnswer): boolean {
  return answer.status === 503 && answer.errorCode === 'overloaded';
}

/** How long a node that answered `overloaded` is left alone. */
export function shedBackOffMs(retryAfterMs: number | undefined, probeIntervalMs: number): number {
  return retryAfterMs !== undefined
    ? Math.min(retryAfterMs, MAX_BACK_OFF_MS)
    : Math.min(probeIntervalMs, DEFAULT_BACK_OFF_MS);
}

/** The node answered `overloaded`, thrown through its circuit: neither a failure nor a success. */
export class NodeShedding extends Error {
  constructor(readonly retryAfterMs: number | undefined) {
    super('the node is shedding load');
    this.name = 'NodeShedding';
  }
}

/**
 * The reply when no node answered and some shed load: in this call (`shedSince`:
 * when it began, on the nodes' clock) or backing off now. null when none did.
 * Retry-After is when the first of them takes calls again, at least 1 s.
 */
export function sheddingError(
  nodes: readonly NodeState[],
  shedSince: number,
  attempts: readonly string[],
): NodeError | null {
  const shedding = nodes.filter((n) => !n.quarantined && (n.shedding || n.shedAt >= shedSince));
  if (shedding.length === 0) return null;
  const backingOff = shedding.filter((n) => n.shedding);
  const soonest = backingOff.reduce((min, n) => Math.min(min, n.sheddingUntil - n.clock()), Number.POSITIVE_INFINITY);
  const seconds = Number.isFinite(soonest) ? Math.max(1, Math.ceil(soonest / 1000)) : 1;
  const why = attempts.length > 0 ? attempts : shedding.map((n) => `${n.name}: shedding load`);
  return NodeError.nodesShedding(
    `the nodes are shedding load; retry in ${seconds} s (${why.join('; ')})`,
    seconds,
    why,
  );
}
