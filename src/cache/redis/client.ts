// Where every Redis client is made: the cache's, its fill channel's subscriber
// and the tenants' limit counters', on a single node or a Cluster. Each comes with an
// error listener that reports through RedisFailures, so no client is left to
// ioredis's "Unhandled error event" on stderr, and says what state it is in, for
// /readyz and ledger_proxy_redis_up.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { FAILURE_BACKOFF_MS, type RedisClientName, type RedisErrorListener, RedisFailures } from './failures.js';

export interface RedisClientOptions {
  /** redis://[user:pass@]host:port[/db] of a single node; exactly one of url and cluster. */
  url?: string;
  /** startup nodes of a Redis Cluster (redis://host:port) */
  cluster?: readonly string[];
  /** a command without a reply after this long fails (and so counts as a miss) */
  commandTimeoutMs: number;
  logger?: Logger;
  /** called on every failure of every client */
  onError?: RedisErrorListener;
  /** told of every client made, so its state can be read (/readyz, metrics) */
  onClient?: (client: ReportingClient) => void;
}

export type RedisConnection = Redis | Cluster;

/**
 * A client's state: `up` (connected, and nothing failed in the last second),
 * `backing_off` (connected, but a command or the connection failed in the last
 * second, so the read path leaves it, or the node that failed, alone for now), or
 * `down` (not connected: connecting, reconnecting with its back-off, or closed).
 * Redis is a cache to the proxy: none of these makes it unready.
 */
export type RedisState = 'up' | 'backing_off' | 'down';

/** A client and the reporter of its failures. */
export interface ReportingClient {
  readonly name: RedisClientName;
  readonly redis: RedisConnection;
  readonly failures: RedisFailures;
  state(): RedisState;
  /** Drops the connection at once; what is said after is not reported. */
  disconnect(): void;
}

/** Reconnect forever, backing off to at most 2 s between attempts. */
const retryStrategy = (attempt: number): number => Math.min(200 * attempt, 2000);
/** A TCP connect that takes longer is abandoned and retried. */
const CONNECT_TIMEOUT_MS = 2000;

/** Throws for options no client can be made from. */
export function checkRedisClientOptions(options: RedisClientOptions): void {
  const { url, cluster, commandTimeoutMs } = options;
  if ((url === undefined) === (cluster === undefined || cluster.length === 0)) {
    throw new Error('a Redis client needs exactly one of url and cluster');
  }
  if (!Number.isFinite(commandTimeoutMs) || commandTimeoutMs <= 0) {
    throw new RangeError(`commandTimeoutMs must be a positive number, got ${commandTimeoutMs}`);
  }
}

/** A connected (connecting) client named `name`: the fill channel's is a subscriber, every other one takes commands. */
export function redisClient(options: RedisClientOptions, name: RedisClientName): ReportingClient {
  checkRedisClientOptions(options);
  const failures = new RedisFailures(name, options.logger, options.onError);
  const redis = name === 'fill-channel' ? subscriberConnection(options) : commandConnection(options);
  // Without a listener an 'error' event would be written to stderr by ioredis (or thrown).
  redis.on('error', (err: Error) => failures.fail('connection', err));
  // A Cluster's node (host:port) that cannot be reached: only its slots are left alone.
  redis.on('node error', (err: Error, node: string) => failures.fail('connection', err, node));
  redis.on('ready', () => failures.recovered());
  let closed = false;
  const client: ReportingClient = {
    name,
    redis,
    failures,
    state: () => {
      if (closed || redis.status !== 'ready') return 'down';
      return performance.now() - failures.lastFailureAt < FAILURE_BACKOFF_MS ? 'backing_off' : 'up';
    },
    disconnect: () => {
      closed = true;
      failures.close();
      redis.disconnect();
    },
  };
  options.onClient?.(client);
  return client;
}

function connection(): RedisOptions {
  return {
    // No ioredis commandTimeout: every command the proxy waits for is bounded by
    // RedisCommands.bounded, which reads a reply that came while the process was
    // busy before it gives up; ioredis's own timer would fail such a command first.
    connectTimeout: CONNECT_TIMEOUT_MS,
    // A command in flight when the connection drops fails instead of being resent.
    maxRetriesPerRequest: 0,
  };
}

function commandConnection(options: RedisClientOptions): RedisConnection {
  if (options.url !== undefined) {
    return new Redis(options.url, {
      ...connection(),
      // Fail a command at once while disconnected instead of queueing it for later.
      enableOfflineQueue: false,
      retryStrategy,
      enableAutoPipelining: true,
      lazyConnect: false,
    });
  }
  return new Cluster([...options.cluster!], {
    // Node connections keep ioredis's own queueing and reconnect settings.
    redisOptions: connection(),
    clusterRetryStrategy: retryStrategy,
    // Kept on: with it off, the cluster's own ready check fails whenever the
    // node connection is still connecting, and reconnects can loop for seconds.
    // Commands never wait in it: their users refuse them until the cluster is
    // ready, and bound the rest with their own deadline.
    enableOfflineQueue: true,
    // Off: ioredis follows MOVED and ASK for each command sent on its own, but an
    // automatic pipeline groups the commands of many slots bound for one master,
    // and when slots move it fails the ones redirected (or the whole pipeline:
    // "All keys in the pipeline should belong to the same slots allocation
    // group") instead of following them.
    enableAutoPipelining: false,
    lazyConnect: false,
  });
}

/**
 * A connection in subscriber mode takes no other commands, so it also skips the
 * ready check (an INFO). A SUBSCRIBE sent while it (re)connects waits in its
 * queue; its user bounds that wait.
 */
function subscriberConnection(options: RedisClientOptions): RedisConnection {
  if (options.url !== undefined) {
    return new Redis(options.url, {
      ...connection(),
      retryStrategy,
      enableOfflineQueue: true,
      enableAutoPipelining: false,
      enableReadyCheck: false,
      lazyConnect: false,
    });
  }
  return new Cluster([...options.cluster!], {
    redisOptions: connection(),
    clusterRetryStrategy: retryStrategy,
    enableOfflineQueue: true,
    lazyConnect: false,
  });
}
