// Which route a request is for (counters and faults are kept per route), and the
// dispatch to its handler. Anything unknown is a 404 error body, never a crash.
import { SimError } from './node-error.js';
import { simLedgerInfoJson } from './ledger-headers.js';
import { simAnswerFormat } from './parse/accept.js';
import { handleAccount, handleBalance, handleList, handleModule, handleResource } from './handlers/accounts.js';
import {
  handleBlockByHeight,
  handleBlockByVersion,
  handleGasPrice,
  handleTransactionByHash,
  handleTransactionByVersion,
  handleTransactions,
} from './handlers/history.js';
import { handleRawItem } from './handlers/raw-item.js';
import { handleStateValue, handleTableItem } from './handlers/table-item.js';
import { handleView } from './handlers/view.js';
import { atLedger, errorReply, jsonReply, type SimContext, type SimReply, type SimRequest } from './reply.js';

export const SIM_ROUTES = [
  'raw_item',
  'table_item',
  'state_value',
  'view',
  'ledger_info',
  'account',
  'resources',
  'resource',
  'modules',
  'module',
  'balance',
  'txn_by_version',
  'txn_by_hash',
  'transactions',
  'feed',
  'block_by_height',
  'block_by_version',
  'gas_price',
  'other',
] as const;
export type SimRoute = (typeof SIM_ROUTES)[number];

interface Route {
  name: Exclude<SimRoute, 'other' | 'feed'>;
  method: 'GET' | 'POST';
  pattern: RegExp;
  handle(req: SimRequest, ctx: SimContext, params: string[]): SimReply;
}

const ROUTES: Route[] = [
  {
    name: 'raw_item',
    method: 'POST',
    pattern: /^\/v1\/tables\/([^/]+)\/raw_item$/,
    handle: (r, c, [h]) => handleRawItem(r, c, h),
  },
  {
    name: 'table_item',
    method: 'POST',
    pattern: /^\/v1\/tables\/([^/]+)\/item$/,
    handle: (r, c, [h]) => handleTableItem(r, c, h),
  },
  {
    name: 'state_value',
    method: 'POST',
    pattern: /^\/v1\/experimental\/state_values\/raw$/,
    handle: (r, c) => handleStateValue(r, c),
  },
  { name: 'view', method: 'POST', pattern: /^\/v1\/view$/, handle: (r, c) => handleView(r, c) },
  {
    name: 'ledger_info',
    method: 'GET',
    pattern: /^\/v1\/?$/,
    handle: (_r, c) => atLedger(c, (info) => jsonReply(200, simLedgerInfoJson(info, c.gitHash))),
  },
  {
    name: 'account',
    method: 'GET',
    pattern: /^\/v1\/accounts\/([^/]+)$/,
    handle: (r, c, [a]) => handleAccount(r, c, a),
  },
  {
    name: 'resources',
    method: 'GET',
    pattern: /^\/v1\/accounts\/([^/]+)\/resources$/,
    handle: (r, c, [a]) => handleList(r, c, a, 'resources'),
  },
  {
    name: 'resource',
    method: 'GET',
    pattern: /^\/v1\/accounts\/([^/]+)\/resource\/([^/]+)$/,
    handle: (r, c, [a, t]) => handleResource(r, c, a, t),
  },
  {
    name: 'modules',
    method: 'GET',
    pattern: /^\/v1\/accounts\/([^/]+)\/modules$/,
    handle: (r, c, [a]) => handleList(r, c, a, 'modules'),
  },
  {
    name: 'module',
    method: 'GET',
    pattern: /^\/v1\/accounts\/([^/]+)\/module\/([^/]+)$/,
    handle: (r, c, [a, m]) => handleModule(r, c, a, m),
  },
  {
    name: 'balance',
    method: 'GET',
    pattern: /^\/v1\/accounts\/([^/]+)\/balance\/([^/]+)$/,
    handle: (r, c, [a, t]) => handleBalance(r, c, a, t),
  },
  {
    name: 'txn_by_version',
    method: 'GET',
    pattern: /^\/v1\/transactions\/by_version\/([^/]+)$/,
    handle: (r, c, [v]) => handleTransactionByVersion(r, c, v),
  },
  {
    name: 'txn_by_hash',
    method: 'GET',
    pattern: /^\/v1\/transactions\/by_hash\/([^/]+)$/,
    handle: (r, c, [h]) => handleTransactionByHash(r, c, h),
  },
  { name: 'transactions', method: 'GET', pattern: /^\/v1\/transactions$/, handle: (r, c) => handleTransactions(r, c) },
  {
    name: 'block_by_height',
    method: 'GET',
    pattern: /^\/v1\/blocks\/by_height\/([^/]+)$/,
    handle: (r, c, [h]) => handleBlockByHeight(r, c, h),
  },
  {
    name: 'block_by_version',
    method: 'GET',
    pattern: /^\/v1\/blocks\/by_version\/([^/]+)$/,
    handle: (r, c, [v]) => handleBlockByVersion(r, c, v),
  },
  { name: 'gas_price', method: 'GET', pattern: /^\/v1\/estimate_gas_price$/, handle: (_r, c) => handleGasPrice(c) },
];

function find(method: string, path: string): { route: Route; params: string[] } | undefined {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const match = route.pattern.exec(path);
    if (match !== null) return { route, params: match.slice(1) };
  }
  return undefined;
}

/** The route a request is counted and faulted under: the transaction list in BCS is the feed a proxy follows. */
export function classifyRoute(method: string, path: string, accept?: string): SimRoute {
  const name = find(method, path)?.route.name ?? 'other';
  return name === 'transactions' && simAnswerFormat(accept) === 'bcs' ? 'feed' : name;
}

/** The reply to a fully read request. A SimError thrown before the ledger is read has no ledger headers. */
export function dispatch(req: SimRequest, ctx: SimContext): SimReply {
  try {
    const found = find(req.method, req.path);
    if (found === undefined) throw new SimError(404, 'web_framework_error', `Not found: ${req.method} ${req.path}`);
    return found.route.handle(req, ctx, found.params);
  } catch (err) {
    return errorReply(SimError.from(err), ctx);
  }
}
