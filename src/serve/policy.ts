// SPEC §7: which node answers are immutable at their version, and so cacheable.
// The one place that decides it.
import type { NodeAnswer } from '../upstream/answer.js';
import type { Endpoint } from '../wire/read-request.js';

/** vm_error_code of out of gas: it depends on a node's gas limit, not on the version. */
const OUT_OF_GAS = 4002;

export type Cacheability = { cacheable: true } | { cacheable: false; reason: string };

export function cacheability(endpoint: Endpoint, answer: NodeAnswer): Cacheability {
  if (answer.status === 200) return { cacheable: true };
  if (answer.status === 404 && answer.errorCode === 'table_item_not_found') return { cacheable: true };
  if (endpoint === 'view' && answer.status === 400 && answer.errorCode === 'invalid_input') {
    return answer.vmErrorCode === OUT_OF_GAS
      ? { cacheable: false, reason: 'out of gas depends on the node gas limit' }
      : { cacheable: true };
  }
  return { cacheable: false, reason: `status ${answer.status} ${answer.errorCode ?? ''}`.trim() };
}
