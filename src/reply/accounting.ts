// The accounting call every reply gets once, whichever path wrote it: the request
// metrics, the end of the request's span (while tracing is on) and the access log
// line. The access line names the version asked (or `latest`), never the whole query.
//
// A hit, from memory or Redis, is logged only at debug (at info, the log line is
// a sizeable part of a Redis hit's cost: bench scenario 2). A memory hit costs
// microseconds (bench scenario 1), so it is only counted; a Redis hit is observed
// in the duration histogram like every other reply, so a slow Redis shows there.
// The level is asked per reply, so a SIGHUP that changes log.level takes effect.
//
// Otherwise the level says how the reply went, as pino-http's customLogLevel is
// usually set: a 5xx at error, a 4xx at warn, except what is expected (a 429, a
// client that left before its reply was written), at info like every other reply.
// A reply of the proxy's own after every node failed lists what each node attempt
// got (`attempts`), which the client reads in its message and the log did not say.
import type { Level, Logger } from 'pino';
import type { ErrorReason } from '../errors.js';
import type { Exchange } from '../edge/exchange.js';
import type { PublicRequest } from '../edge/message.js';
import { endRequestSpan } from './request-span.js';

/** How a tenant's request ended: decided here, from why the proxy refused it, if it did. */
export type TenantOutcome = 'served' | 'unauthorized' | 'forbidden' | 'rate_limited' | 'shed';
export const TENANT_OUTCOMES: readonly TenantOutcome[] = [
  'served',
  'unauthorized',
  'forbidden',
  'rate_limited',
  'shed',
];

/** What the accounting needs of the metrics. */
export interface RequestMetrics {
  /** `seconds` undefined: counted only, not observed in the duration histogram */
  request(endpoint: string, cache: string, status: number, seconds: number | undefined): void;
  /** an error reply the proxy made itself, by why */
  proxyError(reason: ErrorReason): void;
  /** the tenants' metrics: a tenant's request, by outcome, with the node units it was charged */
  readonly tenants: { request(tenant: string, outcome: TenantOutcome, hit: boolean, nodeUnits: number): void };
}

export type Accounting = (exchange: Exchange, status: number) => void;

/** What the accounting needs of the edge: charging the exchange's tenant for the node work it caused (the units charged). */
export interface Settlement {
  settle(exchange: Exchange): number;
}

export function requestAccounting(
  metrics: RequestMetrics,
  logger: Logger,
  clientAddress: (req: PublicRequest) => string,
  edge: Settlement,
): Accounting {
  return (exchange, status) => {
    if (exchange.accounted) return;
    exchange.accounted = true;
    const ms = performance.now() - exchange.startedAt;
    const { endpoint, cache, tier, reason, tenant } = exchange;
    const hit = cache === 'HIT';
    metrics.request(endpoint, cache, status, hit && tier === 'memory' ? undefined : ms / 1000);
    if (reason !== undefined && reason !== 'node') metrics.proxyError(reason);
    const units = edge.settle(exchange);
    metrics.tenants.request(tenant?.name ?? 'anonymous', tenantOutcome(reason), hit, units);
    const trace = exchange.trace;
    if (trace !== undefined)
      endRequestSpan(trace, exchange, status, () => exchange.client ?? clientAddress(exchange.req));
    const level = hit ? 'debug' : accessLevel(exchange, status);
    if (!logger.isLevelEnabled(level)) return;
    const req = exchange.req;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    logger[level](
      {
        reqId: exchange.requestId,
        method: req.method,
        endpoint,
        path: query < 0 ? url : url.slice(0, query),
        version: query < 0 ? 'latest' : askedVersion(url.slice(query)),
        client: exchange.client ?? clientAddress(req),
        tenant: tenant?.name,
        status,
        bytes: exchange.bytes,
        cache,
        tier,
        upstream: exchange.upstream,
        reason,
        attempts: exchange.attempts,
        ms: Math.round(ms * 100) / 100,
      },
      'request',
    );
  };
}

/** The level of a reply's access line that is no hit: by its status, a refusal of the client's rate and a client gone at info. */
function accessLevel(exchange: Exchange, status: number): Level {
  if (status < 400 || status === 429) return 'info';
  // The client closed its connection before its reply was written whole: its own doing. A
  // socket the client closed stays half-open for the replies due (http/server.ts), which
  // are then written into it: its end, read before the reply, is the sign.
  const socket = exchange.req.socket;
  if ((socket.destroyed && !exchange.res.writableFinished) || socket.readableEnded) return 'info';
  return status >= 500 ? 'error' : 'warn';
}

/** Longer than any ledger version: a client's junk is cut to this in the log. */
const VERSION_FIELD_MAX = 24;
const LEDGER_VERSION_PARAM = /[?&]ledger_version=([^&#]*)/;

/**
 * The version a request asks for, as the client wrote it (`?ledger_version=N`),
 * or 'latest' when it names none: pinned and latest reads tell apart in the log
 * without the rest of the query, which may carry what is not the log's business.
 */
function askedVersion(query: string): string {
  const asked = LEDGER_VERSION_PARAM.exec(query)?.[1];
  return asked === undefined ? 'latest' : asked.slice(0, VERSION_FIELD_MAX);
}

function tenantOutcome(reason: ErrorReason | undefined): TenantOutcome {
  switch (reason) {
    case 'unauthorized':
    case 'forbidden':
    case 'rate_limited':
      return reason;
    case 'overloaded':
    case 'node_budget':
      return 'shed';
    default:
      return 'served';
  }
}
