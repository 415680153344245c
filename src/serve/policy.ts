// SPEC §7 and SPEC-wallet-reads §4: which node answers are immutable, and so
// cacheable, and the version a stored answer belongs to. The one place that decides it.
import type { NodeAnswer } from '../upstream/answer.js';
import type { ReadRequest } from '../wire/read-request.js';
import { parseU64 } from '../wire/u64.js';

/** vm_error_code of out of gas: it depends on a node's gas limit, not on the version. */
const OUT_OF_GAS = 4002;

export type Cacheability = { cacheable: true } | { cacheable: false; reason: string };

export function cacheability(req: ReadRequest, answer: NodeAnswer): Cacheability {
  const route = req.route;
  if (answer.status === 200) {
    if (route.name === 'txn_by_hash' && isPending(answer)) return { cacheable: false, reason: 'pending transaction' };
    return { cacheable: true };
  }
  // Only a pinned read's 404 is a fact: a transaction or block not found may yet appear.
  if (answer.status === 404 && route.pin === 'version' && answer.errorCode !== undefined && route.deterministic404.includes(answer.errorCode)) {
    return { cacheable: true };
  }
  if (route.cachesInvalidInput && answer.status === 400 && answer.errorCode === 'invalid_input') {
    return answer.vmErrorCode === OUT_OF_GAS ? { cacheable: false, reason: 'out of gas depends on the node gas limit' } : { cacheable: true };
  }
  return { cacheable: false, reason: `status ${answer.status} ${answer.errorCode ?? ''}`.trim() };
}

/**
 * The version a path route's answer belongs to (its Redis TTL, and for a
 * transaction by hash, when it is pruned): the path's own version, else the
 * answer's JSON "version" (a transaction) or "first_version" (a block). In BCS, a
 * transaction's is the u64 after TransactionData::OnChain's variant byte; a
 * block's is not read (BcsBlock's hash field is encoded differently across node
 * releases), so the answer's ledger version stands in: a longer TTL at worst,
 * since a block is checked against pruning by its height on every read.
 * null when it cannot be told: then the answer is not stored.
 */
export function itemVersion(req: ReadRequest, answer: NodeAnswer): bigint | null {
  const item = req.item;
  if (item !== undefined && 'version' in item) return item.version;
  const body = answer.body;
  if (answer.contentType.startsWith('application/x-bcs')) {
    if (item !== undefined && 'hash' in item) return body.length >= 9 && body[0] === ONCHAIN ? body.readBigUInt64LE(1) : null;
    return answer.ledger?.ledgerVersion ?? null;
  }
  const parsed = jsonOf(answer) as { version?: unknown; first_version?: unknown } | undefined;
  const text = parsed?.version ?? parsed?.first_version;
  return typeof text === 'string' ? parseU64(text) : null;
}

/** The answer's JSON body as an object: as the node client parsed it, else parsed here; undefined if it is not one. */
function jsonOf(answer: NodeAnswer): Record<string, unknown> | undefined {
  let parsed = answer.json;
  if (parsed === undefined) {
    try {
      parsed = JSON.parse(answer.body.toString('utf8'));
    } catch {
      return undefined;
    }
  }
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
}

/** TransactionData's variants: a committed transaction (its version first) or one still in the mempool. */
const ONCHAIN = 0;
const PENDING = 1;

/** by_hash looks in the mempool first: a pending transaction's answer will change. */
function isPending(answer: NodeAnswer): boolean {
  if (answer.contentType.startsWith('application/x-bcs')) return answer.body[0] === PENDING;
  // An answer that cannot be read is taken for pending: it is not stored.
  const parsed = jsonOf(answer);
  return parsed === undefined || parsed.type === 'pending_transaction';
}
