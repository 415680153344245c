// The shared tier: pinned answers in Redis (single node or Cluster), binary-encoded.
// It FAILS OPEN: Redis being down, slow or restarting costs a miss, never an error
// to a client. Every failure goes to onError and a rate-limited warn log.
import { randomUUID } from 'node:crypto';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { StoredAnswer } from '../wire/read-request.js';
import { decodeAnswer, encodeAnswer } from './codec.js';
import type { AnswerStore, FillLock, FillOutcome } from './store.js';

export interface RedisStoreOptions {
  /** redis://[user:pass@]host:port[/db] of a single node; exactly one of url and cluster. */
  url?: string;
  /** startup nodes of a Redis Cluster (redis://host:port) */
  cluster?: string[];
  /** prepended to every key, so instances of one deployment share entries and nothing else */
  keyPrefix: string;
  /** a command without a reply after this long fails (and so counts as a miss) */
  commandTimeoutMs: number;
  logger?: Logger;
  /**
   * Called on every failure. op is get | set | delete | lock | unlock | publish |
   * subscribe (the command
   * failed or Redis was not ready), encode (an answer the codec cannot hold),
   * decode (an entry this release cannot read) or connection (the client's error event).
   */
  onError?: (op: string, err: Error) => void;
}

/** Reconnect forever, backing off to at most 2 s between attempts. */
const retryStrategy = (attempt: number): number => Math.min(200 * attempt, 2000);
/** A TCP connect that takes longer is abandoned and retried. */
const CONNECT_TIMEOUT_MS = 2000;
/** After a failed command, the read path leaves Redis alone this long (isHealthy). */
const FAILURE_BACKOFF_MS = 1000;
/** At most one warn log per interval while failures continue; the rest are counted. */
const LOG_INTERVAL_MS = 10_000;

/** Deletes the lock only when it still holds our token: it may have expired and been taken. */
const UNLOCK_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * How long a fill's outcome stays readable at `<prefix>fill:<hash>`: only for a
 * waiter that subscribes just after the publish, so a few round trips would do;
 * a second leaves room for a loaded Redis without relaying old outcomes for long.
 */
const FILL_OUTCOME_TTL_MS = 1000;
/** First byte of a fill outcome message: what follows. */
const OUTCOME_GAVE_UP = 0;
const OUTCOME_ONE_OFF = 1;
const OUTCOME_STORED = 2;

/** One shared error while not connected: no stack capture per request during an outage. */
const NOT_READY = new Error('redis is not connected');

export class RedisStore implements AnswerStore {
  readonly tier = 'redis' as const;
  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #logger: Logger | undefined;
  readonly #onError: ((op: string, err: Error) => void) | undefined;
  /**
   * Set in cluster mode only. A single connection's commandTimeout bounds a whole
   * command there; a Cluster re-sends a command on MOVED, TRYAGAIN, CLUSTERDOWN
   * and failover with a fresh timeout each time, so it needs an overall deadline.
   */
  readonly #commandTimeoutMs: number;
  #closed = false;
  #lastWarnAt = -Infinity;
  #lastFailureAt = -Infinity;
  #suppressed = 0;
  #failingSinceReady = false;
  /** The one connection in subscriber mode, for fill outcomes. */
  readonly #subscriber: Redis | Cluster;
  /** Waiters per fill channel; a channel is subscribed while it has any. */
  readonly #fillWaiters = new Map<string, { subscribed: Promise<unknown>; waiters: Set<(message: Buffer) => void> }>();

  constructor(options: RedisStoreOptions) {
    const { url, cluster, keyPrefix, commandTimeoutMs } = options;
    if ((url === undefined) === (cluster === undefined || cluster.length === 0)) {
      throw new Error('RedisStore needs exactly one of url and cluster');
    }
    if (!Number.isFinite(commandTimeoutMs) || commandTimeoutMs <= 0) {
      throw new RangeError(`commandTimeoutMs must be a positive number, got ${commandTimeoutMs}`);
    }
    this.#prefix = keyPrefix;
    this.#logger = options.logger;
    this.#onError = options.onError;

    const connection: RedisOptions = {
      commandTimeout: commandTimeoutMs,
      connectTimeout: CONNECT_TIMEOUT_MS,
      // A command in flight when the connection drops fails instead of being resent.
      maxRetriesPerRequest: 0,
    };
    this.#client =
      url !== undefined
        ? new Redis(url, {
            ...connection,
            // Fail a command at once while disconnected instead of queueing it for later.
            enableOfflineQueue: false,
            retryStrategy,
            enableAutoPipelining: true,
            lazyConnect: false,
          })
        : new Cluster(cluster!, {
            // Node connections keep ioredis's own queueing and reconnect settings.
            redisOptions: connection,
            clusterRetryStrategy: retryStrategy,
            // Kept on: with it off, the cluster's own ready check fails whenever the
            // node connection is still connecting, and reconnects can loop for seconds.
            // Commands never wait in it: #usable() refuses them until the cluster is
            // ready, and #bounded() caps the rest.
            enableOfflineQueue: true,
            enableAutoPipelining: true,
            lazyConnect: false,
          });
    // Our own deadline from the moment we issue a command, in both modes: a Cluster
    // re-sends on MOVED with a fresh timeout, and with auto-pipelining a command
    // waits for a stalled pipeline before ioredis's own timeout even starts.
    this.#commandTimeoutMs = commandTimeoutMs;
    // Without a listener an 'error' event would be thrown and crash the process.
    this.#client.on('error', (err: Error) => this.#fail('connection', err));
    this.#subscriber = this.#subscriberConnection();
    this.#client.on('ready', () => {
      if (this.#failingSinceReady) this.#logger?.info({ suppressed: this.#suppressed }, 'redis cache available again');
      this.#failingSinceReady = false;
      this.#suppressed = 0;
      this.#lastWarnAt = -Infinity;
    });
  }

  isReady(): boolean {
    return !this.#closed && this.#client.status === 'ready';
  }

  /**
   * Worth asking now: connected, and no command failed in the last
   * FAILURE_BACKOFF_MS. A stalled Redis stays "ready" while every command times
   * out; the read path then skips it rather than pay the timeout on every miss.
   */
  isHealthy(): boolean {
    return this.isReady() && performance.now() - this.#lastFailureAt >= FAILURE_BACKOFF_MS;
  }

  /** Resolves true once connected, false after timeoutMs or on close; never rejects. For startup and tests. */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady()) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ready: boolean): void => {
        clearTimeout(timer);
        this.#client.off('ready', onReady);
        this.#client.off('end', onEnd);
        resolve(ready);
      };
      const onReady = (): void => done(true);
      const onEnd = (): void => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#client.on('ready', onReady);
      this.#client.on('end', onEnd);
    });
  }

  async get(key: string): Promise<StoredAnswer | undefined> {
    if (!this.#usable('get')) return undefined;
    let raw: Buffer | null;
    try {
      raw = await this.#bounded(this.#client.getBuffer(this.#prefix + key));
    } catch (err) {
      this.#fail('get', err);
      return undefined;
    }
    if (raw === null) return undefined;
    const answer = decodeAnswer(raw);
    if (answer === undefined) {
      this.#fail('decode', new Error(`unreadable cache entry: ${raw.length} bytes, format byte ${raw[0]}`));
    }
    return answer;
  }

  /**
   * ttlSeconds undefined or Infinity = no expiry; otherwise rounded up to whole
   * seconds (Redis EX). A ttl that is not positive stores nothing: it has expired.
   */
  async set(key: string, answer: StoredAnswer, ttlSeconds?: number): Promise<void> {
    if (ttlSeconds !== undefined && !(ttlSeconds > 0)) return;
    if (!this.#usable('set')) return;
    let value: Buffer;
    try {
      value = encodeAnswer(answer);
    } catch (err) {
      this.#fail('encode', err);
      return;
    }
    const redisKey = this.#prefix + key;
    try {
      await this.#bounded(ttlSeconds === undefined || ttlSeconds === Infinity ? this.#client.set(redisKey, value) : this.#client.set(redisKey, value, 'EX', Math.ceil(ttlSeconds)));
    } catch (err) {
      this.#fail('set', err);
    }
  }

  async delete(key: string): Promise<void> {
    if (!this.#usable('delete')) return;
    try {
      await this.#bounded(this.#client.del(this.#prefix + key));
    } catch (err) {
      this.#fail('delete', err);
    }
  }

  /**
   * Takes the fill lock for key: a FillLock to release once the fill is written,
   * 'held' (another holder has it: wait for its fill), or 'failed' (Redis did not
   * answer: do not wait for anyone).
   */
  async tryLock(key: string, ttlMs: number): Promise<FillLock | 'held' | 'failed'> {
    if (!this.#usable('lock')) return 'failed';
    const token = randomUUID();
    try {
      // If this times out the SET may still land later; the lock then just expires.
      const reply = await this.#bounded(this.#client.set(this.#lockKey(key), token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'));
      if (reply !== 'OK') return 'held';
    } catch (err) {
      this.#fail('lock', err);
      // The SET may still run once Redis answers again: take back what would be
      // an ownerless lock (queued behind the SET, so it lands right after it).
      this.#client.eval(UNLOCK_SCRIPT, 1, this.#lockKey(key), token).catch(() => undefined);
      return 'failed';
    }
    // The token stays with this one holding: if it expires and the key is taken
    // again (by anyone, this instance too), release() leaves the new lock alone.
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        if (!this.#usable('unlock')) return;
        try {
          await this.#bounded(this.#client.eval(UNLOCK_SCRIPT, 1, this.#lockKey(key), token));
        } catch (err) {
          this.#fail('unlock', err);
        }
      },
    };
  }

  /**
   * Tells every instance waiting for the fill of key its outcome: published on
   * the key's channel, and kept briefly at its outcome key for a waiter that
   * subscribes just after. Two commands, whatever the number of waiters.
   */
  async publishFill(key: string, outcome: FillOutcome): Promise<void> {
    if (!this.#usable('publish')) return;
    let message: Buffer;
    try {
      message = encodeOutcome(outcome);
    } catch (err) {
      this.#fail('encode', err);
      message = Buffer.of(OUTCOME_GAVE_UP);
    }
    const channel = this.#fillKey(key);
    try {
      await this.#bounded(Promise.all([this.#client.set(channel, message, 'PX', FILL_OUTCOME_TTL_MS), this.#client.publish(channel, message)]));
    } catch (err) {
      this.#fail('publish', err);
    }
  }

  /**
   * Waits for the outcome of another holder's fill of key: undefined when none
   * came within timeoutMs or Redis failed (the caller then asks a node). Costs
   * SUBSCRIBE (shared by the waiters of one key), one GET of the outcome key, and
   * UNSUBSCRIBE: a bounded number of commands, and no polling.
   */
  async awaitFill(key: string, timeoutMs: number): Promise<FillOutcome | undefined> {
    if (!this.#usable('subscribe') || !(timeoutMs > 0)) return undefined;
    const channel = this.#fillKey(key);
    let receive!: (message: Buffer) => void;
    const received = new Promise<Buffer>((resolve) => (receive = resolve));
    const entry = this.#joinChannel(channel, receive);
    let timer: NodeJS.Timeout | undefined;
    try {
      const expired = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
      try {
        await this.#bounded(entry.subscribed);
      } catch (err) {
        this.#fail('subscribe', err);
        return undefined;
      }
      // Published before we subscribed: it is still at the outcome key.
      const early = this.#bounded(this.#client.getBuffer(channel)).then(
        (value) => value ?? received,
        (err: unknown) => {
          this.#fail('get', err);
          return received;
        },
      );
      const message = await Promise.race([early, received, expired]);
      return message === undefined ? undefined : decodeOutcome(message);
    } finally {
      clearTimeout(timer);
      this.#leaveChannel(channel, receive);
    }
  }

  #joinChannel(channel: string, waiter: (message: Buffer) => void): { subscribed: Promise<unknown> } {
    let entry = this.#fillWaiters.get(channel);
    if (entry === undefined) {
      const subscribed = this.#subscriber.subscribe(channel);
      subscribed.catch(() => undefined);
      entry = { subscribed, waiters: new Set() };
      this.#fillWaiters.set(channel, entry);
    }
    entry.waiters.add(waiter);
    return entry;
  }

  #leaveChannel(channel: string, waiter: (message: Buffer) => void): void {
    const entry = this.#fillWaiters.get(channel);
    if (entry === undefined) return;
    entry.waiters.delete(waiter);
    if (entry.waiters.size > 0) return;
    this.#fillWaiters.delete(channel);
    this.#subscriber.unsubscribe(channel).catch(() => undefined);
  }

  /**
   * Its own connection, made with the store: one in subscriber mode takes no
   * other commands, so it also skips the ready check (an INFO). A SUBSCRIBE sent
   * while it (re)connects waits in its queue; #bounded caps that wait.
   */
  #subscriberConnection(): Redis | Cluster {
    const subscriber = this.#client instanceof Cluster ? this.#client.duplicate() : this.#client.duplicate({ enableOfflineQueue: true, enableAutoPipelining: false, enableReadyCheck: false });
    subscriber.on('error', (err: Error) => this.#fail('connection', err));
    subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      for (const waiter of this.#fillWaiters.get(channel.toString())?.waiters ?? []) waiter(message);
    });
    return subscriber;
  }

  #fillKey(key: string): string {
    return `${this.#prefix}fill:${key}`;
  }

  /** QUIT when connected (bounded by commandTimeoutMs), otherwise or on failure drop the connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscriber.disconnect();
    if (this.#client.status === 'ready') {
      try {
        await this.#bounded(this.#client.quit());
        return;
      } catch {
        // Fall through: a stalled or vanished server must not hold up shutdown.
      }
    }
    this.#client.disconnect();
  }

  /** The command raced against commandTimeoutMs, counted from when we issued it. */
  #bounded<T>(command: Promise<T>): Promise<T> {
    const ms = this.#commandTimeoutMs;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Command timed out after ${ms} ms`)), ms);
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

  #lockKey(key: string): string {
    return `${this.#prefix}lock:${key}`;
  }

  /** False (after reporting) when no command can succeed now; closed stores fail silently. */
  #usable(op: string): boolean {
    if (this.#closed) return false;
    if (this.#client.status === 'ready') return true;
    this.#fail(op, NOT_READY);
    return false;
  }

  #fail(op: string, cause: unknown): void {
    if (this.#closed && op === 'connection') return;
    const err = cause instanceof Error ? cause : new Error(String(cause));
    this.#failingSinceReady = true;
    this.#lastFailureAt = performance.now();
    try {
      this.#onError?.(op, err);
    } catch {
      // A broken callback must not turn a cache failure into a request failure.
    }
    const now = performance.now();
    if (now - this.#lastWarnAt < LOG_INTERVAL_MS) {
      this.#suppressed++;
      return;
    }
    this.#logger?.warn({ op, err, suppressed: this.#suppressed }, 'redis cache failure; serving without it');
    this.#lastWarnAt = now;
    this.#suppressed = 0;
  }
}

function encodeOutcome(outcome: FillOutcome): Buffer {
  if (outcome === 'gave-up') return Buffer.of(OUTCOME_GAVE_UP);
  return Buffer.concat([Buffer.of(outcome.stored ? OUTCOME_STORED : OUTCOME_ONE_OFF), encodeAnswer(outcome.answer)]);
}

/** An outcome this release cannot read counts as given up: the waiter asks a node. */
function decodeOutcome(message: Buffer): FillOutcome {
  const kind = message[0];
  if (kind !== OUTCOME_ONE_OFF && kind !== OUTCOME_STORED) return 'gave-up';
  const answer = decodeAnswer(message.subarray(1));
  return answer === undefined ? 'gave-up' : { answer, stored: kind === OUTCOME_STORED };
}
