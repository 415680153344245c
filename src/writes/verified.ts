// What a page of the ledger's transactions decodes to: each transaction verified by its
// hashes, or why the page is not, with the transactions before that point.
import type { StateKeyWrite } from './state-key.js';

/** One transaction of a page, decoded and verified (transaction_hash and state_change_hash). */
export interface VerifiedTransaction {
  version: bigint;
  /** every StateKey the version wrote, in its write set's order */
  writes: StateKeyWrite[];
  /**
   * true when its end, or its events' end, was found by hash (SPEC-feed rule 7): it
   * holds a variant this reader does not know, a sign the ledger has a new kind of
   * transaction, authenticator or event that a newer reader walks
   */
  delimited?: true;
}

/**
 * Why a page was not decoded and verified whole, for metrics, logs and tests:
 * - 'truncated': the bytes end inside a value (a page cut short, or a length that is not its own);
 * - 'undecodable': bytes that are no value of their type (a length not in its shortest form, a bool of 2…);
 * - 'unknown_variant': an enum variant this reader does not know where the page's end cannot be found by hash
 *   (in a transaction, in its events), or one in a TransactionInfo or a write set, which nothing else can vouch for;
 * - 'transaction_hash': no end of the transaction whose bytes hash to info.transaction_hash;
 * - 'state_change_hash': the write set's bytes do not hash to info.state_change_hash;
 * - 'not_contiguous': a version other than the next one (start, start + 1, …);
 * - 'trailing_bytes': bytes after the last transaction the page counts.
 */
export type FeedPageReason =
  | 'truncated'
  | 'undecodable'
  | 'unknown_variant'
  | 'transaction_hash'
  | 'state_change_hash'
  | 'not_contiguous'
  | 'trailing_bytes';

/** A page that is not decoded and verified whole. Its message is for logs; branch on `reason`. */
export class FeedPageError extends Error {
  constructor(
    readonly reason: FeedPageReason,
    /** the version where it happened: the one the page should have had next at that point */
    readonly version: bigint,
    /**
     * The page's transactions before `version`, each verified by its own hashes
     * (versions start … version - 1): the follower may keep them. The page as a whole is not.
     */
    readonly verifiedPrefix: readonly VerifiedTransaction[],
    /** the byte offset in the page where it was found */
    readonly offset: number,
  ) {
    super(`transaction page not verified: ${reason} at version ${version} (byte ${offset})`);
    this.name = 'FeedPageError';
  }
}
