// buildApp(config): the proxy composed from the parts wiring/ builds. main.ts and the tests both call it.
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from './config/index.js';
import type { MemoryStore } from './cache/memory.js';
import type { RedisStore } from './cache/redis/store.js';
import type { Readiness } from './admin/server.js';
import type { PurgeScope } from './admin/purge-body.js';
import { closeGracefully } from './http/server.js';
import { listenAs } from './process/listen-error.js';
import { Metrics } from './metrics/metrics.js';
import { PruneClock } from './ledger/prune-clock.js';
import { Watermark } from './ledger/watermark.js';
import type { PurgeDone, PurgeOrder } from './serve/purge.js';
import type { ProbeSchedule } from './upstream/nodes/health.js';
import type { UpstreamPool } from './upstream/pool.js';
import { liveHeaderNames, liveVendorNames, VendorIdentity } from './ledger/vendor.js';
import type { ReloadOutcome } from './process/reload.js';
import { readRoutes } from './routes/table.js';
import type { NodeError } from './errors.js';
import { buildAdminListener } from './wiring/admin.js';
import { buildChangeFeed } from './wiring/feed.js';
import { buildPublicListener } from './wiring/public-listener.js';
import { readinessOf } from './wiring/readiness.js';
import { buildReads } from './wiring/reads.js';
import { reloaderFor } from './wiring/reloader.js';
import { BuiltInSim, type SimNode } from './wiring/sim.js';
import { startTracingIf } from './wiring/tracing.js';
import { buildUpstreams, forwardVia } from './wiring/upstream.js';

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
  /** where keys given as `{env: VAR}` are read (tenant keys, admin.token); process.env by default */
  env?: NodeJS.ProcessEnv;
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
  const env = deps.env ?? process.env;
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
  const sim = new BuiltInSim(config, logger);
  await sim.startFor(config.upstreams);
  // Its sources are read at scrape time, when everything below exists.
  const metrics = new Metrics({
    memoryStats: () => stores.memory.stats(),
    upstreams: () =>
      pool.nodes.map((n) => ({
        name: n.name,
        state: pool.health(n),
        ledgerVersion: n.ledger?.ledgerVersion ?? null,
        inFlight: n.inFlight,
        headroom: n.headroom(),
      })),
    watermarkVersion: () => watermark.current()?.ledgerVersion ?? null,
    redisClients: () => stores.redisStates(),
    feed: () => changeFeed.state(),
  });
  const upstreams = buildUpstreams(config, {
    logger,
    metrics,
    watermark,
    pruneClock,
    vendor: vendorIdentity,
    headerNames,
    sim,
    probeSchedule: deps.probeSchedule,
  });
  const pool = upstreams.pool;
  const routes = readRoutes(vendor);
  const changeFeed = buildChangeFeed(config, { pool, watermark, logger, metrics });
  const stores = buildReads(config, {
    ...{ logger, metrics, pool, watermark, pruneClock, vendor, routes },
    feed: changeFeed.judge,
  });
  const { reads, redisClients } = stores;
  const listener = await buildPublicListener({
    ...{ config, logger, metrics, headerNames, routes, tracing, env, now: deps.now, redisClients },
    snapshot: () => watermark.current(),
    read: reads.read.bind(reads),
    forward: forwardVia(pool),
    headroom: () => pool.headroom(),
  });
  const state = { closing: false };
  const readiness = readinessOf({ pool, closing: () => state.closing, redisStates: stores.redisStates });
  const { admin, purgeHere } = buildAdminListener(config, {
    ...{ logger, env, metrics, readiness, headerNames, routes },
    purge: reads.purge,
    serve: deps.serveAdmin !== false,
  });
  const reloader = reloaderFor(config, logger, {
    pool,
    nodesOf: upstreams.nodesOf,
    sim,
    tenants: listener.tenants,
    metrics,
    env,
    changeFeed,
  });
  // Both are bounded: a node or a Redis that is down does not stop the start.
  await Promise.all([pool.start(), stores.redis?.whenReady(REDIS_START_WAIT_MS)]);
  const parts = {
    config,
    logger,
    http: listener.http,
    pool,
    watermark,
    memory: stores.memory,
    redis: stores.redis,
    metrics,
    admin,
    readiness,
  };
  return handleOf(parts, state, {
    sim,
    purge: purgeHere,
    reload: (next) => reloader.reload(next),
    // The last counts this instance has not shared yet go out before the client closes; the spans of the last requests before the process ends.
    closeRest: async () => {
      listener.close();
      await changeFeed.close();
      await sim.close();
      await tracing?.close();
    },
  });
}

/** The running app: its listeners, its readiness and its shutdown. */
function handleOf(
  parts: Pick<
    App,
    'config' | 'logger' | 'http' | 'pool' | 'watermark' | 'memory' | 'redis' | 'metrics' | 'admin' | 'readiness'
  >,
  state: { closing: boolean },
  rest: Pick<App, 'purge' | 'reload'> & { sim: BuiltInSim; closeRest(): Promise<void> },
): App {
  const { config, logger, http, admin } = parts;
  let adminAddress: string | undefined;
  return {
    ...parts,
    get sim() {
      return rest.sim.node;
    },
    async listen() {
      const { server: at, admin: adminAt } = config;
      const address = await listenAs('server', at.host, at.port, () => http.listen({ host: at.host, port: at.port }));
      if (admin)
        adminAddress = await listenAs('admin', adminAt.host, adminAt.port, () =>
          admin.listen({ host: adminAt.host, port: adminAt.port }),
        );
      logger.info(
        { url: address, admin: adminAddress, upstreams: config.upstreams.map((u) => u.name) },
        'ledger-proxy listening',
      );
      return address;
    },
    adminUrl: () => adminAddress,
    failReadiness: () => {
      state.closing = true;
    },
    purge: rest.purge,
    reload: rest.reload,
    async close() {
      state.closing = true;
      await closeGracefully(http, config.server.shutdownTimeoutMs);
      await admin?.close();
      await parts.pool.close();
      await parts.memory.close();
      await parts.redis?.close();
      await rest.closeRest();
    },
  };
}
