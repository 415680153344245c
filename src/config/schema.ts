// The config contract (DESIGN.md): one schema that is at once the types, the
// defaults and the validation, so the three cannot drift apart. Every object is
// strict because a misspelt key that is silently ignored leaves a default in force
// that the operator thinks they changed.

import { z } from 'zod';
import { VENDOR_PATTERN } from '../wire/vendor.js';
import { checkRedisUrl, defaultUpstreamName, isTrustProxy, normaliseUpstreamUrl, SIM_URL } from './net.js';

export type DeepReadonly<T> = T extends readonly (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

const port = z.int().min(0).max(65535);
const positiveInt = z.int().positive();
const nonNegativeInt = z.int().nonnegative();
const host = z.string().min(1);
const chainId = z.int().min(0).max(255);

const MIB = 1024 * 1024;

const ServerSchema = z.strictObject({
  host: host.default('127.0.0.1'),
  port: port.default(8080),
  // Nodes cap request bodies at 8 MiB; above 64 MiB a single request could exhaust memory.
  bodyLimitBytes: z
    .int()
    .min(1)
    .max(64 * MIB)
    .default(8 * MIB),
  trustProxy: z
    .custom<boolean | number | string>(isTrustProxy, {
      error: 'must be true, false, a hop count, or a comma-separated list of IP addresses / CIDR ranges',
    })
    .default(false),
  // The whole request, headers included, must arrive within this: a client sending
  // a byte a second cannot hold a connection. 0 turns the limit off.
  requestTimeoutMs: nonNegativeInt.default(30_000),
  // SIGTERM: how long requests in flight may take to finish before every
  // connection is closed and the process exits.
  shutdownTimeoutMs: positiveInt.default(10_000),
  // Processes sharing the port (node:cluster), each with its own memory tier and
  // the shared Redis tier; "auto" = one per CPU.
  workers: z.union([z.literal('auto'), positiveInt.max(256)]).default(1),
});

const AdminSchema = z.strictObject({
  host: host.default('127.0.0.1'),
  port: port.default(9090), // 0 = no admin server
});

const upstreamUrl = z.string().transform((raw, ctx) => {
  const checked = normaliseUpstreamUrl(raw);
  if (checked.ok) return checked.value;
  ctx.addIssue({ code: 'custom', message: checked.reason });
  return z.NEVER;
});

// Header names the proxy itself sets per call, or that describe one connection: an
// operator's value for them would break framing or be overwritten anyway.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'accept-encoding']);

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
  .transform((headers) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value.trim()])))
  .default({});

const UpstreamSchema = z
  .strictObject({
    url: upstreamUrl,
    headers: upstreamHeaders,
    name: z.string().min(1).optional(),
    weight: positiveInt.default(1),
    role: z.enum(['normal', 'archive']).default('normal'),
    maxInFlight: positiveInt.optional(),
    maxRps: z.number().positive().optional(),
  })
  .transform(({ url, name, ...rest }) => ({ url, name: name ?? defaultUpstreamName(url), ...rest }));

// Names label metrics and logs, so two upstreams must never share one.
const UpstreamsSchema = z
  .array(UpstreamSchema)
  .min(1)
  .superRefine((upstreams, ctx) => {
    const seen = new Map<string, number>();
    upstreams.forEach((upstream, index) => {
      const first = seen.get(upstream.name);
      if (first !== undefined) {
        const message = `duplicate name '${upstream.name}' (also upstreams.${first})`;
        ctx.addIssue({ code: 'custom', path: [index, 'name'], message });
      }
      seen.set(upstream.name, first ?? index);
    });
  });

const RoutingSchema = z
  .strictObject({
    attemptTimeoutMs: positiveInt.default(5000),
    deadlineMs: positiveInt.default(10000),
    maxAttempts: positiveInt.default(3),
    probeIntervalMs: positiveInt.default(1000),
    maxLagVersions: nonNegativeInt.default(1000),
    hedgeAfterMs: nonNegativeInt.default(0), // 0 = no hedged second attempt
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

const redisUrl = z.string().transform((raw, ctx) => {
  const checked = checkRedisUrl(raw);
  if (checked.ok) return checked.value;
  ctx.addIssue({ code: 'custom', message: checked.reason });
  return z.NEVER;
});

/** Exactly one of url (one server) or cluster (seed nodes of a Redis Cluster). */
export type RedisTarget = { url: string; cluster?: undefined } | { url?: undefined; cluster: string[] };

const RedisSchema = z
  .strictObject({
    url: redisUrl.optional(),
    cluster: z.array(redisUrl).min(1).optional(),
    keyPrefix: z.string().default('ledger-proxy:'),
    // Entries expire near the time their version is pruned, but never later than this.
    maxTtlSeconds: positiveInt.default(604800),
    commandTimeoutMs: positiveInt.default(200),
    // One proxy fills a missing entry while the others wait for it, up to fillLockMs.
    fillLock: z.boolean().default(true),
    fillLockMs: positiveInt.default(2000),
  })
  .superRefine((redis, ctx) => {
    if (redis.url !== undefined && redis.cluster !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['cluster'], message: 'give either url or cluster, not both' });
    } else if (redis.url === undefined && redis.cluster === undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'required (or cluster)' });
    }
  })
  // The check above makes the union true; state it so callers need no `!`.
  .transform((redis) => redis as Omit<typeof redis, 'url' | 'cluster'> & RedisTarget);

const CacheSchema = z.strictObject({
  // Refuse 0: an unbounded or empty memory tier is a mistake, not a setting.
  memory: z.strictObject({ maxBytes: positiveInt.default(256 * MIB) }).prefault({}),
  redis: RedisSchema.optional(), // absent = memory tier only
});

const LatestSchema = z.strictObject({
  maxStalenessMs: nonNegativeInt.default(0),
  maxStalenessVersions: nonNegativeInt.default(0),
  staleIfErrorMs: nonNegativeInt.default(0),
});

const RateLimitSchema = z.strictObject({
  enabled: z.boolean().default(false),
  max: positiveInt.default(100),
  timeWindowMs: positiveInt.default(1000),
  redis: z.boolean().default(false), // share counters across proxies through cache.redis
});

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const SimSchema = z.strictObject({
  port: port.default(8081),
  host: host.default('127.0.0.1'),
  versionsPerSecond: z.number().positive().default(2),
  // A number, not a bigint, so the Config stays JSON-printable; callers widen it.
  pruneWindow: positiveInt.default(1_000_000),
  chainId: chainId.default(4),
});

export const ConfigSchema = z
  .strictObject({
    server: ServerSchema.prefault({}),
    admin: AdminSchema.prefault({}),
    vendor: z.string().regex(VENDOR_PATTERN).default('node'),
    chainId: chainId.optional(), // absent = accept whatever chain the nodes report
    upstreams: UpstreamsSchema.prefault([{ url: SIM_URL }]),
    routing: RoutingSchema.prefault({}),
    cache: CacheSchema.prefault({}),
    passthrough: z.boolean().default(true),
    latest: LatestSchema.prefault({}),
    rateLimit: RateLimitSchema.prefault({}),
    shedding: z
      .strictObject({
        maxInFlight: positiveInt.default(10000),
        // How long a read waits for a node's budget (upstreams[].maxInFlight / maxRps) before it is shed.
        budgetWaitMs: nonNegativeInt.default(50),
        // Which class of reads loses first when node budgets run short: it may use only 80% of a budget.
        shedFirst: z.enum(['none', 'latest', 'pinned']).default('none'),
      })
      .prefault({}),
    log: z.strictObject({ level: z.enum(LOG_LEVELS).default('info') }).prefault({}),
    sim: SimSchema.prefault({}),
  })
  .superRefine((config, ctx) => {
    if (config.rateLimit.redis && config.cache.redis === undefined) {
      ctx.addIssue({ code: 'custom', path: ['rateLimit', 'redis'], message: 'needs cache.redis to be configured' });
    }
    const usesSim = config.upstreams.some((upstream) => upstream.url === SIM_URL);
    // The built-in node would report another chain and be quarantined at once.
    if (usesSim && config.chainId !== undefined && config.chainId !== config.sim.chainId) {
      const message = `differs from sim.chainId (${config.sim.chainId}) while an upstream is 'sim'`;
      ctx.addIssue({ code: 'custom', path: ['chainId'], message });
    }
    // Two listeners on one address would fail at start with a bare EADDRINUSE.
    const listeners = [{ key: 'server', ...config.server }, ...(config.admin.port !== 0 ? [{ key: 'admin', ...config.admin }] : []), ...(usesSim ? [{ key: 'sim', ...config.sim }] : [])];
    listeners.forEach((listener, index) => {
      const clash = listeners.slice(0, index).find((other) => other.port === listener.port && other.host === listener.host);
      if (clash !== undefined && listener.port !== 0) {
        ctx.addIssue({ code: 'custom', path: [listener.key, 'port'], message: `same host and port as ${clash.key}` });
      }
    });
  });

export type Config = DeepReadonly<z.output<typeof ConfigSchema>>;
export type ServerConfig = Config['server'];
export type UpstreamConfig = Config['upstreams'][number];
export type RoutingConfig = Config['routing'];
export type RedisConfig = NonNullable<Config['cache']['redis']>;
export type LogLevel = Config['log']['level'];
