// cache: the memory tier, the Redis tier, and latest answers kept for staleness.
import { z } from 'zod';
import { checkRedisUrl } from '../net.js';
import { MIB, nonNegativeInt, positiveInt } from './common.js';

const redisUrl = z.string().transform((raw, ctx) => {
  const checked = checkRedisUrl(raw);
  if (checked.ok) return checked.value;
  ctx.addIssue({ code: 'custom', message: checked.reason });
  return z.NEVER;
});

/** Exactly one of url (one server) or cluster (seed nodes of a Redis Cluster). */
export type RedisTarget = { url: string; cluster?: undefined } | { url?: undefined; cluster: string[] };

const RedisSchema = z
  .strictObject({
    url: redisUrl.optional(),
    cluster: z.array(redisUrl).min(1).optional(),
    keyPrefix: z.string().default('ledger-proxy:'),
    // Entries expire near the time their version is pruned, but never later than this.
    maxTtlSeconds: positiveInt.default(604800),
    commandTimeoutMs: positiveInt.default(200),
    // One proxy fills a missing entry while the others wait for it, up to fillLockMs.
    fillLock: z.boolean().default(true),
    fillLockMs: positiveInt.default(2000),
  })
  .superRefine((redis, ctx) => {
    if (redis.url !== undefined && redis.cluster !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['cluster'], message: 'give either url or cluster, not both' });
    } else if (redis.url === undefined && redis.cluster === undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'required (or cluster)' });
    }
  })
  // The check above makes the union true; state it so callers need no `!`.
  .transform((redis) => redis as Omit<typeof redis, 'url' | 'cluster'> & RedisTarget);

export const CacheSchema = z.strictObject({
  // Refuse 0: an unbounded or empty memory tier is a mistake, not a setting.
  memory: z.strictObject({ maxBytes: positiveInt.default(256 * MIB) }).prefault({}),
  redis: RedisSchema.optional(), // absent = memory tier only
});

export const LatestSchema = z.strictObject({
  maxStalenessMs: nonNegativeInt.default(0),
  maxStalenessVersions: nonNegativeInt.default(0),
  staleIfErrorMs: nonNegativeInt.default(0),
});
