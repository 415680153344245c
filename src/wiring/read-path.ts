// The read path, built from its parts: the tiers (memory, and Redis when set), the
// second node's check (cache.verify), the pinned and the latest reads over them, and
// the purges; ReadThrough receives them built.
import type { Logger } from 'pino';
import { CacheGeneration } from '../cache/generation.js';
import type { MemoryStore } from '../cache/memory.js';
import type { PruneClock } from '../ledger/prune-clock.js';
import type { Watermark } from '../ledger/watermark.js';
import type { FeedForwardReason } from '../model/feed-verdict.js';
import { FillCoordinator, type FillSettings } from '../serve/fill.js';
import { LatestReads } from '../serve/latest.js';
import type { LatestAnswers } from '../serve/latest-answers.js';
import { PinnedReads } from '../serve/pinned.js';
import type { LatestFeed, NodeReader, SharedPurge, SharedStore } from '../serve/ports.js';
import { CachePurge } from '../serve/purge.js';
import { ReadThrough } from '../serve/read-through.js';
import { CacheTiers } from '../serve/tiers.js';
import { AnswerVerifier, type VerifyOutcome, type VerifySettings } from '../serve/verify.js';

export interface ReadPathDeps {
  /** the vendor in every cache key (its name is read at each use: with vendor: auto the nodes name it) */
  vendor: { readonly vendor: string };
  nodes: NodeReader;
  /** synchronous, so a memory hit takes no async hop */
  memory: MemoryStore;
  redis?: SharedStore & SharedPurge;
  /** part of every key; the Redis store's when there is one (default: a new one) */
  generation?: CacheGeneration;
  /** every cached route's family, by route name, for purges by family (default: none) */
  families?: ReadonlyMap<string, string>;
  redisSettings?: FillSettings & { maxTtlSeconds: number };
  /** routing.deadlineMs: a pinned miss, waiting for another instance's fill included, ends within it */
  deadlineMs: number;
  watermark: Watermark;
  pruneClock: PruneClock;
  logger: Logger;
  /** newest latest answers, for bounded staleness and stale-if-error */
  latest?: LatestAnswers;
  /** told of every stale reply, by reason, for metrics */
  onStale?: (reason: 'bound' | 'error') => void;
  /** cache.verify (default off): answers stored only once a second node agreed */
  verify?: VerifySettings;
  /** told of every cache.verify check's outcome, for metrics */
  onVerify?: (outcome: VerifyOutcome) => void;
  /** the change feed's judgement of stored latest answers (latest.changeFeed) */
  feed?: LatestFeed;
  /** told of every latest read the feed answered, by route */
  onFeedAnswer?: (route: string) => void;
  /** told of every covered latest read that went to a node while the feed is on, by route and why */
  onFeedForward?: (route: string, reason: FeedForwardReason) => void;
}

const VERIFY_OFF: VerifySettings = { mode: 'off', sampleRatio: 0 };

export function readThroughOf(deps: ReadPathDeps): ReadThrough {
  const settings = deps.redisSettings;
  const shared = deps.redis !== undefined && settings !== undefined ? { store: deps.redis, settings } : undefined;
  const tiers = new CacheTiers({
    memory: deps.memory,
    shared: shared === undefined ? undefined : { store: shared.store, maxTtlSeconds: shared.settings.maxTtlSeconds },
    pruneClock: deps.pruneClock,
  });
  const { vendor, nodes, deadlineMs, watermark, logger } = deps;
  const verifier = new AnswerVerifier({
    settings: deps.verify ?? VERIFY_OFF,
    nodes,
    deadlineMs,
    logger,
    onVerify: deps.onVerify,
  });
  const generation = deps.generation ?? new CacheGeneration();
  const pinned = new PinnedReads({
    ...{ vendor, nodes, tiers, generation, deadlineMs, watermark, logger, verifier },
    fills: new FillCoordinator(shared),
  });
  const latest = new LatestReads({
    ...{ vendor, nodes, tiers, generation, watermark, logger, verifier },
    latest: deps.latest,
    onStale: deps.onStale,
    feed: deps.feed,
    onFeedAnswer: deps.onFeedAnswer,
    onFeedForward: deps.onFeedForward,
  });
  const purge = new CachePurge({
    ...{ vendor, nodes, tiers, generation, logger },
    latest: deps.latest,
    shared: deps.redis,
    families: deps.families ?? new Map(),
  });
  return new ReadThrough({ nodes, watermark, pinned, latest, purge });
}
