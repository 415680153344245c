// tracing: OpenTelemetry spans, sent over OTLP/HTTP. Off unless otlpEndpoint is set.
import { z } from 'zod';

/**
 * Where spans are sent: an http(s) URL. A bare origin (no path, or `/`) gets the
 * OTLP traces path `/v1/traces` appended, as OTEL_EXPORTER_OTLP_ENDPOINT does; any
 * other path is used as written.
 */
const otlpEndpoint = z.string().transform((raw, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be an http(s) URL of an OTLP/HTTP collector (http://collector:4318)',
    });
    return z.NEVER;
  }
  if (url.pathname !== '/') return raw;
  url.pathname = '/v1/traces';
  return url.toString();
});

export const TracingSchema = z
  .strictObject({
    otlpEndpoint: otlpEndpoint.optional(), // absent = tracing off: no SDK loaded, no span made, no traceparent sent
    // A share of the requests that start a trace here. Hits are most requests and
    // their spans say little the metrics do not; a hundredth still shows every
    // kind of miss and node failure within seconds at production rates, at a
    // hundredth of the spans' cost and of the collector's intake.
    sampleRatio: z.number().min(0).max(1).default(0.01),
    serviceName: z.string().min(1).default('ledger-proxy'),
    // A client's traceparent is always continued; this says whether its sampled
    // flag decides too (false: sampleRatio decides for every request, so a client
    // cannot have each of its requests traced).
    followClientSampling: z.boolean().default(true),
  })
  .prefault({});
