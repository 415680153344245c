// The store's reads of entries. On a single Redis server, the GETs asked for in
// one turn of the event loop go out as one MGET: under load a hit then costs
// Redis and the client one element of a reply instead of one command each
// (ioredis builds a command, a promise and a pipeline slot per command, and the
// deadline a timer per command). On a Cluster the keys of one turn map to many
// slots, which one MGET cannot span, so each GET is sent on its own there and
// follows its own MOVED or ASK.
import { Command } from 'ioredis';
import type { RedisCommands } from './commands.js';

interface Waiter {
  resolve(entry: Buffer | null): void;
  reject(err: unknown): void;
}

export class BatchedGets {
  #keys: string[] = [];
  #waiters: Waiter[] = [];

  constructor(private readonly commands: RedisCommands) {}

  /**
   * The entry at `key` (prefixed), or null. Rejects when Redis fails or the
   * batch's deadline (RedisCommands.bounded, from when the batch is sent in this
   * same turn) passes; every key of a batch fails together, as the commands of
   * one pipeline do.
   */
  get(key: string): Promise<Buffer | null> {
    const commands = this.commands;
    const redis = commands.redis;
    if (redis.isCluster) return commands.bounded(redis.getBuffer(key));
    return new Promise((resolve, reject) => {
      if (this.#keys.length === 0) setImmediate(this.#send);
      this.#keys.push(key);
      this.#waiters.push({ resolve, reject });
    });
  }

  readonly #send = (): void => {
    const keys = this.#keys;
    const waiters = this.#waiters;
    this.#keys = [];
    this.#waiters = [];
    const commands = this.commands;
    const redis = commands.redis;
    // Sent as it is, not through ioredis's automatic pipeline: the batch is this
    // turn's pipeline already, and one more would cost a pipeline object per batch.
    const mget = new Command('mget', keys, { replyEncoding: null });
    redis.sendCommand(mget);
    commands.bounded(mget.promise as Promise<Array<Buffer | null>>).then(
      (entries) => {
        for (let i = 0; i < waiters.length; i++) waiters[i].resolve(entries[i] ?? null);
      },
      (err: unknown) => {
        for (const waiter of waiters) waiter.reject(err);
      },
    );
  };
}
