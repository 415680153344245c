// The span of one client request: opened as the public entry sees the request,
// ended by the accounting call (accounting.ts) with what the access log line says of it (no
// API key, no body, no query, no header but the traceparent it continues).
import type { Attributes } from '@opentelemetry/api';
import { ATTR, requestScope, type TraceScope, type Tracing } from '../tracing/scope.js';
import type { Exchange } from '../edge/exchange.js';

export function openRequestSpan(tracing: Tracing, exchange: Exchange): void {
  exchange.trace = requestScope(tracing, exchange.req.headers, exchange.req.method ?? 'GET');
}

/** `client`: the client's address as the access log shows it. */
export function endRequestSpan(trace: TraceScope, exchange: Exchange, status: number, client: () => string): void {
  const span = trace.span;
  // An unsampled request's span records nothing: nothing is gathered for it.
  if (!span.isRecording()) return span.end();
  const { req, endpoint, tier, tenant, upstream, reason } = exchange;
  span.updateName(`${req.method} ${endpoint}`);
  const attributes: Attributes = {
    [ATTR.routeFamily]: endpoint,
    [ATTR.status]: status,
    [ATTR.cache]: exchange.cache,
    [ATTR.requestId]: exchange.requestId,
    [ATTR.client]: client(),
    [ATTR.tenant]: tenant?.name ?? 'anonymous',
  };
  const path = req.url?.split('?', 1)[0];
  if (path !== undefined) attributes[ATTR.path] = path;
  if (tier !== undefined) attributes[ATTR.tier] = tier;
  if (upstream !== undefined) attributes[ATTR.upstream] = upstream;
  if (reason !== undefined) attributes[ATTR.errorType] = reason;
  // A server span is an error only when the server failed (OpenTelemetry's HTTP conventions): a 4xx is the client's.
  trace.end(attributes, status >= 500 ? `HTTP ${status}` : undefined);
}
