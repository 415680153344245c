// The change feed as buildApp wires it (latest.changeFeed): the write index, the
// judge the latest read path asks, and the follower that pages the transaction
// feed from the pool into the index. Built always, followed only while enabled,
// so a reload can turn it on and off.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { FeedJudge } from '../freshness/judge.js';
import { WriteIndex, type WriteIndexSettings } from '../freshness/write-index.js';
import type { Watermark } from '../ledger/watermark.js';
import type { Metrics } from '../metrics/metrics.js';
import type { FeedState } from '../metrics/feed.js';
import { FeedFollower, type FeedFollowerSettings, type FeedSink } from '../upstream/feed-follower.js';
import { PoolFeedSource } from '../upstream/feed-source.js';
import type { UpstreamPool } from '../upstream/pool.js';
import { decodeTransactionPage } from '../writes/page.js';
import type { VerifiedTransaction } from '../writes/verified.js';

/** Ids the window holds at most, whatever its versions wrote: about 100 bytes each. */
const MAX_WINDOW_WRITES = 500_000;

export interface ChangeFeed {
  judge: FeedJudge;
  /** what the metrics read at scrape time */
  state(): FeedState;
  /** latest.changeFeed of a (re)loaded config: follows or stops, with its settings */
  apply(config: Config): Promise<void>;
  close(): Promise<void>;
}

export function buildChangeFeed(
  config: Config,
  deps: { pool: UpstreamPool; watermark: Watermark; logger: Logger; metrics: Metrics },
): ChangeFeed {
  const { pool, watermark, metrics } = deps;
  const logger = deps.logger.child({ component: 'change-feed' });
  const index = new WriteIndex(indexSettings(config));
  const judge = new FeedJudge(index, () => follower.paging);
  // The judge hears of every change in what the index covers: reads waiting for a version go on.
  const sink: FeedSink<VerifiedTransaction> = {
    restart: (start) => {
      index.restart(start);
      judge.coverageChanged();
    },
    stop: () => {
      index.stop();
      judge.coverageChanged();
    },
    apply: (versions) => {
      index.apply(versions);
      judge.coverageChanged();
    },
  };
  const follower = new FeedFollower({
    source: new PoolFeedSource({
      pool,
      verify: config.cache.verify,
      logger,
      onCheck: (outcome) => metrics.feed.checked(outcome),
    }),
    decode: decodeTransactionPage,
    sink,
    watermark,
    logger,
    settings: followerSettings(config),
    onPage: (versions, bytes) =>
      metrics.feed.page(versions.length, bytes, versions.filter((v) => v.delimited === true).length),
    onStop: (reason) => metrics.feed.stop(reason),
  });
  const apply = async (next: Config): Promise<void> => {
    follower.configure(followerSettings(next));
    judge.enabled = next.latest.changeFeed.enabled;
    judge.waitMs = next.latest.changeFeed.waitMs;
    // New bounds for the index: it starts afresh, and the feed with it.
    const bounds = indexSettings(next);
    if (bounds.windowVersions !== index.settings.windowVersions || bounds.maxWatched !== index.settings.maxWatched) {
      await follower.stop();
      index.reconfigure(bounds);
    }
    if (judge.enabled) follower.start();
    else await follower.stop();
  };
  void apply(config);
  return {
    judge,
    state: () => ({
      enabled: judge.enabled,
      covered: index.covered,
      latest: watermark.current()?.ledgerVersion ?? null,
      index: index.size,
    }),
    apply,
    close: () => follower.stop(),
  };
}

function indexSettings(config: Config): WriteIndexSettings {
  const { windowVersions, maxWatchedKeys } = config.latest.changeFeed;
  return { windowVersions, maxWindowWrites: MAX_WINDOW_WRITES, maxWatched: maxWatchedKeys };
}

function followerSettings(config: Config): FeedFollowerSettings {
  const { pageSize, intervalMs, maxLagVersions } = config.latest.changeFeed;
  return { pageSize, intervalMs, maxLagVersions, retryMs: config.routing.probeIntervalMs };
}
