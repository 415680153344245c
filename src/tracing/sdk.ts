// The OpenTelemetry SDK, made once at start when tracing.otlpEndpoint is set (app.ts
// imports this module only then): a tracer sampling by ratio, spans sent in
// batches to an OTLP/HTTP collector, and the W3C propagator. The SDK's own
// OTEL_BSP_* (batching) and OTEL_EXPORTER_OTLP_* (collector headers, timeout)
// environment variables apply where the config says nothing.
import { type ExportResult, ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import { settlesWithin } from '../timing/settles-within.js';
import type { Tracing } from './scope.js';

/** A collector that does not answer within this loses the batch: spans are never worth a backlog. */
const EXPORT_TIMEOUT_MS = 5000;
/** How long a shutdown waits for the last spans to be sent. */
const CLOSE_WAIT_MS = 2000;
/** Failed exports are logged at most this often, with how many failed since. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/** tracing.* of the config, but otlpEndpoint (given on its own, once known to be set) */
export interface TracingSettings {
  sampleRatio: number;
  serviceName: string;
  followClientSampling: boolean;
}

export interface TracingSdk extends Tracing {
  /** sends the spans not sent yet, then stops; bounded by CLOSE_WAIT_MS */
  close(): Promise<void>;
}

export function startTracing(settings: TracingSettings, endpoint: string, logger: Logger, version: string): TracingSdk {
  const exporter = new LoggedExporter(
    new OTLPTraceExporter({ url: endpoint, timeoutMillis: EXPORT_TIMEOUT_MS }),
    logger,
  );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': version }),
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer('ledger-proxy', version),
    propagator: new W3CTraceContextPropagator(),
    close: () =>
      settlesWithin(
        provider.shutdown().catch(() => undefined),
        CLOSE_WAIT_MS,
        undefined,
      ),
  };
}

/**
 * A request with no traceparent starts a trace with probability sampleRatio. A
 * span under one of the proxy's follows its parent. A client's parent decides
 * only with followClientSampling.
 */
function samplerOf(settings: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.sampleRatio);
  if (settings.followClientSampling) return new ParentBasedSampler({ root: ratio });
  return new ParentBasedSampler({ root: ratio, remoteParentSampled: ratio, remoteParentNotSampled: ratio });
}

/** The exporter, with failed exports logged (at most once a minute) rather than lost in the SDK's silent diagnostics. */
class LoggedExporter implements SpanExporter {
  private failed = 0;
  private loggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.failure(spans.length, result.error);
      done(result);
    });
  }

  private failure(spans: number, err: Error | undefined): void {
    this.failed += spans;
    const now = performance.now();
    if (now - this.loggedAt < FAILURE_LOG_INTERVAL_MS) return;
    this.loggedAt = now;
    this.logger.warn(
      { spans: this.failed, err },
      'tracing: spans could not be sent to the collector (tracing.otlpEndpoint)',
    );
    this.failed = 0;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
