// The shared tier: pinned answers in Redis (single node or Cluster), binary-encoded
// (codec.ts), with the fill lock (fill-lock.ts) and the fill channel
// (fill-channel.ts) the read path uses across instances, and the purges that
// reach every instance (purge-channel.ts, purge-index.ts, purge-records.ts). It
// FAILS OPEN: Redis being down, slow or restarting costs a miss, never an error
// to a client.
import { LRUCache } from 'lru-cache';
import type { StoredAnswer } from '../../model/read.js';
import { type EntryFault, encodeAnswer, entryFamily, entryPurges, readEntry } from './codec.js';
import { BatchedGets } from './batched-gets.js';
import { FillChannel } from './fill-channel.js';
import { tryFillLock } from './fill-lock.js';
import { CacheGeneration } from '../generation.js';
import { sharedKey } from '../key.js';
import { PurgeChannel } from './purge-channel.js';
import { PurgeIndex } from './purge-index.js';
import { checkRedisClientOptions, type RedisClientOptions, redisClient } from './client.js';
import { RedisCommands } from './commands.js';
import type { Announcement, AnswerStore, FillLock, FillOutcome, PurgeListener } from '../store.js';

export interface RedisStoreOptions extends RedisClientOptions {
  /** prepended to every key, so instances of one deployment share entries and nothing else */
  keyPrefix: string;
  /** called for every entry that fails its check (codec.ts): it is read as a miss */
  onCorrupt?: (fault: EntryFault) => void;
  /** the process's cache generation, which this store keeps as Redis has it (a new one when absent) */
  generation?: CacheGeneration;
  /**
   * cache.redis.maxTtlSeconds, which every entry's TTL stays within: entries
   * stored with a route family are then indexed for purges by family and version
   * range, for that long. Absent: nothing is indexed.
   */
  maxTtlSeconds?: number;
}

/** How many keys of bad entries are remembered, so each is logged once. */
const LOGGED_CORRUPT_KEYS = 1024;

/** What a RedisStore is made of: its clients' commands and the channels, index and generation on them. */
export interface RedisStoreParts {
  options: RedisStoreOptions;
  commands: RedisCommands;
  gets: BatchedGets;
  fills: FillChannel;
  purges: PurgeChannel;
  /** absent without maxTtlSeconds: nothing is indexed */
  index: PurgeIndex | undefined;
  generation: CacheGeneration;
}

/** A RedisStore for `options`: its two clients (commands, and the channels' subscriber) and the parts on them. */
export function redisStore(options: RedisStoreOptions): RedisStore {
  checkRedisClientOptions(options);
  const commands = new RedisCommands(redisClient(options, 'cache'), options.keyPrefix, options.commandTimeoutMs);
  const subscriber = redisClient(options, 'fill-channel');
  const generation = options.generation ?? new CacheGeneration();
  return new RedisStore({
    options,
    commands,
    gets: new BatchedGets(commands),
    fills: new FillChannel(commands, subscriber),
    purges: new PurgeChannel(commands, subscriber.redis, generation, options.maxTtlSeconds),
    index: options.maxTtlSeconds === undefined ? undefined : new PurgeIndex(commands, options.maxTtlSeconds),
    generation,
  });
}

export class RedisStore implements AnswerStore {
  readonly tier = 'redis' as const;
  readonly #commands: RedisCommands;
  readonly #gets: BatchedGets;
  readonly #fills: FillChannel;
  readonly #purges: PurgeChannel;
  readonly #index: PurgeIndex | undefined;
  readonly generation: CacheGeneration;
  readonly #options: RedisStoreOptions;
  readonly #loggedCorrupt = new LRUCache<string, true>({ max: LOGGED_CORRUPT_KEYS });

  constructor(parts: RedisStoreParts) {
    this.#options = parts.options;
    this.#commands = parts.commands;
    this.#gets = parts.gets;
    this.#fills = parts.fills;
    this.#purges = parts.purges;
    this.#index = parts.index;
    this.generation = parts.generation;
  }

  isReady(): boolean {
    return this.#commands.isReady();
  }

  /**
   * Connected, no command of the node serving key failed just now (of any node,
   * without a key: RedisCommands.isHealthy), and the generation read since the
   * connection was made: worth asking.
   */
  isHealthy(key?: string): boolean {
    const commands = this.#commands;
    return commands.isHealthy(key === undefined ? undefined : commands.prefix + key) && this.#purges.synced;
  }

  /**
   * Resolves true once connected, the generation read and the purge channel
   * subscribed to (so a purge announced from then on is heard as it is made),
   * false after timeoutMs (and the read's own command timeout) or on close; never
   * rejects. For startup and tests.
   */
  async whenReady(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    if (!(await this.#commands.whenReady(timeoutMs))) return false;
    await this.#purges.resync();
    if (!(await this.#purges.whenSubscribed(deadline - performance.now()))) return false;
    return this.#purges.synced;
  }

  async get(key: string): Promise<StoredAnswer | undefined> {
    const commands = this.#commands;
    if (!commands.usable('get')) return undefined;
    const redisKey = commands.prefix + key;
    let raw: Buffer | null;
    try {
      raw = await this.#gets.get(redisKey);
    } catch (err) {
      commands.fail('get', err, redisKey);
      return undefined;
    }
    if (raw === null) return undefined;
    const answer = readEntry(raw);
    if (typeof answer === 'string') {
      this.#corrupt(key, answer, raw.length);
      return undefined;
    }
    // Named by a range purge made since it was written: gone, whether or not the index still had it.
    const records = this.#purges.records;
    const purges = entryPurges(raw);
    if (purges < records.newest && records.names(purges, entryFamily(raw), answer.version)) return undefined;
    return answer;
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
   * `family`: the answer's route family, under which it is indexed for purges
   * (maxTtlSeconds) and which its mark names, with the purges known here now
   * (purge-records.ts).
   */
  async set(key: string, answer: StoredAnswer, ttlSeconds?: number, family?: string): Promise<void> {
    if (ttlSeconds !== undefined && !(ttlSeconds > 0)) return;
    const commands = this.#commands;
    if (!commands.usable('set')) return;
    let value: Buffer;
    try {
      value = encodeAnswer(answer, { family: family ?? '', purges: this.#purges.purges });
    } catch (err) {
      commands.fail('encode', err);
      return;
    }
    const redisKey = commands.prefix + key;
    const redis = commands.redis;
    const written = commands.bounded(
      ttlSeconds === undefined || ttlSeconds === Infinity
        ? redis.set(redisKey, value)
        : redis.set(redisKey, value, 'EX', Math.ceil(ttlSeconds)),
    );
    // Sent right behind the entry (on one server, in the same pipeline): no extra round trip.
    const indexed =
      family === undefined ? undefined : this.#index?.add(this.generation.current, family, answer.version, key);
    try {
      await written;
    } catch (err) {
      commands.fail('set', err, redisKey);
    }
    await indexed;
  }

  async delete(key: string): Promise<void> {
    const commands = this.#commands;
    if (!commands.usable('delete')) return;
    const redisKey = commands.prefix + key;
    try {
      await commands.bounded(commands.redis.del(redisKey));
    } catch (err) {
      commands.fail('delete', err, redisKey);
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

  /** Told of every purge another process announces, and of purges this one missed (purge-channel.ts). */
  onPurge(listener: PurgeListener): void {
    this.#purges.onNotice(listener);
  }

  /** Moves every process sharing this Redis to a new generation. Rejects when Redis fails. */
  async purgeAll(): Promise<Announcement & { deleted: number }> {
    return { ...(await this.#purges.announce({ scope: 'all' })), deleted: 0 };
  }

  /**
   * Deletes the indexed entries of `family` with versions in [from, to] (to null:
   * no upper bound), records the range so that no entry it names is read again,
   * the index's or not (purge-records.ts), and tells the other processes;
   * `deleted`: how many the index held. Rejects when Redis fails.
   */
  async purgeRange(family: string, from: bigint, to: bigint | null): Promise<Announcement & { deleted: number }> {
    if (!this.#commands.usable('purge')) throw new Error('redis is not connected');
    const deleted =
      this.#index === undefined ? 0 : await this.#index.deleteRange(this.generation.current, family, from, to);
    return {
      ...(await this.#purges.announce({
        scope: 'family',
        family,
        fromVersion: String(from),
        toVersion: to === null ? null : String(to),
      })),
      deleted,
    };
  }

  /** Deletes the entry of key text `text` and tells the other processes; `deleted`: 1 if it existed, else 0. Rejects when Redis fails. */
  async purgeKey(text: string): Promise<Announcement & { deleted: number }> {
    const commands = this.#commands;
    if (!commands.usable('purge')) throw new Error('redis is not connected');
    const deleted = await commands.bounded(commands.redis.unlink(commands.prefix + sharedKey(text)));
    return { ...(await this.#purges.announce({ scope: 'key', key: text })), deleted };
  }

  /** QUIT when connected (bounded by commandTimeoutMs), otherwise or on failure drop the connection. */
  async close(): Promise<void> {
    this.#purges.close();
    this.#fills.close();
    await this.#commands.close();
  }
}
