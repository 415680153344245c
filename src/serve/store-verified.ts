// How the read path stores an answer it fetched, pinned or latest alike: at once,
// or, under cache.verify, only once a second node answered the same bytes; and
// never under a chain the nodes have left, before or after the check.
import type { NodeReader } from './ports.js';
import type { CacheTiers, TierEntry } from './tiers.js';
import type { AnswerVerifier, FirstAnswer } from './verify.js';

export interface StoreDeps {
  tiers: CacheTiers;
  verifier: AnswerVerifier;
  nodes: Pick<NodeReader, 'chainId'>;
}

/** Where an answer is to be stored, and what the check compares. */
export interface ToStore extends TierEntry {
  /** the chain the key is of: the nodes must still be on it */
  chain: number;
  /** the node's answer and the read, for cache.verify's second node */
  first: FirstAnswer;
}

/**
 * written: stored at once, settles when Redis has it (or failed); verifying:
 * stored only once another node agrees, after the reply: true once stored (Redis
 * has it), false when not; undefined: not stored (the nodes are on another chain,
 * or a purge began after the read did).
 */
export type Storing = { written: Promise<void> } | { verifying: Promise<boolean> } | undefined;

export function storeVerified(deps: StoreDeps, what: ToStore): Storing {
  const { tiers, verifier, nodes } = deps;
  const chain = what.chain;
  if (nodes.chainId() !== chain) return undefined;
  const check = verifier.check(what.key, what.first);
  if (check === null) {
    const written = tiers.store(what);
    return written === undefined ? undefined : { written };
  }
  const verifying = check.then(async (agreed) => {
    if (!agreed || nodes.chainId() !== chain) return false;
    const written = tiers.store(what);
    if (written === undefined) return false;
    await written;
    return true;
  });
  return { verifying };
}
