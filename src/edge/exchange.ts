// One client request and its reply, from the moment the public listener sees it
// to the accounting once its reply is written. Every entry path (the read
// responder, fastify's passthrough and error handlers) finds the same exchange
// on the request, so what the edge decided (CORS, request id, tenant) and how the
// request was served reach the reply writer and the accounting call (reply/).
import type { ErrorReason } from '../errors.js';
import type { TraceScope } from '../tracing/scope.js';
import type { PublicReply, PublicRequest } from './message.js';
import type { Tenant } from './tenants.js';

export interface Exchange {
  readonly req: PublicRequest;
  readonly res: PublicReply;
  /** performance.now() when the request arrived */
  readonly startedAt: number;
  /** the metrics and log label: a cached route's family, 'passthrough', 'preflight' or 'other' */
  endpoint: string;
  /** X-Request-Id: on the reply, the node calls and every log line of the request */
  requestId: string;
  /**
   * Headers the edge adds to every reply of this exchange (CORS), as flat name,
   * value pairs; undefined when there are none.
   */
  edgeHeaders: string[] | undefined;
  /** the Vary the edge asks of every reply of this exchange (Origin), joined by the writer with a reply's own */
  vary: string | undefined;
  /** how the reply was served: HIT, MISS, COALESCED, STALE or BYPASS */
  cache: string;
  tier?: string;
  /** the node that answered, when one did */
  upstream?: string;
  /** the reply body's length as sent */
  bytes?: number;
  /** why the proxy made an error reply itself (never sent) */
  reason?: ErrorReason;
  /** what each node attempt got, when the proxy's error reply says no node's answer could be used (never sent apart from its message) */
  attempts?: readonly string[];
  /** who is calling, once the edge knows (api.md §10.2) */
  tenant?: Tenant;
  /** the client's address, as server.trustProxy says to read it, when the edge needed it */
  client?: string;
  /** set once the exchange is counted: an exchange is accounted exactly once */
  accounted: boolean;
  /** the request's span, while tracing is on (tracing.otlpEndpoint); never set while it is off */
  trace?: TraceScope;
}

const EXCHANGE = Symbol('ledger-proxy.exchange');
type WithExchange = PublicRequest & { [EXCHANGE]?: Exchange };

export function openExchange(req: PublicRequest, res: PublicReply, endpoint: string, requestId: string): Exchange {
  // Every field from the start, in one order: every exchange has one shape, so the
  // writer and the accounting read them through monomorphic property accesses.
  const exchange: Exchange = {
    req,
    res,
    startedAt: performance.now(),
    endpoint,
    requestId,
    edgeHeaders: undefined,
    vary: undefined,
    cache: 'BYPASS',
    tier: undefined,
    upstream: undefined,
    bytes: undefined,
    reason: undefined,
    attempts: undefined,
    tenant: undefined,
    client: undefined,
    accounted: false,
    trace: undefined,
  };
  (req as WithExchange)[EXCHANGE] = exchange;
  return exchange;
}

/** The exchange the public entry opened for `req`; undefined for a request it never saw (the admin listener). */
export function exchangeOf(req: PublicRequest): Exchange | undefined {
  return (req as WithExchange)[EXCHANGE];
}
