// What a sim handler returns, and the helpers every handler shares: error replies
// (only through simErrorBody), the ledger-header rule, and ledger_version checks.
import type { IncomingHttpHeaders } from 'node:http';
import { SimError, simErrorBody } from './node-error.js';
import type { LedgerInfo } from '../ledger/info.js';
import { simLedgerHeaders, type SimHeaderNames, type SimVendorNames } from './ledger-headers.js';
import { simMediaType } from './parse/accept.js';
import { parseNodeU64 } from './parse/u64.js';
import type { SimFeedFault } from './feed/fault.js';
import type { SimSparseModel } from './sparse/model.js';
import type { SimLedger } from './state/ledger.js';
import type { SimStateView } from './state/state-view.js';
import type { SimHistory } from './state/transactions.js';

export interface SimReply {
  status: number;
  /** lower-case names */
  headers: Record<string, string>;
  body: Buffer;
}

/** One request as the handlers see it: the body is already read in full. */
export interface SimRequest {
  method: string;
  /** the raw (still %-encoded) path, without the query */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** a fault on the transaction feed, for its handler to apply to the page */
  feedFault?: SimFeedFault;
}

export interface SimContext {
  ledger: SimLedger;
  history: SimHistory;
  /** the state every route reads, in the node's write model */
  state: SimStateView;
  /** the sparse write model, whose write sets the BCS feed lists; null in the period model */
  sparse: SimSparseModel | null;
  names: SimVendorNames;
  headerNames: SimHeaderNames;
  gitHash: string;
  /** GET /accounts/{a} of a missing account: 200 with sequence number 0 (true) or 404 account_not_found */
  statelessAccounts: boolean;
  /** the node's max_account_{resources,modules}_page_size */
  maxPageSize: number;
}

export function reply(
  status: number,
  contentType: string,
  body: Buffer,
  headers: Record<string, string> = {},
): SimReply {
  return { status, headers: { 'content-type': contentType, ...headers }, body };
}

export function jsonReply(status: number, value: unknown): SimReply {
  return reply(status, 'application/json', Buffer.from(JSON.stringify(value)));
}

/** An error reply; ledger headers only when the node got as far as reading its ledger. */
export function errorReply(err: SimError, ctx: SimContext, info?: LedgerInfo, status: number = err.status): SimReply {
  const out = reply(status, 'application/json', simErrorBody(err));
  return info === undefined ? out : withLedgerHeaders(out, ctx, info);
}

export function withLedgerHeaders(out: SimReply, ctx: SimContext, info: LedgerInfo): SimReply {
  Object.assign(out.headers, simLedgerHeaders(ctx.headerNames, info));
  return out;
}

/**
 * Runs the part of a handler that happens after the node has read its ledger: the
 * reply (success or SimError) carries that one snapshot's seven headers.
 */
export function atLedger(ctx: SimContext, run: (info: LedgerInfo) => SimReply): SimReply {
  const info = ctx.ledger.info();
  try {
    return withLedgerHeaders(run(info), ctx, info);
  } catch (err) {
    if (err instanceof SimError) return errorReply(err, ctx, info);
    throw err;
  }
}

/** The ledger_version query parameter: null when absent; not a u64 → 400 (no ledger headers). */
export function requestedVersion(query: URLSearchParams): bigint | null {
  const text = query.get('ledger_version');
  if (text === null) return null;
  const version = parseNodeU64(text);
  if (version === null) {
    throw SimError.badRequest(`failed to parse query parameter \`ledger_version\`: not a u64: ${JSON.stringify(text)}`);
  }
  return version;
}

/** The version to read at: latest when absent; above latest → 404, below oldest → 410. */
export function readVersion(requested: bigint | null, info: LedgerInfo): bigint {
  if (requested === null) return info.ledgerVersion;
  if (requested > info.ledgerVersion) throw SimError.versionNotFound(requested, info.ledgerVersion);
  if (requested < info.oldestLedgerVersion) throw SimError.pruned(requested);
  return requested;
}

/** A path segment, %-decoded; bad %-encoding → 400. */
export function pathParam(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw SimError.badRequest(`failed to parse path parameter \`${name}\`: bad percent-encoding`);
  }
}

/** A JSON request body, which must be sent as application/json. */
export function jsonBody(req: SimRequest): unknown {
  if (simMediaType(req.headers['content-type']) !== 'application/json') {
    throw SimError.badRequest(
      `unsupported content type ${JSON.stringify(req.headers['content-type'] ?? '')}, expected application/json`,
    );
  }
  try {
    return JSON.parse(req.body.toString('utf8'));
  } catch (err) {
    throw SimError.badRequest(`parse request payload error: ${(err as Error).message}`);
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
