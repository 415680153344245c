// The transaction feed's fault modes: pages a follower must not take. Kept apart from
// faults.ts so the page handler names them without importing the injector.
import type { SimUnknownVariant } from './transaction.js';

/**
 * Pages of the BCS transaction feed (route `feed`; no other request is faulted or
 * counted against `count`) that a follower must not take, at the versions in `range`
 * (without one: the page's first version):
 * feedTransactionHash, feedStateChangeHash: that hash wrong in the transaction's info;
 * feedUnknownVariant: a variant no decoder knows, where `variant` says (authenticator and
 * event: delimitable by hash; transaction_info and write_op: not);
 * feedGap: a page that leaves out a version (`gap: 'skip'`, the default: the first in
 * range, else the page's second) or starts one after its start (`gap: 'shift'`);
 * feedPruned: the node has pruned the start (a start in range): 410 version_pruned, or
 * `status: 500` internal_error as older nodes answer;
 * feedLag: the page and headers of a node `versions` (default 10) behind (a start in range);
 * feedForged: a page that verifies and lies, as only its node can tell: the versions in range
 * wrote nothing (their write sets empty, each state_change_hash made to match).
 */
export type SimFeedMode =
  | 'feedTransactionHash'
  | 'feedStateChangeHash'
  | 'feedUnknownVariant'
  | 'feedGap'
  | 'feedPruned'
  | 'feedLag'
  | 'feedForged';

export const SIM_FEED_MODES: readonly SimFeedMode[] = [
  'feedTransactionHash',
  'feedStateChangeHash',
  'feedUnknownVariant',
  'feedGap',
  'feedPruned',
  'feedLag',
  'feedForged',
];

export const isFeedMode = (mode: string): mode is SimFeedMode => (SIM_FEED_MODES as readonly string[]).includes(mode);

/** What a feed fault says: its mode and where it applies (SimFault carries the same fields). */
export interface SimFeedFault {
  mode: SimFeedMode;
  /** feedLag: how far the node is behind (and the header modes' offset) */
  versions?: bigint;
  /** the versions faulted (inclusive); absent: each faulted page's first version */
  range?: { from: bigint; to: bigint };
  /** feedUnknownVariant: where the unknown variant is (default authenticator) */
  variant?: SimUnknownVariant;
  /** feedGap: skip a version (default) or shift the page's start */
  gap?: 'skip' | 'shift';
  /** feedPruned: 410 (default, newer nodes) or 500 (older nodes) */
  status?: 410 | 500;
}
