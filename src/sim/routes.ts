// Which endpoint a request is for (counters and faults are kept per route), and
// the dispatch to its handler. Anything unknown is a 404 error body, never a crash.
import { NodeError } from '../errors.js';
import { ledgerInfoJson } from '../ledger/info.js';
import { handleModule } from './handlers/module.js';
import { handleRawItem } from './handlers/raw-item.js';
import { handleView } from './handlers/view.js';
import { atLedger, errorReply, jsonReply, type SimContext, type SimReply, type SimRequest } from './reply.js';

export const SIM_ROUTES = ['raw_item', 'view', 'ledger_info', 'module', 'other'] as const;
export type SimRoute = (typeof SIM_ROUTES)[number];

const RAW_ITEM = /^\/v1\/tables\/([^/]+)\/raw_item$/;
const MODULE = /^\/v1\/accounts\/([^/]+)\/module\/([^/]+)$/;
const LEDGER_INFO = /^\/v1\/?$/;

export function classifyRoute(method: string, path: string): SimRoute {
  if (method === 'POST' && RAW_ITEM.test(path)) return 'raw_item';
  if (method === 'POST' && path === '/v1/view') return 'view';
  if (method === 'GET' && LEDGER_INFO.test(path)) return 'ledger_info';
  if (method === 'GET' && MODULE.test(path)) return 'module';
  return 'other';
}

function route(req: SimRequest, ctx: SimContext): SimReply {
  switch (classifyRoute(req.method, req.path)) {
    case 'raw_item':
      return handleRawItem(req, ctx, RAW_ITEM.exec(req.path)![1]);
    case 'view':
      return handleView(req, ctx);
    case 'ledger_info':
      return atLedger(ctx, (info) => jsonReply(200, ledgerInfoJson(info, ctx.gitHash)));
    case 'module': {
      const [, address, name] = MODULE.exec(req.path)!;
      return handleModule(req, ctx, address, name);
    }
    case 'other':
      throw new NodeError(404, 'web_framework_error', `Not found: ${req.method} ${req.path}`);
  }
}

/** The reply to a fully read request. A NodeError thrown before the ledger is read has no ledger headers. */
export function dispatch(req: SimRequest, ctx: SimContext): SimReply {
  try {
    return route(req, ctx);
  } catch (err) {
    return errorReply(NodeError.from(err), ctx);
  }
}
