// The purge hash, `<prefix>purge`: the cache generation, the count of purges
// and the records of range purges of one Redis (purge-channel.ts reads and
// changes it, purge-records.ts says what a record is). Read and changed by one
// script, so a purge and what it leaves there are one step.
import { type RangeRecord, recordOf } from './purge-records.js';
import type { RedisCommands } from './commands.js';

/**
 * Reads the hash and applies one purge to it, in one step. The generation and the
 * count never fall below the caller's (the hash was lost: FLUSHALL, eviction);
 * 'all' moves the generation on and drops every range record, 'range' adds one
 * (after dropping the family's others when folding), and records older than the
 * bound go. Returns {generation, purges, purges as stored before, record fields
 * and values...}. One key, so it runs as is on a Redis Cluster.
 *
 * ARGV: the caller's generation, the purges it knows of, the mode ('read',
 * 'count', 'all', 'range'), now (ms), the age past which a record goes (ms, 0:
 * never); for 'range': the record's value (recordValue), '1' to fold.
 */
const STATE_SCRIPT = `
local key = KEYS[1]
local storedGeneration = tonumber(redis.call('hget', key, 'generation') or '0')
local storedPurges = tonumber(redis.call('hget', key, 'purges') or '0')
local generation = math.max(storedGeneration, tonumber(ARGV[1]))
local purges = math.max(storedPurges, tonumber(ARGV[2]))
local mode = ARGV[3]
local now = tonumber(ARGV[4])
local maxAge = tonumber(ARGV[5])
if mode ~= 'read' then purges = purges + 1 end
if mode == 'all' then generation = generation + 1 end
local folded = mode == 'range' and ARGV[7] == '1' and string.match(ARGV[6], '^(%S+) ')
local result = {generation, purges, storedPurges}
local fields = redis.call('hgetall', key)
for i = 1, #fields, 2 do
  local field, value = fields[i], fields[i + 1]
  if string.sub(field, 1, 6) == 'range:' then
    local at, family = string.match(value, '^(%d+) (%S+) ')
    if mode == 'all' or (maxAge > 0 and tonumber(at or '0') < now - maxAge) or family == folded then
      redis.call('hdel', key, field)
    else
      table.insert(result, field)
      table.insert(result, value)
    end
  end
end
if mode == 'range' then
  local field = 'range:' .. purges
  local value = ARGV[4] .. ' ' .. ARGV[6]
  redis.call('hset', key, field, value)
  table.insert(result, field)
  table.insert(result, value)
end
if generation ~= storedGeneration or purges ~= storedPurges then redis.call('hset', key, 'generation', generation, 'purges', purges) end
return result`;

/** 'read' changes nothing but what a lost hash needs back; 'count' counts a purge of one key. */
export type PurgeMode = 'read' | 'count' | 'all' | 'range';

/** The hash as the script left it. */
export interface PurgeHash {
  generation: number;
  purges: number;
  /** the count as the hash had it before: below the caller's when the hash was lost */
  storedPurges: number;
  records: RangeRecord[];
}

/** What the calling process knows, which the hash never falls below, and the clock its records are dated by. */
export interface PurgeCaller {
  generation: number;
  purges: number;
  now: number;
  /** records older than this go (0: none does) */
  recordMaxAgeMs: number;
}

/** Runs the script on `key`; `range`: a range purge's record value (recordValue) and whether it folds. Rejects when Redis fails. */
export async function purgeHash(
  commands: RedisCommands,
  key: string,
  caller: PurgeCaller,
  mode: PurgeMode,
  range: [string, string] = ['', '0'],
): Promise<PurgeHash> {
  const args = [
    String(caller.generation),
    String(caller.purges),
    mode,
    String(caller.now),
    String(caller.recordMaxAgeMs),
    ...range,
  ];
  const reply = (await commands.bounded(commands.redis.eval(STATE_SCRIPT, 1, key, ...args))) as Array<number | string>;
  const records: RangeRecord[] = [];
  for (let i = 3; i + 1 < reply.length; i += 2) {
    const record = recordOf(String(reply[i]), String(reply[i + 1]));
    if (record !== undefined) records.push(record);
  }
  return { generation: Number(reply[0]), purges: Number(reply[1]), storedPurges: Number(reply[2]), records };
}
