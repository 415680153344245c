// upstreams and routing: the nodes, and how calls go to them.
import { z } from 'zod';
import { defaultUpstreamName, normaliseUpstreamUrl } from '../net.js';
import { byteSize, MIB, nonNegativeInt, positiveInt } from './common.js';

const upstreamUrl = z
  .string()
  .transform((raw, ctx) => {
    const checked = normaliseUpstreamUrl(raw);
    if (checked.ok) return checked.value;
    ctx.addIssue({ code: 'custom', message: checked.reason });
    return z.NEVER;
  })
  // For editors (the JSON Schema); the transform checks the rest.
  .meta({ pattern: '^(?:sim|https?://.+)$' });

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
  url: upstreamUrl.describe(
    "The node's base URL (a `/v1` suffix is accepted; a path prefix before it, as some hosted nodes have, is kept for every call), or `sim` for the built-in simulated node. Shown with the node's name in its log lines, `/readyz` and `--check`, never to clients; it may hold no credentials and no query, so a key goes in `headers`.",
  ),
  headers: upstreamHeaders.describe(
    'Headers sent with every call to this node (probes, reads, passthrough), such as `Authorization: "Bearer <key>"` for a hosted node; they replace a client\'s header of the same name, and are never logged.',
  ),
  name: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The node's one name, in logs, `/readyz`, metrics labels and the error messages clients see, so never an address by default (and never a secret). Unset: `node1`, `node2`, … by its position (`sim` for sim). Name your nodes when a reload may reorder the list, so each keeps its metric series.",
    ),
  weight: positiveInt.default(1).describe('Its share of traffic among equally loaded nodes.'),
  role: z
    .enum(['normal', 'archive'])
    .default('normal')
    .describe('`archive`: used for versions every normal node has pruned.'),
  maxInFlight: positiveInt.optional().describe('Calls in flight to this node at once. Unset: unlimited.'),
  maxRps: z.number().positive().optional().describe('Calls per second to this node. Unset: unlimited.'),
  // One node never differs from itself.
  spreadVersions: nonNegativeInt
    .default(0)
    .describe(
      "For a load-balanced endpoint (a provider's gateway): how many versions apart its backends may be. An answer's ledger version is judged against the node's probe with this much leeway, not taken for a lie.",
    ),
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
  )
  .describe(
    'The nodes: at least one. Unset: one built-in simulated node (`sim`). The environment variable gives a comma-separated list of URLs.',
  );

export const RoutingSchema = z
  .strictObject({
    attemptTimeoutMs: positiveInt
      .default(5000)
      .describe(
        "One attempt on one node (and a probe), from when its request is written to its answer's last byte; the wait for a connection before the write is bounded by as long again. A pause of the proxy's own process (a GC pause, CPU contention) before the write is not counted, and an answer that came during one is used.",
      ),
    deadlineMs: positiveInt
      .default(10000)
      .describe(
        "A whole client request, retries included, and a passthrough answer to its last byte; at least `attemptTimeoutMs`. A node that has not delivered a streamed answer whole by then is cut off (the time the client's socket does not accept the answer is not counted).",
      ),
    maxAttempts: positiveInt
      .default(3)
      .describe('Nodes tried per request (on connection errors, timeouts, 5xx and 429).'),
    probeIntervalMs: positiveInt
      .default(1000)
      .describe(
        "How often each node's `GET /v1` is probed for health and lag; also how long a node that sheds load (503 `overloaded`) without a `Retry-After` is left alone, at most a second.",
      ),
    maxLagVersions: nonNegativeInt
      .default(1000)
      .describe('A node further behind the most advanced one takes no latest reads.'),
    hedgeAfterMs: nonNegativeInt
      .default(0)
      .describe('A latest read also asks a second node when the first is this slow; `0`: off.'),
    // Four answers of the largest size a node may send (64 MiB), or thousands of
    // usual ones, at once; beyond it a read is shed rather than buffered.
    maxAnswerBytesInFlight: byteSize()
      .default(256 * MIB)
      .describe(
        'Bytes of node answers being received at once, decoded, over all reads (and passthrough error answers); an answer that would go beyond it is refused before it is buffered, and its read answered 503. Each such answer is also capped at 64MiB, decoded. A passthrough success is streamed on as it arrives and counts in neither.',
      ),
    breaker: z
      .strictObject({
        failureThreshold: positiveInt
          .default(5)
          .describe(
            "Consecutive failed calls (transport errors, timeouts, 5xx) that open a node's circuit; a successful probe does not reset the count, a failed one adds to it.",
          ),
        openMs: positiveInt
          .default(5000)
          .describe(
            'How long an open circuit keeps a node out; then one trial call (or probe) closes it or opens it again.',
          ),
      })
      .prefault({})
      .describe("Each node's circuit breaker."),
  })
  .refine((routing) => routing.deadlineMs >= routing.attemptTimeoutMs, {
    path: ['deadlineMs'],
    error: 'must be at least routing.attemptTimeoutMs',
  })
  .describe('How calls go to the nodes: timeouts, retries, probes and hedging.');
