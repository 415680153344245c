// The index a purge by route family and version range reads: Redis keys are
// SHA-256 hashes, so nothing else says which entry answers what. Beside each
// stored entry its key goes into a sorted set scored by the answer's version, one
// set per generation, route family and hour of writing (`<prefix>purge:index:
// <generation>:<family>:<hour>`). A set expires once every entry written into it
// has (no entry lives longer than maxTtlSeconds), so the index holds at most the
// entries written in the last maxTtlSeconds, whether or not the nodes prune.
// Redis may evict a set under maxmemory like any other key: the index frees what
// it still holds at once, and the purge's record (purge-records.ts) keeps every
// entry it names from being read again, the index's or not.
import type { RedisCommands } from './commands.js';

/** A set per hour of writing, or fewer, longer ones when maxTtlSeconds is long. */
const MIN_SET_SECONDS = 3600;
const MAX_SETS = 256;
/** Keys read, deleted and removed from a set per round trip of a range purge. */
const BATCH = 256;

export class PurgeIndex {
  readonly #setMs: number;

  constructor(
    private readonly commands: RedisCommands,
    /** cache.redis.maxTtlSeconds: no entry outlives it */
    private readonly maxTtlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#setMs = Math.max(MIN_SET_SECONDS, Math.ceil(maxTtlSeconds / MAX_SETS)) * 1000;
  }

  /**
   * Indexes `key`, an entry just written. Its failure is reported like any
   * command's and costs only this entry's place in a range purge.
   */
  async add(generation: number, family: string, version: bigint, key: string): Promise<void> {
    const commands = this.commands;
    const set = Math.floor(this.now() / this.#setMs);
    const setKey = this.#setKey(generation, family, set);
    // Every entry written into the set has expired by then.
    const expireAt = Math.ceil(((set + 1) * this.#setMs) / 1000) + this.maxTtlSeconds;
    const redis = commands.redis;
    try {
      await commands.bounded(
        Promise.all([redis.zadd(setKey, Number(version), `${key}:${version}`), redis.expireat(setKey, expireAt)]),
      );
    } catch (err) {
      commands.fail('index', err, setKey);
    }
  }

  /**
   * Deletes every indexed entry of `family` whose version is in [from, to] (to
   * null: no upper bound), a batch at a time, and resolves with how many existed.
   * Rejects when Redis fails: the purge is then incomplete.
   */
  async deleteRange(generation: number, family: string, from: bigint, to: bigint | null): Promise<number> {
    const now = this.now();
    // One set either side for clocks that disagree between instances.
    const first = Math.floor((now - this.maxTtlSeconds * 1000) / this.#setMs) - 1;
    const last = Math.floor(now / this.#setMs) + 1;
    const sets: Array<Promise<number>> = [];
    for (let set = first; set <= last; set++)
      sets.push(this.#deleteFromSet(this.#setKey(generation, family, set), from, to));
    const counts = await Promise.all(sets);
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Scores are doubles, exact below 2^53 only: the set is read by the rounded
   * bounds (which hold every version in range) and each member's own version,
   * kept in its text, decides.
   */
  async #deleteFromSet(setKey: string, from: bigint, to: bigint | null): Promise<number> {
    const { commands } = this;
    const redis = commands.redis;
    const min = String(Number(from));
    const max = to === null ? '+inf' : String(Number(to));
    let kept = 0;
    let deleted = 0;
    for (;;) {
      // Members left in place (rounding only) stay first in the set's order: skip them.
      const members = await commands.bounded(redis.zrangebyscore(setKey, min, max, 'LIMIT', kept, BATCH));
      const doomed = members.filter((member) => inRange(member, from, to));
      kept += members.length - doomed.length;
      if (doomed.length > 0) {
        const existed = await commands.bounded(
          Promise.all(doomed.map((member) => redis.unlink(commands.prefix + member.slice(0, member.lastIndexOf(':'))))),
        );
        deleted += existed.reduce((a, b) => a + b, 0);
        await commands.bounded(redis.zrem(setKey, ...doomed));
      }
      if (members.length < BATCH) return deleted;
    }
  }

  #setKey(generation: number, family: string, set: number): string {
    return `${this.commands.prefix}purge:index:${generation}:${family}:${set}`;
  }
}

const DECIMAL = /^\d{1,20}$/;

/** A member's own version (its text after the last ':') is in [from, to]; a member not written here never is. */
function inRange(member: string, from: bigint, to: bigint | null): boolean {
  const text = member.slice(member.lastIndexOf(':') + 1);
  if (!DECIMAL.test(text)) return false;
  const version = BigInt(text);
  return version >= from && (to === null || version <= to);
}
