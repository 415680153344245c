// How node answers are weighed when several nodes are asked for one read.
import type { NodeAnswer } from '../model/node-answer.js';

/** Answers that say "not this node" rather than "not this request". */
export function isNodeSpecific(answer: NodeAnswer): boolean {
  return (
    answer.status >= 500 ||
    (answer.status === 404 && answer.errorCode === 'version_not_found') ||
    (answer.status === 410 && answer.errorCode === 'version_pruned')
  );
}

/**
 * Of two node-specific answers, the one to pass through: the answer of the most
 * advanced node. A node behind may not have reached N (version_not_found) or
 * completed a block, where the node ahead has them: its 500 or its own not-found
 * says more (a version_not_found's message and headers then name the newest
 * latest). Of two from equally advanced nodes, the first.
 */
export function betterFallback(current: NodeAnswer | null, next: NodeAnswer): NodeAnswer {
  if (current === null) return next;
  const version = (a: NodeAnswer): bigint => a.ledger?.ledgerVersion ?? -1n;
  return version(next) > version(current) ? next : current;
}

/** The first answer that is not a failure or node-specific; the rest are cancelled. */
export function firstUseful(
  racers: Array<{ answer: Promise<NodeAnswer | null>; abort: AbortController }>,
): Promise<NodeAnswer | null> {
  return new Promise((resolve) => {
    let pending = racers.length;
    let fallback: NodeAnswer | null = null;
    for (const racer of racers) {
      racer.answer.then((answer) => {
        pending--;
        if (answer !== null && !isNodeSpecific(answer)) {
          for (const other of racers) if (other !== racer) other.abort.abort();
          resolve(answer);
        } else {
          fallback = answer ?? fallback;
          if (pending === 0) resolve(fallback);
        }
      });
    }
  });
}
