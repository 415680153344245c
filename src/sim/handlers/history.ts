// Transactions and blocks (api.md §9, §5): by version (above the latest
// 404 transaction_not_found, below the oldest 410 version_pruned), by hash
// (mempool first, no pruning branch), blocks by height (410 block_pruned) and by
// version; the transaction list and the gas estimate, which proxies pass through.
import { SimError } from '../node-error.js';
import { simAnswerFormat } from '../parse/accept.js';
import { parseNodeU64 } from '../parse/u64.js';
import { simFeedPage, simListQuery, simListRange } from '../feed/page.js';
import { SIM_VERSIONS_PER_BLOCK } from '../state/ledger.js';
import { atLedger, jsonReply, pathParam, reply, type SimContext, type SimReply, type SimRequest } from '../reply.js';
import type { SimHistory } from '../state/transactions.js';

const BCS = 'application/x-bcs';

function u64Path(name: string, raw: string): bigint {
  const value = parseNodeU64(pathParam(name, raw));
  if (value === null) throw SimError.badRequest(`failed to parse path parameter \`${name}\`: not a u64: ${raw}`);
  return value;
}

function withTransactions(req: SimRequest): boolean {
  const text = req.query.get('with_transactions');
  if (text === null || text === 'false') return false;
  if (text === 'true') return true;
  throw SimError.badRequest(
    `failed to parse query parameter \`with_transactions\`: not a bool: ${JSON.stringify(text)}`,
  );
}

const bcs = (req: SimRequest): boolean => simAnswerFormat(req.headers.accept) === 'bcs';

function transactionReply(req: SimRequest, history: SimHistory, version: bigint): SimReply {
  return bcs(req) ? reply(200, BCS, history.transactionBcs(version)) : jsonReply(200, history.transactionJson(version));
}

export function handleTransactionByVersion(req: SimRequest, ctx: SimContext, raw: string): SimReply {
  const history = ctx.history;
  const version = u64Path('txn_version', raw);
  return atLedger(ctx, (info) => {
    if (version > info.ledgerVersion)
      throw new SimError(404, 'transaction_not_found', `Transaction not found by Ledger version(${version})`);
    if (version < info.oldestLedgerVersion) throw SimError.pruned(version);
    return transactionReply(req, history, version);
  });
}

export function handleTransactionByHash(req: SimRequest, ctx: SimContext, raw: string): SimReply {
  const history = ctx.history;
  const text = pathParam('txn_hash', raw);
  const match = /^(?:0x)?([0-9a-fA-F]{64})$/.exec(text);
  if (match === null) throw SimError.badRequest(`failed to parse path parameter \`txn_hash\`: not a hash: ${text}`);
  const hash = '0x' + match[1].toLowerCase();
  return atLedger(ctx, (info) => {
    const found = history.lookup(hash);
    if (found.kind === 'pending')
      return bcs(req) ? reply(200, BCS, history.pendingBcs(hash)) : jsonReply(200, history.pendingJson(hash));
    // No pruning branch on a node: a pruned transaction is simply not found.
    if (found.kind === 'unknown' || found.version < info.oldestLedgerVersion) {
      throw new SimError(404, 'transaction_not_found', `Transaction not found by Transaction hash(${hash})`);
    }
    return transactionReply(req, history, found.version);
  });
}

/**
 * GET /v1/transactions?start&limit: a list (never cached by a proxy: its default start
 * moves). In BCS, the feed a proxy follows: the sparse model's transactions; the period
 * model has no honest write sets to give, so it answers as a node whose BCS output is off.
 */
export function handleTransactions(req: SimRequest, ctx: SimContext): SimReply {
  const history = ctx.history;
  const query = simListQuery(req.query);
  if (bcs(req)) {
    if (ctx.sparse === null)
      throw new SimError(403, 'api_disabled', 'Get transactions with BCS output is disabled on this endpoint');
    return simFeedPage(ctx, ctx.sparse, query, req.feedFault);
  }
  return atLedger(ctx, (info) => {
    const { first, last } = simListRange(info, query);
    const versions: bigint[] = [];
    for (let v = first; v <= last; v++) versions.push(v);
    return jsonReply(
      200,
      versions.map((v) => history.transactionJson(v)),
    );
  });
}

function blockReply(req: SimRequest, history: SimHistory, height: bigint, latest: bigint): SimReply {
  // A block is served once it is complete.
  if (history.blockRange(height).last > latest)
    throw new SimError(404, 'block_not_found', `Block not found by Height(${height})`);
  const all = withTransactions(req);
  return bcs(req) ? reply(200, BCS, history.blockBcs(height, all)) : jsonReply(200, history.blockJson(height, all));
}

export function handleBlockByHeight(req: SimRequest, ctx: SimContext, raw: string): SimReply {
  const history = ctx.history;
  const height = u64Path('block_height', raw);
  withTransactions(req);
  return atLedger(ctx, (info) => {
    if (height < info.oldestBlockHeight) throw new SimError(410, 'block_pruned', `Block(${height}) has been pruned`);
    if (height > info.blockHeight) throw new SimError(404, 'block_not_found', `Block not found by Height(${height})`);
    return blockReply(req, history, height, info.ledgerVersion);
  });
}

export function handleBlockByVersion(req: SimRequest, ctx: SimContext, raw: string): SimReply {
  const history = ctx.history;
  const version = u64Path('version', raw);
  withTransactions(req);
  return atLedger(ctx, (info) => {
    if (version > info.ledgerVersion) throw SimError.versionNotFound(version, info.ledgerVersion);
    if (version < info.oldestLedgerVersion) throw SimError.pruned(version);
    return blockReply(req, history, version / SIM_VERSIONS_PER_BLOCK, info.ledgerVersion);
  });
}

export function handleGasPrice(ctx: SimContext): SimReply {
  return atLedger(ctx, () =>
    jsonReply(200, { deprioritized_gas_estimate: 100, gas_estimate: 100, prioritized_gas_estimate: 150 }),
  );
}
