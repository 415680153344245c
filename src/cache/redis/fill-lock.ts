// The fill lock (DESIGN "Cache keys and entries"): one instance at a time fills a
// key, under `<prefix>lock:<key>` with a token only its holder knows, for at most
// its ttl.
import { randomUUID } from 'node:crypto';
import type { RedisCommands } from './commands.js';
import type { FillLock } from '../store.js';

/** Deletes the lock only when it still holds our token: it may have expired and been taken. */
const UNLOCK_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Takes the fill lock for key: a FillLock to release once the fill is written,
 * 'held' (another holder has it: wait for its fill), or 'failed' (Redis did not
 * answer, or the node serving the lock failed just now: do not wait for anyone).
 */
export async function tryFillLock(
  commands: RedisCommands,
  key: string,
  ttlMs: number,
): Promise<FillLock | 'held' | 'failed'> {
  if (!commands.usable('lock')) return 'failed';
  const lockKey = `${commands.prefix}lock:${key}`;
  // On a Cluster the lock may live on another node than the entry.
  if (!commands.isHealthy(lockKey)) return 'failed';
  const token = randomUUID();
  try {
    // If this times out the SET may still land later; the lock then just expires.
    const reply = await commands.bounded(commands.redis.set(lockKey, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'));
    if (reply !== 'OK') return 'held';
  } catch (err) {
    commands.fail('lock', err, lockKey);
    // The SET may still run once Redis answers again: take back what would be
    // an ownerless lock (queued behind the SET, so it lands right after it).
    commands.redis.eval(UNLOCK_SCRIPT, 1, lockKey, token).catch(() => undefined);
    return 'failed';
  }
  // The token stays with this one holding: if it expires and the key is taken
  // again (by anyone, this instance too), release() leaves the new lock alone.
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      if (!commands.usable('unlock')) return;
      try {
        await commands.bounded(commands.redis.eval(UNLOCK_SCRIPT, 1, lockKey, token));
      } catch (err) {
        commands.fail('unlock', err, lockKey);
      }
    },
  };
}
