// GET /v1/transactions?start=S&limit=N with Accept: application/x-bcs answers
// bcs(Vec<TransactionOnChainData>) (aptos-core api/src/transactions.rs, list;
// api/types/src/transaction.rs): each { version: u64, transaction, info, events,
// accumulator_root_hash, changes: WriteSet }. A page is claimed only whole: every
// transaction's bytes hash to its info.transaction_hash, every write set's to its
// info.state_change_hash, the versions run start, start + 1, …, and nothing follows.
// Walking a value is the fast path; the hashes decide. Where the walk fails (a variant
// this reader does not know) or disagrees with a hash, the end is searched for by hash.
import { BcsCursor, Undecodable, type UndecodableKind } from './cursor.js';
import { eventsEndByWriteSet, SearchBudget, transactionEndByHash } from './delimit.js';
import { skipEvents } from './events.js';
import { hashAt, transactionHash, writeSetHash } from './hashes.js';
import { readTransactionInfo, STATE_CHANGE_HASH_AFTER } from './info.js';
import type { StateKeyWrite } from './state-key.js';
import { skipTransaction } from './transaction.js';
import { FeedPageError, type FeedPageReason, type VerifiedTransaction } from './verified.js';
import { readWriteSet } from './write-set.js';

const REASON: Record<UndecodableKind, FeedPageReason> = {
  truncated: 'truncated',
  malformed: 'undecodable',
  unknown_variant: 'unknown_variant',
};

/** Why bytes did not read, as a page's reason; anything but an Undecodable is a fault of this code, thrown on. */
function reasonOf(err: unknown): FeedPageReason {
  if (err instanceof Undecodable) return REASON[err.kind];
  throw err;
}

/**
 * bcs(Vec<TransactionOnChainData>) → the page's transactions, every one verified, versions
 * start, start + 1, … contiguous. Throws FeedPageError (its reason, the version where it
 * happened, and the transactions verified before it) on anything else.
 */
export function decodeTransactionPage(body: Uint8Array, start: bigint): VerifiedTransaction[] {
  const c = new BcsCursor(body);
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const verified: VerifiedTransaction[] = [];
  const fail = (reason: FeedPageReason, at = c.pos): FeedPageError =>
    new FeedPageError(reason, start + BigInt(verified.length), verified, at);
  let count: number;
  try {
    count = c.length();
  } catch (err) {
    throw fail(reasonOf(err));
  }
  const search = new SearchBudget({ first: start, last: start + BigInt(count) - 1n });
  for (let i = 0; i < count; i++) {
    const version = start + BigInt(i);
    if (c.left < 8) throw fail('truncated');
    if (view.getBigUint64(c.pos, true) !== version) throw fail('not_contiguous');
    c.pos += 8;
    const searched = search.hashed;
    const transactionHashAt = readTransaction(c, search, fail);
    const next = i + 1 < count ? version + 1n : null;
    const writes = readChanges(c, transactionHashAt + STATE_CHANGE_HASH_AFTER, next, search, fail);
    // Only a search by hash hashes candidates: the walk never does.
    verified.push(search.hashed === searched ? { version, writes } : { version, writes, delimited: true });
  }
  if (c.left > 0) throw fail('trailing_bytes');
  return verified;
}

type Fail = (reason: FeedPageReason, at?: number) => FeedPageError;

/** Moves past the transaction and its info, its hash verified; the offset of info.transaction_hash. */
function readTransaction(c: BcsCursor, search: SearchBudget, fail: Fail): number {
  const bytes = c.bytes;
  const start = c.pos;
  let failure: FeedPageReason;
  try {
    skipTransaction(c);
    const end = c.pos;
    const transactionHashAt = readTransactionInfo(c);
    if (hashAt(transactionHash(bytes, start, end), bytes, transactionHashAt)) return transactionHashAt;
    failure = 'transaction_hash';
  } catch (err) {
    failure = reasonOf(err);
  }
  // Not walked, or walked to an end its hash disowns: the end whose bytes hash to the info's transaction_hash.
  const infoAt = transactionEndByHash(bytes, start, search);
  if (infoAt < 0) throw fail(failure, start);
  c.pos = infoAt;
  return readTransactionInfo(c);
}

/**
 * Moves past the events, the accumulator root and the write set, its hash verified; the
 * keys it writes. `next`: the version that follows in the page, if one does.
 */
function readChanges(
  c: BcsCursor,
  stateChangeHashAt: number,
  next: bigint | null,
  search: SearchBudget,
  fail: Fail,
): StateKeyWrite[] {
  const bytes = c.bytes;
  const eventsAt = c.pos;
  let failure: FeedPageReason;
  try {
    skipEvents(c);
    c.skip(32);
    const start = c.pos;
    const writes = readWriteSet(c);
    if (hashAt(writeSetHash(bytes, start, c.pos), bytes, stateChangeHashAt)) return writes;
    failure = 'state_change_hash';
  } catch (err) {
    failure = reasonOf(err);
  }
  // Events not walked, or a write set its hash disowns: the write set after them whose bytes hash to state_change_hash.
  const rootAt = eventsEndByWriteSet(bytes, eventsAt, stateChangeHashAt, next, search);
  if (rootAt < 0) throw fail(failure, eventsAt);
  c.pos = rootAt + 32;
  return readWriteSet(c);
}
