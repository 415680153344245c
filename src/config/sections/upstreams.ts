// upstreams and routing: the nodes, and how calls go to them.
import { z } from 'zod';
import { defaultUpstreamName, normaliseUpstreamUrl } from '../net.js';
import { byteSize, MIB, nonNegativeInt, positiveInt } from './common.js';

const upstreamUrl = z.string().transform((raw, ctx) => {
  const checked = normaliseUpstreamUrl(raw);
  if (checked.ok) return checked.value;
  ctx.addIssue({ code: 'custom', message: checked.reason });
  return z.NEVER;
});

// Header names the proxy itself sets per call, or that describe one connection: an
// operator's value for them would break framing or be overwritten anyway.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept-encoding',
]);

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Extra headers sent with every call to one node (an API key of a hosted node). Names are lower-cased. */
const upstreamHeaders = z
  .record(z.string(), z.string())
  .superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      // The value is never echoed: it is usually a secret.
      const problem = !HEADER_NAME.test(name)
        ? 'must be an HTTP header name'
        : RESERVED_HEADERS.has(name.toLowerCase())
          ? 'is set by the proxy itself'
          : !HEADER_VALUE.test(value)
            ? 'must not contain control characters (CR, LF, NUL)'
            : null;
      if (problem !== null) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    }
  })
  .transform((headers) =>
    Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value.trim()])),
  )
  .default({});

const UpstreamSchema = z.strictObject({
  url: upstreamUrl,
  headers: upstreamHeaders,
  name: z.string().min(1).optional(),
  weight: positiveInt.default(1),
  role: z.enum(['normal', 'archive']).default('normal'),
  maxInFlight: positiveInt.optional(),
  maxRps: z.number().positive().optional(),
  // A load-balanced endpoint's backends differ by some versions: an answer that
  // far from the node's probe is not taken for a lie. One node never differs.
  spreadVersions: nonNegativeInt.default(0),
});

// Names label metrics and logs, so two upstreams must never share one. An
// upstream without a name is named by its position.
export const UpstreamsSchema = z
  .array(UpstreamSchema)
  .min(1)
  .superRefine((upstreams, ctx) => {
    const seen = new Map<string, number>();
    upstreams.forEach((upstream, index) => {
      const name = upstream.name ?? defaultUpstreamName(upstream.url, index);
      const first = seen.get(name);
      if (first !== undefined) {
        const given = upstream.name === undefined ? ', its default name: give it a name' : '';
        ctx.addIssue({
          code: 'custom',
          path: [index, 'name'],
          message: `duplicate name '${name}' (also upstreams.${first}${given})`,
        });
      }
      seen.set(name, first ?? index);
    });
  })
  .transform((upstreams) =>
    upstreams.map(({ url, name, ...rest }, index) => ({ url, name: name ?? defaultUpstreamName(url, index), ...rest })),
  );

export const RoutingSchema = z
  .strictObject({
    attemptTimeoutMs: positiveInt.default(5000),
    deadlineMs: positiveInt.default(10000),
    maxAttempts: positiveInt.default(3),
    probeIntervalMs: positiveInt.default(1000),
    maxLagVersions: nonNegativeInt.default(1000),
    hedgeAfterMs: nonNegativeInt.default(0), // 0 = no hedged second attempt
    // Four answers of the largest size a node may send (64 MiB), or thousands of
    // usual ones, at once; beyond it a read is shed rather than buffered.
    maxAnswerBytesInFlight: byteSize().default(256 * MIB),
    breaker: z
      .strictObject({
        failureThreshold: positiveInt.default(5),
        openMs: positiveInt.default(5000),
      })
      .prefault({}),
  })
  .refine((routing) => routing.deadlineMs >= routing.attemptTimeoutMs, {
    path: ['deadlineMs'],
    error: 'must be at least routing.attemptTimeoutMs',
  });
