// The interface every cache tier implements, so serve/ reads through tiers without
// knowing which is which, and one contract suite (test/contract) checks them all;
// and what a purge tells the processes sharing a tier, so serve/ hears purges
// without knowing Redis.
import type { StoredAnswer } from '../model/read.js';

/** Synchronous where a tier can be (the memory hit path must not add an async hop). */
type MaybePromise<T> = T | Promise<T>;

export interface AnswerStore {
  readonly tier: 'memory' | 'redis';
  /** The stored answer, or undefined on a miss (and, for remote tiers, on any failure). */
  get(key: string): MaybePromise<StoredAnswer | undefined>;
  /**
   * Store an answer. ttlSeconds undefined = no expiry. Each tier documents how it
   * treats ttlSeconds; a tier may drop an entry earlier (eviction) but never serves
   * one it was not given. `family`: the answer's route family, for a tier that
   * indexes its entries for purges (Redis); others ignore it.
   */
  set(key: string, answer: StoredAnswer, ttlSeconds?: number, family?: string): MaybePromise<void>;
  delete(key: string): MaybePromise<void>;
  close(): Promise<void>;
}

/** A fill lock one holder took (cross-instance single-flight of one pinned miss). */
export interface FillLock {
  /** deletes the lock, unless it expired and was taken again since */
  release(): Promise<void>;
}

/**
 * What a filler tells the instances waiting for its fill (api.md §8): the answer it
 * got, and whether it was stored (cacheable) or is a one-off to relay as is.
 * 'gave-up': the filler has no answer to share (none came, or it said only that
 * the node had not reached the item yet); a waiter then asks a node itself.
 */
export type FillOutcome = { answer: StoredAnswer; stored: boolean } | 'gave-up';

/** What a purge announces to the other processes, and what a resync tells this one ('missed': clear everything). */
export type PurgeNotice =
  | { scope: 'all'; generation: number }
  | { scope: 'family'; family: string; fromVersion: string; toVersion: string | null }
  | { scope: 'key'; key: string }
  | { scope: 'missed' };

/** Told of a purge: `announced` is its number among the purges of the shared tier (none for 'missed'). */
export type PurgeListener = (notice: PurgeNotice, announced?: number) => void;

/** What a purge announced: the generation after it, and its number among the purges of the shared tier. */
export interface Announcement {
  generation: number;
  announced: number;
  /**
   * A range purge of a family that had many already: its record spans theirs
   * and its own versions (redis/purge-records.ts), and every entry of the family in
   * that span written before it is read afresh.
   */
  widened?: { fromVersion: string; toVersion: string | null };
}
