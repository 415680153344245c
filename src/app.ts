// buildApp(config): the one wiring point. main.ts and the tests both call it.
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from './config/index.js';
import { SIM_URL } from './config/index.js';
import { defaultUpstreamName } from './config/net.js';
import { CacheGeneration } from './cache/generation.js';
import { MemoryStore } from './cache/memory.js';
import { RedisStore } from './cache/redis.js';
import { type RedisClientOptions, redisClient } from './cache/redis-client.js';
import { buildAdminServer, type Readiness } from './http/admin.js';
import type { PassthroughDeps } from './http/passthrough.js';
import { localPurges } from './http/purge.js';
import type { PurgeScope } from './http/purge-body.js';
import { buildPublicListener } from './http/public-listener.js';
import { closeGracefully } from './http/server.js';
import { Metrics } from './metrics.js';
import type { LedgerHeaderNames } from './ledger/headers.js';
import { PruneClock } from './ledger/prune-clock.js';
import { Watermark } from './ledger/watermark.js';
import { LatestAnswers } from './serve/latest-answers.js';
import { type PurgeDone, type PurgeOrder, ReadThrough } from './serve/read-through.js';
import { verifyWarning } from './serve/verify.js';
import { startSim, type SimNode } from './sim/index.js';
import { NodeClient } from './upstream/node-client.js';
import { NodeState } from './upstream/node-state.js';
import type { ProbeSchedule } from './upstream/health.js';
import { UpstreamPool } from './upstream/pool.js';
import { liveHeaderNames, liveVendorNames, VendorIdentity } from './upstream/vendor.js';
import { Reloader, type ReloadOutcome } from './reload.js';
import type { TracingSdk } from './tracing/sdk.js';
import { packageVersion } from './version.js';
import { readRoutes } from './routes/table.js';
import type { NodeError } from './errors.js';

/** How long start-up waits for Redis before serving from memory and nodes alone. */
const REDIS_START_WAIT_MS = 2000;

export interface AppDeps {
  logger?: Logger;
  /** false in a worker of server.workers > 1: the primary serves the admin listener for all */
  serveAdmin?: boolean;
  /** the clock of the tenants' limit windows (tests freeze it); Date.now by default */
  now?: () => number;
  /** when the nodes' probe rounds run (default: every routing.probeIntervalMs; a test may run them itself) */
  probeSchedule?: ProbeSchedule;
}

export interface App {
  readonly config: Config;
  readonly logger: Logger;
  readonly http: FastifyInstance;
  readonly pool: UpstreamPool;
  readonly watermark: Watermark;
  readonly memory: MemoryStore;
  readonly redis?: RedisStore;
  /** the built-in simulated node, when an upstream is 'sim' */
  readonly sim?: SimNode;
  readonly metrics: Metrics;
  readonly admin?: FastifyInstance;
  /** Starts listening (public, then admin); resolves with the public base url. */
  listen(): Promise<string>;
  /**
   * Applies a re-read config (SIGHUP): upstreams and log.level change live, every
   * other changed key is logged as needing a restart. Reloads run one at a time.
   */
  reload(next: Config): Promise<ReloadOutcome>;
  /** the admin base url, once listening (undefined when admin.port is 0) */
  adminUrl(): string | undefined;
  /** what /readyz says: not ready once closing, or while no node is healthy */
  readiness(): Readiness;
  /** /readyz fails from now on while the listeners stay open: the start of a shutdown (server.drainDelayMs) */
  failReadiness(): void;
  /** A cache purge in this process (`order.shared`: Redis too): the admin listener's, or the primary's order to a worker. */
  purge(scope: PurgeScope, order: PurgeOrder): Promise<PurgeDone | NodeError>;
  close(): Promise<void>;
}

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<App> {
  const logger = deps.logger ?? pino({ level: config.log.level });
  // With vendor: auto the names are the nodes', once their probes say them: everything reads them live.
  const vendorIdentity = new VendorIdentity(config.vendor, logger);
  const vendor = liveVendorNames(vendorIdentity);
  const headerNames = liveHeaderNames(vendorIdentity);
  const watermark = new Watermark();
  const pruneClock = new PruneClock();
  watermark.onAdvance((info) => pruneClock.observe(info));
  // A corrected watermark was pushed by a node's lie: its rate says nothing of the chain.
  watermark.onCorrect(() => pruneClock.reset());

  const tracing = await startTracingIf(config, logger);
  const sim = await startBuiltInSim(config, logger);
  const makeNodes = (upstreams: Config['upstreams']): NodeState[] => nodeStates(upstreams, config, headerNames, sim);
  const nodes = makeNodes(config.upstreams);
  // Its sources are read at scrape time, when everything below exists.
  const metrics = new Metrics({
    memoryStats: () => memory.stats(),
    upstreams: () => pool.nodes.map((n) => ({ name: n.name, state: pool.health(n), ledgerVersion: n.ledger?.ledgerVersion ?? null, inFlight: n.inFlight, headroom: n.headroom() })),
    watermarkVersion: () => watermark.current()?.ledgerVersion ?? null,
  });
  const pool = new UpstreamPool({
    nodes,
    vendor: vendorIdentity,
    routing: config.routing,
    chainId: config.chainId,
    watermark,
    logger,
    maxInFlight: config.shedding.maxInFlight,
    budget: { waitMs: config.shedding.budgetWaitMs, shedFirst: config.shedding.shedFirst },
    onShed: (reason) => metrics.upstream.shed(reason),
    onCall: (upstream, outcome, seconds) => metrics.upstream.call(upstream, outcome, seconds),
    onStepBack: () => metrics.upstream.stepBack(),
    onMisbehaving: (upstream, reason) => metrics.upstream.misbehaving(upstream, reason),
    onTransition: (upstream, state) => metrics.upstream.transition(upstream, state),
    probeSchedule: deps.probeSchedule,
    // A devnet reset: the old chain's pruning rate says nothing of the new one.
    onChainChange: () => pruneClock.reset(),
  });

  const memory = new MemoryStore({ maxBytes: config.cache.memory.maxBytes });
  const generation = new CacheGeneration();
  const redisConfig = config.cache.redis;
  const redisClients = redisConfig ? redisClientOptions(redisConfig, logger, metrics) : undefined;
  const redis =
    redisConfig && redisClients
      ? new RedisStore({ ...redisClients, keyPrefix: redisConfig.keyPrefix, generation, maxTtlSeconds: redisConfig.maxTtlSeconds, onCorrupt: (fault) => metrics.redisCorruptEntry(fault) })
      : undefined;
  const routes = readRoutes(vendor);

  const reads = new ReadThrough({
    vendor,
    nodes: pool,
    memory,
    redis,
    generation,
    families: new Map(routes.map((r) => [r.name, r.family])),
    redisSettings: redisConfig,
    deadlineMs: config.routing.deadlineMs,
    watermark,
    pruneClock,
    logger,
    latest: new LatestAnswers(config.latest, Math.floor(config.cache.memory.maxBytes / 4)),
    onStale: (reason) => metrics.stale(reason),
    verify: config.cache.verify,
    onVerify: (outcome) => metrics.verify(outcome),
  });
  warnIfUnverifiable(config, logger);

  // The limits' counters fail fast, like the cache's client: a Redis outage skips counting.
  const counters = config.tenants !== undefined && redisClients !== undefined ? redisClient(redisClients, 'limits') : undefined;
  const { http, tenants, limits } = await buildPublicListener({
    config,
    logger,
    metrics,
    headerNames,
    routes,
    snapshot: () => watermark.current(),
    read: (req, context) => reads.read(req, context),
    forward: forwardVia(pool),
    headroom: () => pool.headroom(),
    counters: counters?.redis,
    now: deps.now,
    tracing,
  });

  // Fails first on shutdown, so a load balancer stops sending before the drain.
  const readiness = (): Readiness => ({ ready: !closing && pool.ready(), upstreams: pool.nodes.map((n) => ({ name: n.name, state: pool.health(n) })) });
  const purges = localPurges(reads.purge, routes, logger, (scope) => metrics.purged(scope));
  const admin = config.admin.port !== 0 && deps.serveAdmin !== false ? buildAdminServer({ metrics, readiness, headerNames, purge: purges.route }) : undefined;
  let adminAddress: string | undefined;
  let closing = false;
  const reloader = new Reloader(config, logger, {
    upstreams: async (next) => {
      if (next.upstreams.some((u) => u.url === SIM_URL) && !sim) throw new Error("a 'sim' upstream needs a restart: the built-in node is not running");
      const result = await pool.replaceNodes(makeNodes(next.upstreams));
      logger.info({ ...result, upstreams: pool.nodes.map((n) => n.name) }, 'upstreams reloaded');
      warnIfUnverifiable({ ...config, upstreams: next.upstreams }, logger);
    },
    'log.level': (next) => {
      logger.level = next.log.level;
    },
    tenants: (next) => {
      tenants.replace(next.tenants);
      metrics.knownTenants(tenants.names());
      logger.info({ tenants: tenants.names() }, 'tenants reloaded');
    },
  });

  // Both are bounded: a node or a Redis that is down does not stop the start.
  await Promise.all([pool.start(), redis?.whenReady(REDIS_START_WAIT_MS)]);

  return {
    config,
    logger,
    http,
    pool,
    watermark,
    memory,
    redis,
    sim,
    metrics,
    admin,
    async listen() {
      const address = await http.listen({ host: config.server.host, port: config.server.port });
      if (admin) adminAddress = await admin.listen({ host: config.admin.host, port: config.admin.port });
      logger.info({ url: address, admin: adminAddress, upstreams: config.upstreams.map((u) => u.name) }, 'ledger-proxy listening');
      return address;
    },
    adminUrl: () => adminAddress,
    readiness,
    failReadiness: () => {
      closing = true;
    },
    purge: purges.here,
    reload: (next) => reloader.reload(next),
    async close() {
      closing = true;
      await closeGracefully(http, config.server.shutdownTimeoutMs);
      await admin?.close();
      await pool.close();
      await memory.close();
      await redis?.close();
      // The last counts this instance has not shared yet go out before the client closes.
      limits.share();
      counters?.disconnect();
      await sim?.close();
      // The spans of the last requests go out before the process ends.
      await tracing?.close();
    },
  };
}

/** Passthrough calls go through the pool: routed like reads; only idempotent methods are retried. */
function forwardVia(pool: UpstreamPool): PassthroughDeps['forward'] {
  return async (call, minVersion, priority, trace) => {
    const idempotent = call.method === 'GET' || call.method === 'HEAD' || call.method === 'OPTIONS';
    const answer = await pool.forward({ ...call, passthrough: true }, { idempotent, minVersion, priority, trace });
    return { status: answer.status, headers: answer.headers ?? {}, body: answer.stream ?? answer.body, upstream: answer.upstream };
  };
}

/** cache.verify needs a second node: say so at start (and reload) when there is none. */
function warnIfUnverifiable(config: Pick<Config, 'cache' | 'upstreams'>, logger: Logger): void {
  const warning = verifyWarning(config.cache.verify, config.upstreams.length);
  if (warning !== undefined) logger.warn({ mode: config.cache.verify.mode, upstreams: config.upstreams.length }, warning);
}

/**
 * The OpenTelemetry SDK, when tracing.otlpEndpoint is set. Loaded only then:
 * with tracing off no SDK module is imported and no request makes a span.
 */
async function startTracingIf(config: Config, logger: Logger): Promise<TracingSdk | undefined> {
  const { otlpEndpoint, ...settings } = config.tracing;
  if (otlpEndpoint === undefined) return undefined;
  const { startTracing } = await import('./tracing/sdk.js');
  logger.info({ serviceName: settings.serviceName, sampleRatio: settings.sampleRatio }, 'tracing: spans are sent to tracing.otlpEndpoint');
  return startTracing(settings, otlpEndpoint, logger, packageVersion());
}

/** The built-in simulated node, when an upstream is 'sim'. */
async function startBuiltInSim(config: Config, logger: Logger): Promise<SimNode | undefined> {
  if (!config.upstreams.some((u) => u.url === SIM_URL)) return undefined;
  const sim = await startSim({
    // With vendor: auto the built-in node speaks the default vendor, and the proxy reads it from its headers.
    vendor: config.vendor === 'auto' ? 'node' : config.vendor,
    host: config.sim.host,
    port: config.sim.port,
    chainId: config.sim.chainId,
    versionsPerSecond: config.sim.versionsPerSecond,
    pruneWindow: BigInt(config.sim.pruneWindow),
  });
  logger.info({ url: sim.url }, 'upstream is the built-in SIMULATED node (url: sim), not a real ledger node');
  return sim;
}

/** The nodes of `upstreams`, each with its client, circuit breaker and budget. */
function nodeStates(upstreams: Config['upstreams'], config: Config, headerNames: LedgerHeaderNames, sim: SimNode | undefined): NodeState[] {
  return upstreams.map((u, i) =>
    Object.assign(
      new NodeState(
        // A name that defaulted to host:port is shown to clients as its position.
        new NodeClient({
          name: u.name,
          label: u.name === defaultUpstreamName(u.url) && u.url !== SIM_URL ? `node${i + 1}` : u.name,
          url: u.url === SIM_URL ? sim!.url : u.url,
          headers: u.headers,
          headerNames,
        }),
        u.role,
        u.weight,
        config.routing.breaker,
        () => Date.now(),
        { maxInFlight: u.maxInFlight, maxRps: u.maxRps },
      ),
      { spreadVersions: u.spreadVersions },
    ),
  );
}

/** How every Redis client of the proxy is made: each failure logged (rate-limited) and counted. */
function redisClientOptions(redis: NonNullable<Config['cache']['redis']>, logger: Logger, metrics: Metrics): RedisClientOptions {
  return { url: redis.url, cluster: redis.cluster, commandTimeoutMs: redis.commandTimeoutMs, logger, onError: (op, _err, client) => metrics.redisError(client, op) };
}
