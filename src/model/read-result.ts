// What the read path hands to the reply: how a read was served and what to send.
// Every ReadResult is built by readResult(), so each has one shape.
import type { LedgerInfo } from '../ledger/info.js';
import type { ReplayedAnswer } from './read.js';

export type CacheStatus = 'HIT' | 'MISS' | 'COALESCED' | 'BYPASS' | 'STALE';
export type CacheTier = 'memory' | 'redis';

/** How a reply was served. */
export interface Served {
  /**
   * The snapshot for the reply's headers, when one is known. A cached answer gets
   * the watermark (the freshest known); a node's latest answer or a stale one
   * keeps its own, since it says at which version the data was read.
   */
  ledger: LedgerInfo | null;
  cache: CacheStatus;
  /** the tier a hit came from */
  tier?: CacheTier;
  /** the node that answered, for a node call */
  upstream?: string;
}

/** How a reply was served, and what to send. */
export interface ReadResult extends ReplayedAnswer, Served {
  /** the body gzipped, for a client that accepts it (memory-tier entries of 1 KiB and more) */
  gzip?: Buffer;
}

/** The answer a reply replays, stored (then perhaps with its gzip copy) or straight from a node. */
export type Replayed = ReplayedAnswer & { readonly gzip?: Buffer };

export function readResult(answer: Replayed, served: Served): ReadResult {
  return {
    status: answer.status,
    contentType: answer.contentType,
    body: answer.body,
    gasUsed: answer.gasUsed,
    cursor: answer.cursor,
    ledger: served.ledger,
    cache: served.cache,
    tier: served.tier,
    upstream: served.upstream,
    gzip: answer.gzip,
  };
}
