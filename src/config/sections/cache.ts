// cache: the memory tier, the Redis tier, the cross-check of answers before they
// are stored, and latest answers kept for staleness.
import { z } from 'zod';
import { checkRedisUrl } from '../net.js';
import { byteSize, MIB, nonNegativeInt, positiveInt } from './common.js';

const redisUrl = z
  .string()
  .transform((raw, ctx) => {
    const checked = checkRedisUrl(raw);
    if (checked.ok) return checked.value;
    ctx.addIssue({ code: 'custom', message: checked.reason });
    return z.NEVER;
  })
  // For editors (the JSON Schema); the transform checks the rest.
  .meta({ pattern: '^rediss?://' });

/** Exactly one of url (one server) or cluster (seed nodes of a Redis Cluster). */
type RedisTarget = { url: string; cluster?: undefined } | { url?: undefined; cluster: string[] };

const RedisSchema = z
  .strictObject({
    url: redisUrl.optional().describe('One Redis server: `redis://` or `rediss://` (TLS), credentials allowed.'),
    cluster: z.array(redisUrl).min(1).optional().describe('Redis Cluster seed URLs, instead of `url`.'),
    keyPrefix: z
      .string()
      .default('ledger-proxy:')
      .describe('The prefix of every key and fill channel; instances of different chains may share it.'),
    maxTtlSeconds: positiveInt
      .default(604800)
      .describe(
        "The cap on an entry's expiry (entries expire near the time their version is pruned), and the expiry on a chain whose oldest version has not moved.",
      ),
    commandTimeoutMs: positiveInt.default(200).describe('A slower Redis command counts as a miss, not a failure.'),
    fillLock: z.boolean().default(true).describe('One instance fills a missing entry; the others wait for it.'),
    fillLockMs: positiveInt
      .default(2000)
      .describe('How long a fill lock lives: the longest wait for an instance that died while filling.'),
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
const VerifySchema = z
  .strictObject({
    mode: z
      .enum(['off', 'sample', 'always'])
      .default('off')
      .describe(
        "`always`: a pinned answer (or a latest answer about to be stored at its header version) is stored only once another node that covers its version answered the same bytes; the client's reply does not wait for it. Likewise a page of the change feed is taken only once another node sent the same bytes for its versions. `sample`: a share of answers and pages (`sampleRatio`) is checked so, the rest stored or taken at once; after two nodes disagree on a page, every page is checked until two agree. Needs two nodes covering each version: with one upstream, a warning at start, and nothing checked is stored or taken.",
      ),
    sampleRatio: z
      .number()
      .min(0)
      .max(1)
      .default(0.1)
      .describe('In `sample` mode, the share of answers (and feed pages) checked, 0 to 1 (0 is `off`, 1 is `always`).'),
  })
  .describe(
    "The cross-check of answers by a second node before they are stored, and of the change feed's pages before they are taken.",
  );

export const CacheSchema = z
  .strictObject({
    memory: z
      .strictObject({
        // Refuse 0: an unbounded or empty memory tier is a mistake, not a setting.
        maxBytes: byteSize()
          .default(256 * MIB)
          .describe(
            'The bound of everything kept per answer, per process: the parsed spellings of requests that were hits get a quarter of it, the latest answers an eighth (only with a `latest` stale setting on), the memory tier (answers and their gzip copies) the rest. The RSS stays within 1.3 × maxBytes + 160MiB.',
          ),
      })
      .prefault({})
      .describe('The in-process tier.'),
    redis: RedisSchema.optional().describe(
      'The shared tier, one Redis server or a Redis Cluster; unset: memory only. Give exactly one of `url` and `cluster`.',
    ),
    verify: VerifySchema.prefault({}),
  })
  .describe('The cache tiers.');

const ChangeFeedSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Follow the ledger\'s transaction feed (`GET /v1/transactions` in BCS, every page verified by hash) from a healthy node, and answer a latest read of a cached state route (`raw_item`, `state_values/raw`, accounts, resources, modules) from its newest stored answer (`X-Cache: HIT`) when no version since wrote what it reads; anything else is forwarded. Live on SIGHUP. See docs/caching.md, "Latest reads from the change feed".',
      ),
    pageSize: z
      .int()
      .min(1)
      .max(10_000)
      .default(100)
      .describe(
        'Versions asked per page; a node answers at most its own page size (`max_transactions_page_size`, 100 by default).',
      ),
    intervalMs: nonNegativeInt
      .default(0)
      .describe(
        'The least time between two pages once the feed has caught up; `0`: a page as soon as any node shows a newer version. While the feed is behind the newest version it reads pages back to back.',
      ),
    waitMs: nonNegativeInt
      .max(10_000)
      .default(50)
      .describe(
        'How long a latest read may wait for the feed to verify the newest version known (its page is on its way) instead of asking a node itself; reads waiting for one version share that page. `0`: it never waits.',
      ),
    maxLagVersions: z
      .int()
      .min(1)
      .default(10_000)
      .describe(
        'When the feed falls this many versions behind the newest version known, it starts afresh from the newest (answers read before then are refreshed by a node first).',
      ),
    windowVersions: z
      .int()
      .min(1)
      .max(1_000_000)
      .default(2_000)
      .describe(
        "The recent versions whose writes are kept whole, to judge an answer read at a version the feed had already passed (a lagging node's, another instance's in Redis). A reload that changes it starts the feed afresh.",
      ),
    maxWatchedKeys: z
      .int()
      .min(1)
      .default(100_000)
      .describe(
        'State keys (and account-wide classes of writes) watched past the window for the answers judged, about 200 bytes each; the least recently judged go first. A reload that changes it starts the feed afresh.',
      ),
  })
  .prefault({})
  .describe('Latest reads answered exactly from the change feed, off by default.');

export const LatestSchema = z
  .strictObject({
    maxStalenessMs: nonNegativeInt
      .default(0)
      .describe(
        'A latest read may be answered from the newest answer fetched at most this long ago (`X-Cache: STALE`); `0`: off.',
      ),
    maxStalenessVersions: nonNegativeInt
      .default(0)
      .describe('… or read at most this many versions behind the newest version known; `0`: off.'),
    staleIfErrorMs: nonNegativeInt
      .default(0)
      .describe(
        'When every node fails or the node budget is spent, latest reads are answered from an answer at most this old instead of a 503; `0`: off.',
      ),
    changeFeed: ChangeFeedSchema,
  })
  .describe('Latest reads: exact answers from the change feed, and bounded staleness; both off by default.');
