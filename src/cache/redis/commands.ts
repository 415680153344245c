// The cache client's commands as the store, the fill lock and the fill channel
// issue them: refused at once while not connected, bounded by the proxy's own
// deadline, every failure reported against the node that serves its key. It
// FAILS OPEN: a refused or failed command is a miss to its caller, never an
// error to a client.
import { type Cluster, Command } from 'ioredis';
import type { RedisConnection, ReportingClient } from './client.js';
import { FAILURE_BACKOFF_MS } from './failures.js';
/** On a Cluster, the node ioredis chose for the fill channel's subscriptions, as failures name it. */
const SUBSCRIPTIONS = 'subscriptions';

/** One shared error while not connected: no stack capture per request during an outage. */
const NOT_READY = new Error('redis is not connected');

export class RedisCommands {
  #closed = false;

  constructor(
    private readonly client: ReportingClient,
    /** prepended to every key, so instances of one deployment share entries and nothing else */
    readonly prefix: string,
    /**
     * Our own deadline from the moment we issue a command, in both modes: a
     * Cluster re-sends on MOVED, TRYAGAIN, CLUSTERDOWN and failover with a fresh
     * timeout each time, and with auto-pipelining a command waits for a stalled
     * pipeline before ioredis's own timeout even starts.
     */
    private readonly timeoutMs: number,
  ) {}

  get redis(): RedisConnection {
    return this.client.redis;
  }

  isReady(): boolean {
    return !this.#closed && this.client.redis.status === 'ready';
  }

  /**
   * Worth asking now about `key` (about anything, without one): connected, and no
   * command of the node serving it failed in the last FAILURE_BACKOFF_MS. A stalled
   * Redis stays "ready" while every command times out; the read path then skips
   * it rather than pay the timeout on every miss. On a Cluster only the failing
   * node's slots are skipped; on one server, everything.
   */
  isHealthy(key?: string): boolean {
    if (!this.isReady()) return false;
    const { failures } = this.client;
    const now = performance.now();
    if (now - failures.lastFailureAt >= FAILURE_BACKOFF_MS) return true;
    if (key === undefined) return false;
    const node = this.nodeOf(key);
    return node !== undefined && now - failures.failedAt(node) >= FAILURE_BACKOFF_MS;
  }

  /** isHealthy for the fill channel's subscriptions. */
  subscriptionsHealthy(): boolean {
    if (!this.client.redis.isCluster) return this.isHealthy();
    return this.isReady() && performance.now() - this.client.failures.failedAt(SUBSCRIPTIONS) >= FAILURE_BACKOFF_MS;
  }

  /** Resolves true once connected, false after timeoutMs or on close; never rejects. For startup and tests. */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady()) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
    const redis = this.client.redis;
    return new Promise((resolve) => {
      const done = (ready: boolean): void => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        redis.off('end', onEnd);
        resolve(ready);
      };
      const onReady = (): void => done(true);
      const onEnd = (): void => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      redis.on('ready', onReady);
      redis.on('end', onEnd);
    });
  }

  /** False (after reporting) when no command can succeed now; a closed client fails silently. */
  usable(op: string): boolean {
    if (this.#closed) return false;
    if (this.client.redis.status === 'ready') return true;
    this.fail(op, NOT_READY);
    return false;
  }

  /** Reports a failure of a command on `key` (its node's), or of the whole client without one. */
  fail(op: string, cause: unknown, key?: string): void {
    this.client.failures.fail(op, cause, key === undefined ? undefined : this.nodeOf(key));
  }

  /** Reports a failure of the fill channel's subscriptions. */
  failSubscriptions(cause: unknown): void {
    this.client.failures.fail('subscribe', cause, this.client.redis.isCluster ? SUBSCRIPTIONS : undefined);
  }

  /**
   * The master serving key's slot (host:port) on a Cluster, as ioredis last
   * learned it; undefined on one server (a failure there is the whole client's)
   * or while the slot's master is not known.
   */
  private nodeOf(key: string): string | undefined {
    const redis = this.client.redis;
    if (!redis.isCluster) return undefined;
    // ioredis's own slot of a command's key (hash tags included).
    return (redis as Cluster).slots[new Command('exists', [key]).getSlot()]?.[0];
  }

  /**
   * The command raced against the deadline, counted from when we issued it. A
   * process that was too busy to run its timers on time (a GC pause, CPU
   * contention) runs an expired timer before it reads the replies that came
   * meanwhile: the timeout waits for that one turn of I/O, so such a reply
   * counts as one and is not taken for a slow Redis.
   */
  bounded<T>(command: Promise<T>): Promise<T> {
    const ms = this.timeoutMs;
    return new Promise<T>((resolve, reject) => {
      // A reject after the command settled does nothing.
      const timer = setTimeout(() => setImmediate(() => reject(new Error(`Command timed out after ${ms} ms`))), ms);
      command.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  /** QUIT when connected (bounded by the deadline), otherwise or on failure drop the connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.client.failures.close();
    const redis = this.client.redis;
    if (redis.status === 'ready') {
      try {
        await this.bounded(redis.quit());
        return;
      } catch {
        // Fall through: a stalled or vanished server must not hold up shutdown.
      }
    }
    redis.disconnect();
  }
}
