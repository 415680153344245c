// Where the change feed's pages come from: the pool, asked like a passthrough GET
// for a healthy node of the chain that has the page's first version, at low
// priority. With cache.verify, a page is taken only once a second node sent the
// same bytes for the same versions, as an answer is stored only once a second node
// agreed: the hashes in a page prove that it is whole and consistent, not that its
// node did not make it up, and a page made up to leave out a write would let a
// stale answer through as the latest. Without a second opinion the page is not
// taken, and the feed does not move (it falls behind, and stops, rather than guess).
import type { Logger } from 'pino';
import { NodeError } from '../errors.js';
import type { NodeAnswer } from '../model/node-answer.js';
import { BcsCursor, Undecodable } from '../writes/cursor.js';
import type { FeedSource } from './feed-follower.js';
import type { UpstreamPool } from './pool.js';

/** agreed: taken; disagreed: the second node sent other bytes; unverified: no second node sent the versions. */
export type FeedPageCheck = 'agreed' | 'disagreed' | 'unverified';

export const FEED_PAGE_CHECKS: readonly FeedPageCheck[] = ['agreed', 'disagreed', 'unverified'];

export interface FeedSourceDeps {
  pool: UpstreamPool;
  /** cache.verify: which pages are asked of a second node too */
  verify: { mode: 'off' | 'sample' | 'always'; sampleRatio: number };
  logger: Logger;
  /** told of every check's outcome, for metrics */
  onCheck?: (outcome: FeedPageCheck) => void;
  /** draws the sample: a number in [0, 1) (default Math.random) */
  random?: () => number;
}

export class PoolFeedSource implements FeedSource {
  private readonly random: () => number;
  /** two nodes sent different pages: every page is checked until two agree, whatever the sample draws */
  private suspect = false;

  constructor(private readonly deps: FeedSourceDeps) {
    this.random = deps.random ?? Math.random;
  }

  chainId(): number | undefined {
    return this.deps.pool.chainId();
  }

  async feedPage(start: bigint, limit: number): Promise<NodeAnswer> {
    const first = await this.ask(start, limit);
    const { mode, sampleRatio } = this.deps.verify;
    if (mode === 'off' || (mode === 'sample' && !this.suspect && !(this.random() < sampleRatio))) return first;
    const page = first.status === 200 ? headOf(first.body) : null;
    // An error, an empty page or one that does not read: the follower's to judge, with nothing to take.
    if (page === null || page.count === 0) return first;
    let second: NodeAnswer;
    try {
      second = await this.ask(start, page.count, first.upstream);
    } catch (err) {
      throw this.unverified(start, first, err instanceof NodeError ? err.message : 'no answer');
    }
    const other = second.status === 200 ? headOf(second.body) : null;
    if (other === null || other.count === 0)
      throw this.unverified(start, first, `${second.upstream} answered HTTP ${second.status} without those versions`);
    // A node behind the page's last version vouches for the versions it has: the page is cut to those.
    const items = second.body.subarray(other.at);
    if (other.count <= page.count && items.equals(first.body.subarray(page.at, page.at + items.length))) {
      this.suspect = false;
      this.deps.onCheck?.('agreed');
      return other.count === page.count ? first : second;
    }
    this.suspect = true;
    this.deps.onCheck?.('disagreed');
    this.deps.logger.warn(
      { start: String(start), versions: page.count, first: first.upstream, second: second.upstream },
      'change feed: two nodes sent different pages for the same versions; neither is taken (cache.verify)',
    );
    throw NodeError.unavailable(
      `change feed: ${first.upstream} and ${second.upstream} sent different pages from version ${start}`,
      'node_failed',
    );
  }

  /** The page of up to `limit` versions from `start`, from a node that has `start`, not `exclude`. */
  private ask(start: bigint, limit: number, exclude?: string): Promise<NodeAnswer> {
    return this.deps.pool.forward(
      {
        method: 'GET',
        path: `/v1/transactions?start=${start}&limit=${limit}`,
        headers: { accept: 'application/x-bcs' },
      },
      { idempotent: true, minVersion: start, priority: 'low', exclude },
    );
  }

  private unverified(start: bigint, first: NodeAnswer, why: string): NodeError {
    this.deps.onCheck?.('unverified');
    this.deps.logger.debug(
      { start: String(start), first: first.upstream, why },
      'change feed: no second node sent the page; not taken (cache.verify)',
    );
    return NodeError.unavailable(`change feed: no second node sent the page from version ${start}: ${why}`, 'no_node');
  }
}

/** A page's count of transactions (the ULEB128 it starts with) and where the first begins; null when it does not read. */
function headOf(body: Buffer): { count: number; at: number } | null {
  const c = new BcsCursor(body);
  try {
    return { count: c.length(), at: c.pos };
  } catch (err) {
    if (err instanceof Undecodable) return null;
    throw err;
  }
}
