// The cache tiers and the read path, as buildApp wires them: the memory tier,
// the Redis store (and the options every Redis client of the proxy is made
// with), and the read-through every cached route is answered by.
import type { Logger } from 'pino';
import { CacheGeneration } from '../cache/generation.js';
import { MemoryStore } from '../cache/memory.js';
import { type RedisStore, redisStore } from '../cache/redis/store.js';
import type { RedisClientOptions, RedisState, ReportingClient } from '../cache/redis/client.js';
import { type Config, keepsLatestAnswers, memoryShares } from '../config/index.js';
import type { PruneClock } from '../ledger/prune-clock.js';
import type { Watermark } from '../ledger/watermark.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RouteDescriptor } from '../routes/route.js';
import { LatestAnswers } from '../serve/latest-answers.js';
import type { ReadThrough } from '../serve/read-through.js';
import { readThroughOf } from './read-path.js';
import { verifyWarning } from '../serve/verify.js';
import type { UpstreamPool } from '../upstream/pool.js';
import type { VendorNames } from '../wire/vendor.js';
import type { LatestFeed } from '../serve/ports.js';

export interface ReadsDeps {
  logger: Logger;
  metrics: Metrics;
  pool: UpstreamPool;
  watermark: Watermark;
  pruneClock: PruneClock;
  vendor: VendorNames;
  routes: readonly RouteDescriptor[];
  /** the change feed's judge (latest.changeFeed) */
  feed: LatestFeed;
}

export interface Reads {
  memory: MemoryStore;
  redis: RedisStore | undefined;
  /** how every Redis client is made (absent without cache.redis) */
  redisClients: RedisClientOptions | undefined;
  /** the state of every Redis client made with those options, by its name; [] without cache.redis */
  redisStates(): Array<{ client: string; state: RedisState }>;
  reads: ReadThrough;
}

export function buildReads(config: Config, deps: ReadsDeps): Reads {
  const { logger, metrics } = deps;
  // cache.memory.maxBytes bounds the tier, the spellings (http/) and the latest answers together.
  const shares = memoryShares(config.cache.memory.maxBytes, {
    keepsLatestAnswers: keepsLatestAnswers(config.latest),
  });
  const memory = new MemoryStore({ maxBytes: shares.tier });
  const generation = new CacheGeneration();
  const redisConfig = config.cache.redis;
  const clients: ReportingClient[] = [];
  const redisClients: RedisClientOptions | undefined = redisConfig && {
    url: redisConfig.url,
    cluster: redisConfig.cluster,
    commandTimeoutMs: redisConfig.commandTimeoutMs,
    logger,
    // Every client's failures, logged (rate-limited) and counted.
    onError: (op, _err, client) => metrics.redisError(client, op),
    // Every client's state, read by /readyz and at scrape time.
    onClient: (client) => clients.push(client),
  };
  const redis =
    redisConfig && redisClients
      ? redisStore({
          ...redisClients,
          keyPrefix: redisConfig.keyPrefix,
          generation,
          maxTtlSeconds: redisConfig.maxTtlSeconds,
          onCorrupt: (fault) => metrics.redisCorruptEntry(fault),
        })
      : undefined;
  const reads = readThroughOf({
    vendor: deps.vendor,
    nodes: deps.pool,
    memory,
    redis,
    generation,
    families: new Map(deps.routes.map((r) => [r.name, r.family])),
    redisSettings: redisConfig,
    deadlineMs: config.routing.deadlineMs,
    watermark: deps.watermark,
    pruneClock: deps.pruneClock,
    logger,
    latest: new LatestAnswers(config.latest, shares.latestAnswers),
    onStale: (reason) => metrics.stale(reason),
    verify: config.cache.verify,
    onVerify: (outcome) => metrics.verify(outcome),
    feed: deps.feed,
    onFeedAnswer: (route) => metrics.feed.answer(route),
    onFeedForward: (route, reason) => metrics.feed.forward(route, reason),
  });
  warnIfUnverifiable(config, logger);
  const redisStates = () => clients.map((client) => ({ client: client.name, state: client.state() }));
  return { memory, redis, redisClients, redisStates, reads };
}

/** cache.verify needs a second node: say so at start (and reload) when there is none. */
export function warnIfUnverifiable(config: Pick<Config, 'cache' | 'upstreams'>, logger: Logger): void {
  const warning = verifyWarning(config.cache.verify, config.upstreams.length);
  if (warning !== undefined)
    logger.warn({ mode: config.cache.verify.mode, upstreams: config.upstreams.length }, warning);
}
