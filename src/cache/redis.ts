// The shared tier: pinned answers in Redis (single node or Cluster), binary-encoded
// (codec.ts), with the fill lock (fill-lock.ts) and the fill channel
// (fill-channel.ts) the read path uses across instances. It FAILS OPEN: Redis
// being down, slow or restarting costs a miss, never an error to a client.
import { LRUCache } from 'lru-cache';
import type { StoredAnswer } from '../wire/read-request.js';
import { type EntryFault, encodeAnswer, readEntry } from './codec.js';
import { FillChannel } from './fill-channel.js';
import { tryFillLock } from './fill-lock.js';
import { checkRedisClientOptions, type RedisClientOptions, redisClient } from './redis-client.js';
import { RedisCommands } from './redis-commands.js';
import type { AnswerStore, FillLock, FillOutcome } from './store.js';

export interface RedisStoreOptions extends RedisClientOptions {
  /** prepended to every key, so instances of one deployment share entries and nothing else */
  keyPrefix: string;
  /** called for every entry that fails its check (codec.ts): it is read as a miss */
  onCorrupt?: (fault: EntryFault) => void;
}

/** How many keys of bad entries are remembered, so each is logged once. */
const LOGGED_CORRUPT_KEYS = 1024;

export class RedisStore implements AnswerStore {
  readonly tier = 'redis' as const;
  readonly #commands: RedisCommands;
  readonly #fills: FillChannel;
  readonly #options: RedisStoreOptions;
  readonly #loggedCorrupt = new LRUCache<string, true>({ max: LOGGED_CORRUPT_KEYS });

  constructor(options: RedisStoreOptions) {
    checkRedisClientOptions(options);
    this.#options = options;
    this.#commands = new RedisCommands(redisClient(options, 'cache'), options.keyPrefix, options.commandTimeoutMs);
    this.#fills = new FillChannel(this.#commands, redisClient(options, 'fill-channel'));
  }

  isReady(): boolean {
    return this.#commands.isReady();
  }

  /** Connected, and no command failed just now: worth asking (RedisCommands.isHealthy). */
  isHealthy(): boolean {
    return this.#commands.isHealthy();
  }

  /** Resolves true once connected, false after timeoutMs or on close; never rejects. For startup and tests. */
  whenReady(timeoutMs: number): Promise<boolean> {
    return this.#commands.whenReady(timeoutMs);
  }

  async get(key: string): Promise<StoredAnswer | undefined> {
    const commands = this.#commands;
    if (!commands.usable('get')) return undefined;
    let raw: Buffer | null;
    try {
      raw = await commands.bounded(commands.redis.getBuffer(commands.prefix + key));
    } catch (err) {
      commands.fail('get', err);
      return undefined;
    }
    if (raw === null) return undefined;
    const answer = readEntry(raw);
    if (typeof answer !== 'string') return answer;
    this.#corrupt(key, answer, raw.length);
    return undefined;
  }

  /**
   * A bad entry is a miss: the read path answers from a node and writes the good
   * answer over it. It is no Redis failure, so Redis is not left alone after it.
   */
  #corrupt(key: string, fault: EntryFault, bytes: number): void {
    try {
      this.#options.onCorrupt?.(fault);
    } catch {
      // A broken callback must not turn a cache miss into a request failure.
    }
    if (this.#loggedCorrupt.has(key)) return;
    this.#loggedCorrupt.set(key, true);
    this.#options.logger?.warn({ key, fault, bytes }, 'redis entry failed its check; read as a miss');
  }

  /**
   * ttlSeconds undefined or Infinity = no expiry; otherwise rounded up to whole
   * seconds (Redis EX). A ttl that is not positive stores nothing: it has expired.
   */
  async set(key: string, answer: StoredAnswer, ttlSeconds?: number): Promise<void> {
    if (ttlSeconds !== undefined && !(ttlSeconds > 0)) return;
    const commands = this.#commands;
    if (!commands.usable('set')) return;
    let value: Buffer;
    try {
      value = encodeAnswer(answer);
    } catch (err) {
      commands.fail('encode', err);
      return;
    }
    const redisKey = commands.prefix + key;
    const redis = commands.redis;
    try {
      await commands.bounded(ttlSeconds === undefined || ttlSeconds === Infinity ? redis.set(redisKey, value) : redis.set(redisKey, value, 'EX', Math.ceil(ttlSeconds)));
    } catch (err) {
      commands.fail('set', err);
    }
  }

  async delete(key: string): Promise<void> {
    const commands = this.#commands;
    if (!commands.usable('delete')) return;
    try {
      await commands.bounded(commands.redis.del(commands.prefix + key));
    } catch (err) {
      commands.fail('delete', err);
    }
  }

  /** The fill lock for key (fill-lock.ts): a FillLock, 'held' by another holder, or 'failed'. */
  tryLock(key: string, ttlMs: number): Promise<FillLock | 'held' | 'failed'> {
    return tryFillLock(this.#commands, key, ttlMs);
  }

  /** Tells every instance waiting for the fill of key its outcome. */
  publishFill(key: string, outcome: FillOutcome): Promise<void> {
    return this.#fills.publish(key, outcome);
  }

  /** The outcome of another holder's fill of key; undefined when none came within timeoutMs or Redis failed. */
  awaitFill(key: string, timeoutMs: number): Promise<FillOutcome | undefined> {
    return this.#fills.await(key, timeoutMs);
  }

  /** QUIT when connected (bounded by commandTimeoutMs), otherwise or on failure drop the connection. */
  async close(): Promise<void> {
    this.#fills.close();
    await this.#commands.close();
  }
}
