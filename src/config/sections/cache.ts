// cache: the memory tier, the Redis tier, the cross-check of answers before they
// are stored, and latest answers kept for staleness.
import { z } from 'zod';
import { checkRedisUrl } from '../net.js';
import { byteSize, MIB, nonNegativeInt, positiveInt } from './common.js';

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

/**
 * A pinned answer is stored only once a second node answered the same bytes at
 * its version: 'always' for every answer, 'sample' for a share of them (the rest
 * are stored as they come), 'off' for none.
 */
const VerifySchema = z.strictObject({
  mode: z.enum(['off', 'sample', 'always']).default('off'),
  // The share of answers cross-checked in 'sample' mode: 0 is 'off', 1 is 'always'.
  sampleRatio: z.number().min(0).max(1).default(0.1),
});

export const CacheSchema = z.strictObject({
  // Refuse 0: an unbounded or empty memory tier is a mistake, not a setting.
  memory: z.strictObject({ maxBytes: byteSize().default(256 * MIB) }).prefault({}),
  redis: RedisSchema.optional(), // absent = memory tier only
  verify: VerifySchema.prefault({}),
});

export const LatestSchema = z.strictObject({
  maxStalenessMs: nonNegativeInt.default(0),
  maxStalenessVersions: nonNegativeInt.default(0),
  staleIfErrorMs: nonNegativeInt.default(0),
});
