// api.md §7 and api.md §9: which node answers are immutable, and so
// cacheable, and which say only that the node has not reached the item yet. The
// one place that decides it, from the rules each route's descriptor carries
// (which 200s are final, which 404s are facts, which mean "not yet").
import type { NodeAnswer } from '../model/node-answer.js';
import type { ReadRequest } from '../model/read.js';

/** vm_error_code of out of gas: it depends on a node's gas limit, not on the version. */
const OUT_OF_GAS = 4002;

export type Cacheability = { cacheable: true } | { cacheable: false; reason: string };

const CACHEABLE: Cacheability = { cacheable: true };

export function cacheability(req: ReadRequest, answer: NodeAnswer): Cacheability {
  const route = req.route;
  if (answer.status === 200) {
    const notFinal = route.notFinal?.(answer);
    return notFinal === undefined ? CACHEABLE : { cacheable: false, reason: notFinal };
  }
  if (answer.status === 404 && answer.errorCode !== undefined && route.deterministic404.includes(answer.errorCode))
    return CACHEABLE;
  if (route.cachesInvalidInput && answer.status === 400 && answer.errorCode === 'invalid_input') {
    return answer.vmErrorCode === OUT_OF_GAS
      ? { cacheable: false, reason: 'out of gas depends on the node gas limit' }
      : CACHEABLE;
  }
  return { cacheable: false, reason: `status ${answer.status} ${answer.errorCode ?? ''}`.trim() };
}

/**
 * A 404 that says the node had not reached the item when it was asked (a version,
 * block or transaction above its latest): it may be answered otherwise by now, so
 * it answers only the reads that were waiting when the call was sent.
 */
export function isNotYet(req: ReadRequest, answer: NodeAnswer): boolean {
  return answer.status === 404 && answer.errorCode !== undefined && req.route.notYet404.includes(answer.errorCode);
}
