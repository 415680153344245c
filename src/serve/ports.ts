// What the read path needs of the nodes and of the shared tier: the upstream pool
// and the Redis store implement these, and serve/ knows them only by these.
import type { Announcement, AnswerStore, FillLock, FillOutcome, PurgeListener } from '../cache/store.js';
import type { FeedVerdict } from '../model/feed-verdict.js';
import type { NodeAnswer } from '../model/node-answer.js';
import type { ReadContext } from '../model/read-context.js';
import type { ReadRequest, ReplayedAnswer, StoredAnswer } from '../model/read.js';

/** The change feed, as the latest read path asks it (freshness/judge.ts implements it). */
export interface LatestFeed {
  /** latest.changeFeed.enabled: latest answers are kept for the feed only while it is on */
  readonly enabled: boolean;
  /** Can it judge any answer at `latest` now? When not, nothing is looked up for it. */
  covers(latest: bigint): boolean;
  /** Is `answer`, stored for `req` at its version, what a node answers at `latest`, and if not, why? */
  verdict(req: ReadRequest, answer: StoredAnswer, latest: bigint): FeedVerdict;
  /** The verdict as far as the feed has verified: 'unchanged' when `answer` may still be judged unchanged once it covers more. */
  verdictSoFar(req: ReadRequest, answer: StoredAnswer): FeedVerdict;
  /** Why the feed does not cover the newest version now. */
  uncovered(): 'stopped' | 'behind';
  /** The bytes a node answers at `latest` for an answer judged unchanged there. */
  answerAt(answer: StoredAnswer, latest: bigint): ReplayedAnswer;
  /** Settles once the feed covers `latest` (or gives up); undefined when a read should not wait for it. */
  whenCovers(latest: bigint): Promise<void> | undefined;
}

/** The upstream side the read path needs (UpstreamPool implements it). */
export interface NodeReader {
  /** `deadlineAt` (epoch ms, default routing.deadlineMs from now) bounds the whole read, retries included; `context` is whom it is for */
  read(req: ReadRequest, call?: { deadlineAt?: number; context?: ReadContext }): Promise<NodeAnswer>;
  /**
   * The same read from a node other than `other.exclude` that covers version
   * `other.covering` (cache.verify's second node); null when there is none to ask.
   */
  readFromAnother(
    req: ReadRequest,
    other: { exclude: string; covering: bigint },
    deadlineAt: number,
    context?: ReadContext,
  ): Promise<NodeAnswer | null>;
  isPruned(version: bigint): boolean;
  /** a block height below the oldest block of every node that could serve it */
  isBlockPruned(height: bigint): boolean;
  /** The chain the nodes are on; undefined while not known (then nothing is served or cached). */
  chainId(): number | undefined;
  /** why chainId() is undefined, for the not-ready reply (no URLs, no keys) */
  notReadyReason?(): string;
}

/**
 * Redis, as the read path uses it: a store plus a short lock for cross-instance
 * fills, and the filler's word to those waiting for it.
 */
export interface SharedStore extends AnswerStore {
  /** false while disconnected or just after a failed command of the node serving key (of any node, without a key): then it is skipped */
  isHealthy(key?: string): boolean;
  tryLock(key: string, ttlMs: number): Promise<FillLock | 'held' | 'failed'>;
  /** tells the waiters of key the fill's outcome */
  publishFill(key: string, outcome: FillOutcome): Promise<void>;
  /** the outcome of another holder's fill of key; undefined when none came in time */
  awaitFill(key: string, timeoutMs: number): Promise<FillOutcome | undefined>;
}

/** What a purge did in Redis: the generation after it, its number among the purges of that Redis, and the entries deleted. */
export type SharedPurged = Announcement & { deleted: number };

/** Redis, as a purge uses it: each call tells every other process sharing it, and rejects when Redis fails. */
export interface SharedPurge {
  /** moves every process to a new cache generation */
  purgeAll(): Promise<SharedPurged>;
  /** deletes a family's entries with versions in [from, to] (to null: no bound) */
  purgeRange(family: string, from: bigint, to: bigint | null): Promise<SharedPurged>;
  /** deletes the entry of one key text */
  purgeKey(text: string): Promise<SharedPurged>;
  /** told of other processes' purges, and of purges missed while Redis was away */
  onPurge(listener: PurgeListener): void;
}
