// The proxy's spans, through @opentelemetry/api alone: a request's span, the
// spans under it, and the W3C traceparent its node calls carry. Nothing here
// runs while tracing is off: a request then has no TraceScope, and every caller
// asks for one before it does anything (sdk.ts makes the Tracing when
// tracing.otlpEndpoint is set).
import type { IncomingHttpHeaders } from 'node:http';
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/** What the proxy traces with. */
export interface Tracing {
  tracer: Tracer;
  /** W3C trace context: reads a client's traceparent, writes a node call's */
  propagator: TextMapPropagator;
}

/** The names of the spans under a request's, and of their attributes (OpenTelemetry's own where one fits). */
export const SPAN = {
  lookup: 'cache lookup',
  redis: 'redis get',
  attempt: 'node attempt',
} as const;

export const ATTR = {
  method: 'http.request.method',
  status: 'http.response.status_code',
  path: 'url.path',
  client: 'client.address',
  errorType: 'error.type',
  routeFamily: 'ledger_proxy.route_family',
  cache: 'ledger_proxy.cache',
  tier: 'ledger_proxy.tier',
  tenant: 'ledger_proxy.tenant',
  requestId: 'ledger_proxy.request_id',
  upstream: 'ledger_proxy.upstream',
  node: 'ledger_proxy.node',
  outcome: 'ledger_proxy.outcome',
  found: 'ledger_proxy.found',
} as const;

/** One span of a traced request: the request's own, or one under it. */
export class TraceScope {
  #context: Context | undefined;

  constructor(
    readonly span: Span,
    /** the context the span was started in (its parent's) */
    private readonly parent: Context,
    private readonly tracing: Tracing,
  ) {}

  /** The context with this span in it: the parent of its children and of a node's work. Made when first asked: an unsampled hit never asks. */
  private get context(): Context {
    this.#context ??= trace.setSpan(this.parent, this.span);
    return this.#context;
  }

  /**
   * A span under this one; undefined when this trace is not sampled, so an
   * unsampled request makes no span beyond its own (its node calls still carry
   * its traceparent).
   */
  child(name: string, kind: SpanKind, attributes?: Attributes): TraceScope | undefined {
    if (!this.span.isRecording()) return undefined;
    const context = this.context;
    return new TraceScope(this.tracing.tracer.startSpan(name, { kind, attributes }, context), context, this.tracing);
  }

  /** A copy of `headers` with this span's traceparent (and tracestate): a node's work joins the trace under it. */
  headers(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
    const out = { ...headers };
    this.tracing.propagator.inject(this.context, out, defaultTextMapSetter);
    return out;
  }

  /** Ends the span; `error`: why it failed, in the proxy's own words. */
  end(attributes: Attributes, error?: string): void {
    const span = this.span;
    span.setAttributes(attributes);
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end();
  }
}

/**
 * The span of one client request, continuing the client's trace when it sent a
 * valid traceparent (the proxy's span is then its child).
 */
export function requestScope(tracing: Tracing, headers: IncomingHttpHeaders, method: string): TraceScope {
  const parent = tracing.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
  return new TraceScope(
    tracing.tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { [ATTR.method]: method } }, parent),
    parent,
    tracing,
  );
}

export { SpanKind };
