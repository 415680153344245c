// How node answers are weighed when several nodes are asked for one read.
import type { NodeAnswer } from './answer.js';

/** Answers that say "not this node" rather than "not this request". */
export function isNodeSpecific(answer: NodeAnswer): boolean {
  return (
    answer.status >= 500 ||
    (answer.status === 404 && answer.errorCode === 'version_not_found') ||
    (answer.status === 410 && answer.errorCode === 'version_pruned')
  );
}

/**
 * Of two node-specific answers, the one to pass through: a not-found from the most
 * advanced node (a version_not_found's message and headers name the newest
 * latest; a block or transaction not found there is not found anywhere asked),
 * otherwise the first.
 */
export function betterFallback(current: NodeAnswer | null, next: NodeAnswer): NodeAnswer {
  if (current === null) return next;
  const version = (a: NodeAnswer): bigint => a.ledger?.ledgerVersion ?? -1n;
  if (next.errorCode === 'version_not_found' && (current.errorCode !== 'version_not_found' || version(next) > version(current))) return next;
  if (next.status === 404 && current.status === 404 && next.errorCode === current.errorCode && version(next) > version(current)) return next;
  return current;
}

/** The first answer that is not a failure or node-specific; the rest are cancelled. */
export function firstUseful(racers: Array<{ answer: Promise<NodeAnswer | null>; abort: AbortController }>): Promise<NodeAnswer | null> {
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
