// What the read path hands to the reply: how a read was served and what to send.
// Every ReadResult is built by readResult(), so each has one shape.
import type { LedgerInfo } from '../ledger/info.js';
import type { StoredAnswer } from './read.js';

export type CacheStatus = 'HIT' | 'MISS' | 'COALESCED' | 'BYPASS' | 'STALE';
export type CacheTier = 'memory' | 'redis';

/** How a reply was served, and what to send. */
export interface ReadResult {
  status: number;
  contentType: string;
  body: Buffer;
  gasUsed?: string;
  /** the next page's cursor, replayed with the entry it came with */
  cursor?: string;
  /** the ledger snapshot for the reply's headers, when one is known */
  ledger: LedgerInfo | null;
  cache: CacheStatus;
  tier?: CacheTier;
  /** the node that answered, for a node call */
  upstream?: string;
  /** the body gzipped, for a client that accepts it (memory-tier entries of 1 KiB and more) */
  gzip?: Buffer;
}

/** What a reply replays of an answer, stored or straight from a node. */
export type Replayed = Pick<StoredAnswer, 'status' | 'contentType' | 'body' | 'gasUsed' | 'cursor' | 'gzip'>;

/**
 * `ledger`: the snapshot for the reply's headers. A cached answer gets the
 * watermark (the freshest known); a node's latest answer or a stale one keeps its
 * own, since it says at which version the data was read.
 */
export function readResult(
  answer: Replayed,
  ledger: LedgerInfo | null,
  cache: CacheStatus,
  tier?: CacheTier,
  upstream?: string,
): ReadResult {
  return {
    status: answer.status,
    contentType: answer.contentType,
    body: answer.body,
    gasUsed: answer.gasUsed,
    cursor: answer.cursor,
    ledger,
    cache,
    tier,
    upstream,
    gzip: answer.gzip,
  };
}
