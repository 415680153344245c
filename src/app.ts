// buildApp(config): the one wiring point. main.ts and the tests both call it.
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from './config/index.js';
import { keepsLatestAnswers, memoryShares, SIM_URL } from './config/index.js';
import { defaultUpstreamName } from './config/net.js';
import { MemoryStore } from './cache/memory.js';
import { RedisStore } from './cache/redis.js';
import { type RedisClientOptions, redisClient } from './cache/redis-client.js';
import { buildAdminServer, type Readiness } from './http/admin.js';
import type { PassthroughDeps } from './http/passthrough.js';
import { buildPublicListener } from './http/public-listener.js';
import { closeGracefully } from './http/server.js';
import { Metrics } from './metrics.js';
import { ledgerHeaderNames, type LedgerHeaderNames } from './ledger/headers.js';
import { PruneClock } from './ledger/prune-clock.js';
import { Watermark } from './ledger/watermark.js';
import { LatestAnswers } from './serve/latest-answers.js';
import { ReadThrough } from './serve/read-through.js';
import { startSim, type SimNode } from './sim/index.js';
import { NodeClient } from './upstream/node-client.js';
import { NodeState } from './upstream/node-state.js';
import { UpstreamPool } from './upstream/pool.js';
import { vendorNames } from './wire/vendor.js';
import { Reloader, type ReloadOutcome } from './reload.js';
import { readRoutes } from './routes/table.js';

/** How long start-up waits for Redis before serving from memory and nodes alone. */
const REDIS_START_WAIT_MS = 2000;

export interface AppDeps {
  logger?: Logger;
  /** false in a worker of server.workers > 1: the primary serves the admin listener for all */
  serveAdmin?: boolean;
  /** the clock of the tenants' limit windows (tests freeze it); Date.now by default */
  now?: () => number;
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
  close(): Promise<void>;
}

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<App> {
  const logger = deps.logger ?? pino({ level: config.log.level });
  const vendor = vendorNames(config.vendor);
  const headerNames = ledgerHeaderNames(vendor.headerPrefix);
  const watermark = new Watermark();
  const pruneClock = new PruneClock();
  watermark.onAdvance((info) => pruneClock.observe(info));

  const sim = await startBuiltInSim(config, logger);
  const makeNodes = (upstreams: Config['upstreams']): NodeState[] => nodeStates(upstreams, config, headerNames, sim);
  const nodes = makeNodes(config.upstreams);
  // Its sources are read at scrape time, when everything below exists.
  const metrics = new Metrics({
    memoryStats: () => memory.stats(),
    upstreams: () => pool.nodes.map((n) => ({ name: n.name, state: pool.health(n), ledgerVersion: n.ledger?.ledgerVersion ?? null, inFlight: n.inFlight })),
    watermarkVersion: () => watermark.current()?.ledgerVersion ?? null,
  });
  const pool = new UpstreamPool({
    nodes,
    routing: config.routing,
    chainId: config.chainId,
    watermark,
    logger,
    maxInFlight: config.shedding.maxInFlight,
    budget: { waitMs: config.shedding.budgetWaitMs, shedFirst: config.shedding.shedFirst },
    onShed: (reason) => metrics.shed(reason),
    onCall: (upstream, outcome, seconds) => metrics.upstreamCall(upstream, outcome, seconds),
    onStepBack: () => metrics.latestStepBack(),
    // A devnet reset: the old chain's pruning rate says nothing of the new one.
    onChainChange: () => pruneClock.reset(),
  });

  // cache.memory.maxBytes bounds the tier, the spellings (http/) and the latest answers together.
  const shares = memoryShares(config.cache.memory.maxBytes, keepsLatestAnswers(config.latest));
  const memory = new MemoryStore({ maxBytes: shares.tier });
  const redisConfig = config.cache.redis;
  const redisClients = redisConfig ? redisClientOptions(redisConfig, logger, metrics) : undefined;
  const redis = redisConfig && redisClients ? new RedisStore({ ...redisClients, keyPrefix: redisConfig.keyPrefix, onCorrupt: (fault) => metrics.redisCorruptEntry(fault) }) : undefined;

  const reads = new ReadThrough({
    vendor: config.vendor,
    nodes: pool,
    memory,
    redis,
    redisSettings: redisConfig,
    deadlineMs: config.routing.deadlineMs,
    watermark,
    pruneClock,
    logger,
    latest: new LatestAnswers(config.latest, shares.latestAnswers),
    onStale: (reason) => metrics.stale(reason),
  });

  // The limits' counters fail fast, like the cache's client: a Redis outage skips counting.
  const counters = config.tenants !== undefined && redisClients !== undefined ? redisClient(redisClients, 'limits') : undefined;
  const { http, tenants, limits } = await buildPublicListener({
    config,
    logger,
    metrics,
    headerNames,
    routes: readRoutes(vendor),
    snapshot: () => watermark.current(),
    read: (req) => reads.read(req),
    forward: forwardVia(pool),
    counters: counters?.redis,
    now: deps.now,
  });

  // Fails first on shutdown, so a load balancer stops sending before the drain.
  const readiness = (): Readiness => ({ ready: !closing && pool.ready(), upstreams: pool.nodes.map((n) => ({ name: n.name, state: pool.health(n) })) });
  const admin = config.admin.port !== 0 && deps.serveAdmin !== false ? buildAdminServer({ metrics, readiness, headerNames }) : undefined;
  let adminAddress: string | undefined;
  let closing = false;
  const reloader = new Reloader(config, logger, {
    upstreams: async (next) => {
      if (next.upstreams.some((u) => u.url === SIM_URL) && !sim) throw new Error("a 'sim' upstream needs a restart: the built-in node is not running");
      const result = await pool.replaceNodes(makeNodes(next.upstreams));
      logger.info({ ...result, upstreams: pool.nodes.map((n) => n.name) }, 'upstreams reloaded');
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
    },
  };
}

/** Passthrough calls go through the pool: routed like reads; only idempotent methods are retried. */
function forwardVia(pool: UpstreamPool): PassthroughDeps['forward'] {
  return async (call, minVersion) => {
    const idempotent = call.method === 'GET' || call.method === 'HEAD' || call.method === 'OPTIONS';
    const answer = await pool.forward({ ...call, passthrough: true }, { idempotent, minVersion });
    return { status: answer.status, headers: answer.headers ?? {}, body: answer.body, upstream: answer.upstream };
  };
}

/** The built-in simulated node, when an upstream is 'sim'. */
async function startBuiltInSim(config: Config, logger: Logger): Promise<SimNode | undefined> {
  if (!config.upstreams.some((u) => u.url === SIM_URL)) return undefined;
  const sim = await startSim({
    vendor: config.vendor,
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
  return upstreams.map(
    (u, i) =>
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
        Date.now,
        { maxInFlight: u.maxInFlight, maxRps: u.maxRps },
      ),
  );
}

/** How every Redis client of the proxy is made: each failure logged (rate-limited) and counted. */
function redisClientOptions(redis: NonNullable<Config['cache']['redis']>, logger: Logger, metrics: Metrics): RedisClientOptions {
  return { url: redis.url, cluster: redis.cluster, commandTimeoutMs: redis.commandTimeoutMs, logger, onError: (op, _err, client) => metrics.redisError(client, op) };
}
