// Transactions and blocks: immutable by their path, with no ledger_version (a
// node ignores one, so the proxy does too) (SPEC-wallet-reads §1, §4).
// Cached once they exist; never a 404 (the item may appear) nor a pending transaction.
import type { PathItem, ReadRequest } from '../wire/read-request.js';
import { answerFormat, hashParam, u64Param, withQuery, withTransactionsParam } from './params.js';
import type { RawRead, RouteDescriptor } from './route.js';

interface Target {
  path: string;
  identity: string;
  item: PathItem;
  query?: ReadonlyArray<readonly [string, string | undefined]>;
}

function pathGet(route: Pick<RouteDescriptor, 'name' | 'family' | 'url' | 'itemVersion'>, target: (raw: RawRead) => Target): RouteDescriptor {
  const descriptor: RouteDescriptor = {
    ...route,
    pin: 'path',
    deterministic404: [],
    method: 'GET',
    parse(raw: RawRead): ReadRequest {
      const t = target(raw);
      const { format, accept } = answerFormat(raw);
      const { path, lines } = withQuery(t.path, t.query ?? []);
      return { route: descriptor, version: null, item: t.item, format, identity: t.identity + lines, method: 'GET', path, accept };
    },
  };
  return descriptor;
}

const withTransactions = (raw: RawRead): ReadonlyArray<readonly [string, string | undefined]> => [['with_transactions', withTransactionsParam(raw) ? 'true' : undefined]];

export const historyRoutes: readonly RouteDescriptor[] = [
  pathGet({ name: 'txn_by_version', family: 'transactions', url: '/v1/transactions/by_version/:txn_version', itemVersion: 'path' }, (raw) => {
    const version = u64Param(raw, 'txn_version');
    return { path: `/v1/transactions/by_version/${version}`, identity: String(version), item: { version } };
  }),
  // No pruning on a node for a hash: the entry is dropped once the version in it is pruned.
  pathGet({ name: 'txn_by_hash', family: 'transactions', url: '/v1/transactions/by_hash/:txn_hash', itemVersion: 'answer' }, (raw) => {
    const hash = hashParam(raw, 'txn_hash');
    return { path: `/v1/transactions/by_hash/${hash}`, identity: hash, item: { hash } };
  }),
  pathGet({ name: 'block_by_height', family: 'blocks', url: '/v1/blocks/by_height/:block_height', itemVersion: 'answer' }, (raw) => {
    const height = u64Param(raw, 'block_height');
    return { path: `/v1/blocks/by_height/${height}`, identity: String(height), item: { height }, query: withTransactions(raw) };
  }),
  pathGet({ name: 'block_by_version', family: 'blocks', url: '/v1/blocks/by_version/:version', itemVersion: 'path' }, (raw) => {
    const version = u64Param(raw, 'version');
    return { path: `/v1/blocks/by_version/${version}`, identity: String(version), item: { version }, query: withTransactions(raw) };
  }),
];
