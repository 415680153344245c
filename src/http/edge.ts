// The edge: what the proxy decides about a request before serving it, once, for
// every entry path. It adds the headers every reply of the exchange carries
// (CORS), answers a CORS preflight itself, and admits the request or refuses it
// (a client over its limit).
import type { NodeError } from '../errors.js';
import type { Cors } from './cors.js';
import type { Exchange } from './exchange.js';
import type { ClientRateLimiter } from './rate-limit.js';

export interface EdgeDeps {
  cors: Cors;
  /** the per-client rate limit, when enabled */
  limiter?: ClientRateLimiter;
}

export class Edge {
  constructor(private readonly deps: EdgeDeps) {}

  /**
   * Sets the headers the exchange's replies carry. True when the edge answered
   * the request itself (a preflight: no node call, no limit counted).
   */
  open(exchange: Exchange): boolean {
    const { cors } = this.deps;
    if (cors.isPreflight(exchange.req)) {
      exchange.endpoint = 'preflight';
      cors.answerPreflight(exchange.req, exchange.res);
      return true;
    }
    exchange.edgeHeaders = cors.headersFor(exchange.req);
    return false;
  }

  /** Counts the request against its limits; the refusal to answer with when it is over one. */
  admit(exchange: Exchange): NodeError | null {
    return this.deps.limiter?.admit(exchange.req) ?? null;
  }
}
