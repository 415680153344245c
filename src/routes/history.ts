// Transactions and blocks: immutable by their path, with no ledger_version (a
// node ignores one, so the proxy does too) (api.md §9, §4).
// Cached once they exist; never a 404 (the item may appear) nor a pending transaction.
import type { AnswerFacts, PathItem, ReadRequest } from '../model/read.js';
import { parseU64 } from '../wire/u64.js';
import { answerFormat, hashParam, u64Param, withQuery, withTransactionsParam } from './params.js';
import type { RawRead, RouteDescriptor } from './route.js';

interface Target {
  path: string;
  identity: string;
  item: PathItem;
  query?: ReadonlyArray<readonly [string, string | undefined]>;
}

/** A path route's rules: how its prune line, its routing and its answer's version are found. */
type PathRules = Pick<
  RouteDescriptor,
  'pruneBy' | 'pruneAt' | 'routingVersion' | 'answerVersion' | 'notFinal' | 'notYet404'
>;

function pathGet(
  route: Pick<RouteDescriptor, 'name' | 'family' | 'url'> & PathRules,
  target: (raw: RawRead) => Target,
): RouteDescriptor {
  const descriptor: RouteDescriptor = {
    ...route,
    pin: 'path',
    // Not found by path is no fact: the transaction or block may yet appear.
    deterministic404: [],
    method: 'GET',
    parse(raw: RawRead): ReadRequest {
      const t = target(raw);
      const { format, accept } = answerFormat(raw);
      const { path, lines } = withQuery(t.path, t.query ?? []);
      return {
        route: descriptor,
        version: null,
        item: t.item,
        format,
        identity: t.identity + lines,
        method: 'GET',
        path,
        accept,
      };
    },
  };
  return descriptor;
}

/** The version the path names (by_version routes). */
const pathVersion = (req: ReadRequest): bigint | null =>
  req.item !== undefined && 'version' in req.item ? req.item.version : null;
const pathHeight = (req: ReadRequest): bigint | null =>
  req.item !== undefined && 'height' in req.item ? req.item.height : null;
const none = (): null => null;

/** A path that names a version: it is the prune line, the routing and the answer's version. */
const BY_PATH_VERSION: Omit<PathRules, 'notYet404'> = {
  pruneBy: 'version',
  pruneAt: pathVersion,
  routingVersion: pathVersion,
  answerVersion: pathVersion,
};

const withTransactions = (raw: RawRead): ReadonlyArray<readonly [string, string | undefined]> => [
  ['with_transactions', withTransactionsParam(raw) ? 'true' : undefined],
];

export const historyRoutes: readonly RouteDescriptor[] = [
  // Beyond the latest version a node answers transaction_not_found.
  pathGet(
    {
      name: 'txn_by_version',
      family: 'transactions',
      url: '/v1/transactions/by_version/:txn_version',
      ...BY_PATH_VERSION,
      notYet404: ['transaction_not_found'],
    },
    (raw) => {
      const version = u64Param(raw, 'txn_version');
      return { path: `/v1/transactions/by_version/${version}`, identity: String(version), item: { version } };
    },
  ),
  // No pruning on a node for a hash: the entry is dropped once the version in it is pruned.
  pathGet(
    {
      name: 'txn_by_hash',
      family: 'transactions',
      url: '/v1/transactions/by_hash/:txn_hash',
      pruneBy: 'version',
      pruneAt: none,
      routingVersion: none,
      answerVersion: (_req, answer) => transactionVersion(answer),
      // by_hash looks in the mempool first: a pending transaction's answer will change.
      notFinal: (answer) => (isPending(answer) ? 'pending transaction' : undefined),
      // A hash the node does not know yet may be committed the next moment.
      notYet404: ['transaction_not_found'],
    },
    (raw) => {
      const hash = hashParam(raw, 'txn_hash');
      return { path: `/v1/transactions/by_hash/${hash}`, identity: hash, item: { hash } };
    },
  ),
  pathGet(
    {
      name: 'block_by_height',
      family: 'blocks',
      url: '/v1/blocks/by_height/:block_height',
      pruneBy: 'height',
      pruneAt: pathHeight,
      routingVersion: none,
      answerVersion: (_req, answer) => blockVersion(answer),
      // Above the latest block, or a block not complete yet.
      notYet404: ['block_not_found'],
    },
    (raw) => {
      const height = u64Param(raw, 'block_height');
      return {
        path: `/v1/blocks/by_height/${height}`,
        identity: String(height),
        item: { height },
        query: withTransactions(raw),
      };
    },
  ),
  pathGet(
    {
      name: 'block_by_version',
      family: 'blocks',
      url: '/v1/blocks/by_version/:version',
      ...BY_PATH_VERSION,
      notYet404: ['version_not_found', 'block_not_found'],
    },
    (raw) => {
      const version = u64Param(raw, 'version');
      return {
        path: `/v1/blocks/by_version/${version}`,
        identity: String(version),
        item: { version },
        query: withTransactions(raw),
      };
    },
  ),
];

/** TransactionData's variants: a committed transaction (its version first) or one still in the mempool. */
const ONCHAIN = 0;
const PENDING = 1;

const isBcs = (answer: AnswerFacts): boolean => answer.contentType.startsWith('application/x-bcs');

/**
 * A transaction's version: its JSON "version", or in BCS the u64 after
 * TransactionData::OnChain's variant byte. null when it cannot be told.
 */
function transactionVersion(answer: AnswerFacts): bigint | null {
  const body = answer.body;
  if (isBcs(answer)) return body.length >= 9 && body[0] === ONCHAIN ? body.readBigUInt64LE(1) : null;
  const version = jsonOf(answer)?.version;
  return typeof version === 'string' ? parseU64(version) : null;
}

/**
 * A block's version: its JSON "first_version". A BCS block's is not read
 * (BcsBlock's hash field is encoded differently across node releases), so the
 * answer's ledger version stands in: a longer TTL at worst, since a block is
 * checked against pruning by its height on every read.
 */
function blockVersion(answer: AnswerFacts): bigint | null {
  if (isBcs(answer)) return answer.ledger?.ledgerVersion ?? null;
  const first = jsonOf(answer)?.first_version;
  return typeof first === 'string' ? parseU64(first) : null;
}

/** An answer that cannot be read is taken for pending: it is not stored. */
function isPending(answer: AnswerFacts): boolean {
  if (isBcs(answer)) return answer.body[0] === PENDING;
  const parsed = jsonOf(answer);
  return parsed === undefined || parsed.type === 'pending_transaction';
}

/** The answer's JSON body as an object: as the node client parsed it, else parsed here; undefined if it is not one. */
function jsonOf(answer: AnswerFacts): Record<string, unknown> | undefined {
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
