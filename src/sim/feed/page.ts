// GET /v1/transactions?start&limit as a node answers it (aptos-core api/src/transactions.rs
// `list`, api/src/page.rs): `limit` a u16, absent 25, 0 a 400 invalid_input, above the
// node's max_transactions_page_size (100) that size; `start` absent: the last page; above
// the latest version a 400 invalid_input; below the oldest a 410 version_pruned (older
// nodes: a 500, the storage's error). Both with the ledger headers. In BCS the page is
// bcs(Vec<TransactionOnChainData>), here the sparse model's; the feed's fault modes
// change what one page holds or which node seems to answer it.
import { SimError } from '../node-error.js';
import { parseNodeU64 } from '../parse/u64.js';
import type { LedgerInfo } from '../../ledger/info.js';
import type { SimFeedFault } from './fault.js';
import { errorReply, reply, withLedgerHeaders, type SimContext, type SimReply } from '../reply.js';
import { uleb128 } from '../state/bcs.js';
import { pageLimit } from '../state/pages.js';
import { SIM_VERSIONS_PER_BLOCK } from '../state/ledger.js';
import type { SimSparseModel } from '../sparse/model.js';
import { simFeedTransaction, type SimTransactionTweaks } from './transaction.js';

export const SIM_TRANSACTIONS_PAGE_SIZE = 100;
const DEFAULT_LIMIT = 25;

export interface SimListQuery {
  start: bigint | null;
  limit: number | null;
}

/** ?start (a u64) and ?limit (a u16), read as the request is: 400 without ledger headers when either does not parse. */
export function simListQuery(query: URLSearchParams): SimListQuery {
  const startText = query.get('start');
  const start = startText === null ? null : parseNodeU64(startText);
  if (startText !== null && start === null)
    throw SimError.badRequest(`failed to parse query parameter \`start\`: not a u64: ${JSON.stringify(startText)}`);
  return { start, limit: pageLimit(query) };
}

/** The versions a page holds at this ledger, or the SimError a node answers (after reading its ledger). */
export function simListRange(info: LedgerInfo, query: SimListQuery): { first: bigint; last: bigint } {
  const limit = BigInt(query.limit ?? DEFAULT_LIMIT);
  if (limit === 0n) throw new SimError(400, 'invalid_input', 'Given limit value (0) must not be zero');
  const size = limit > BigInt(SIM_TRANSACTIONS_PAGE_SIZE) ? BigInt(SIM_TRANSACTIONS_PAGE_SIZE) : limit;
  const latest = info.ledgerVersion;
  const first = query.start ?? (latest >= size - 1n ? latest - (size - 1n) : 0n);
  if (first > latest) {
    throw new SimError(
      400,
      'invalid_input',
      `Given start value (${first}) is higher than the current ledger version, it must be < ${latest}`,
    );
  }
  if (first < info.oldestLedgerVersion) throw SimError.pruned(first);
  const end = first + size - 1n;
  return { first, last: end < latest ? end : latest };
}

const inRange = (fault: SimFeedFault, version: bigint): boolean =>
  fault.range === undefined || (fault.range.from <= version && version <= fault.range.to);

/** The snapshot the page is answered at: the node's, or a lagging node's, or one that pruned the start. */
function answeringLedger(ctx: SimContext, query: SimListQuery, fault: SimFeedFault | undefined): LedgerInfo {
  const info = ctx.ledger.info();
  const start = query.start ?? info.ledgerVersion;
  if (fault?.mode === 'feedLag' && inRange(fault, start)) {
    const behind = fault.versions ?? 10n;
    return ctx.ledger.snapshotAt(info.ledgerVersion > behind ? info.ledgerVersion - behind : 0n);
  }
  if (fault?.mode === 'feedPruned' && inRange(fault, start) && start >= info.oldestLedgerVersion) {
    const oldest = start + 1n;
    return { ...info, oldestLedgerVersion: oldest, oldestBlockHeight: oldest / SIM_VERSIONS_PER_BLOCK };
  }
  return info;
}

/** The versions the page holds once a gap fault has had its way. */
function pageVersions(first: bigint, last: bigint, latest: bigint, fault: SimFeedFault | undefined): bigint[] {
  const versions: bigint[] = [];
  if (fault?.mode === 'feedGap' && fault.gap === 'shift' && inRange(fault, first)) {
    for (let v = first + 1n; v <= last + 1n && v <= latest; v++) versions.push(v);
    return versions;
  }
  for (let v = first; v <= last; v++) versions.push(v);
  if (fault?.mode !== 'feedGap') return versions;
  const skipped = fault.range === undefined ? (versions[1] ?? versions[0]) : versions.find((v) => inRange(fault, v));
  return versions.filter((v) => v !== skipped);
}

function tweaksAt(fault: SimFeedFault | undefined, version: bigint, first: bigint): SimTransactionTweaks {
  if (fault === undefined || !(fault.range === undefined ? version === first : inRange(fault, version))) return {};
  if (fault.mode === 'feedTransactionHash') return { wrongTransactionHash: true };
  if (fault.mode === 'feedStateChangeHash') return { wrongStateChangeHash: true };
  if (fault.mode === 'feedForged') return { noWrites: true };
  if (fault.mode === 'feedUnknownVariant') return { unknownVariant: fault.variant ?? 'authenticator' };
  return {};
}

/** A BCS page of the sparse model's transactions, with the fault (if any) applied. */
export function simFeedPage(
  ctx: SimContext,
  model: SimSparseModel,
  query: SimListQuery,
  fault?: SimFeedFault,
): SimReply {
  const info = answeringLedger(ctx, query, fault);
  try {
    const { first, last } = simListRange(info, query);
    const versions = pageVersions(first, last, info.ledgerVersion, fault);
    const transactions = versions.map((v) => simFeedTransaction(model, ctx.ledger, v, tweaksAt(fault, v, first)));
    const body = Buffer.concat([uleb128(transactions.length), ...transactions]);
    return withLedgerHeaders(reply(200, 'application/x-bcs', body), ctx, info);
  } catch (err) {
    if (!(err instanceof SimError)) throw err;
    if (err.status === 410 && fault?.mode === 'feedPruned' && fault.status === 500) {
      return errorReply(new SimError(500, 'internal_error', 'Failed to read raw transactions from storage'), ctx, info);
    }
    return errorReply(err, ctx, info);
  }
}
