// tracing: OpenTelemetry spans, sent over OTLP/HTTP. Off unless otlpEndpoint is set.
import { z } from 'zod';

/**
 * Where spans are sent: an http(s) URL. A bare origin (no path, or `/`) gets the
 * OTLP traces path `/v1/traces` appended, as OTEL_EXPORTER_OTLP_ENDPOINT does; any
 * other path is used as written.
 */
const otlpEndpoint = z
  .string()
  .transform((raw, ctx) => {
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
  })
  // For editors (the JSON Schema); the transform checks the rest.
  .meta({ pattern: '^https?://' });

export const TracingSchema = z
  .strictObject({
    // Absent: tracing off, no SDK loaded, no span made, no traceparent sent.
    otlpEndpoint: otlpEndpoint
      .optional()
      .describe(
        'An OTLP/HTTP collector (`http://otel-collector:4318`; a bare origin gets `/v1/traces`, any other path is used as written): spans of every request, its cache lookup and each node attempt are sent there, and every node call of a traced request carries a W3C `traceparent`. Unset: tracing off.',
      ),
    // Hits are most requests and their spans say little the metrics do not; a
    // hundredth still shows every kind of miss and node failure within seconds at
    // production rates, at a hundredth of the spans' cost and of the collector's intake.
    sampleRatio: z
      .number()
      .min(0)
      .max(1)
      .default(0.01)
      .describe("The share of the requests without a client's `traceparent` that start a trace (0 to 1)."),
    serviceName: z.string().min(1).default('ledger-proxy').describe('`service.name` of the spans.'),
    // false: a client cannot have each of its requests traced.
    followClientSampling: z
      .boolean()
      .default(true)
      .describe(
        "A client's `traceparent` is always continued; `true`: its sampled flag decides whether the request is traced, `false`: `sampleRatio` decides for every request.",
      ),
  })
  .prefault({})
  .describe('OpenTelemetry spans, sent over OTLP/HTTP; off unless `otlpEndpoint` is set.');
