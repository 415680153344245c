// Where a value ends when this reader cannot walk it (a variant it does not know, or a
// layout it has wrong): found by the hashes the ledger recorded, never guessed. A search
// over offsets, bounded: a candidate offset must first pass a test of a byte or two; at
// most MAX_CANDIDATES are read, and the bytes read and hashed are bounded too.
import { BcsCursor, Undecodable } from './cursor.js';
import { hashAt, transactionHasher, writeSetHash } from './hashes.js';
import { readTransactionInfo } from './info.js';
import { readWriteSet } from './write-set.js';

/** Candidate offsets read at most, per search. */
export const MAX_CANDIDATES = 4096;
/** Bytes the candidates of one search read and hash at most (the hash of the bytes before them is one pass). */
const MAX_WORK_BYTES = 32 * 1024 * 1024;

/**
 * The end of the Transaction whose bytes start at `start`: the one offset at which a
 * TransactionInfo reads whose transaction_hash is the hash of bytes[start, offset).
 * The whole rest of the page is searched: the transaction's sender chooses its bytes
 * (an argument can hold a TransactionInfo of the bytes before it, and after it events
 * and a write set of its own making whose hashes verify), so an end is claimed only
 * when no other offset verifies too. -1 when there is none, more than one, or the
 * search reached its bound.
 */
export function transactionEndByHash(bytes: Uint8Array, start: number): number {
  const search = new Search(bytes);
  const hasher = transactionHasher();
  let hashed = start;
  let found = -1;
  // A TransactionInfo starts with its variant (0 or 1), 8 bytes of gas, then the ExecutionStatus variant (0 to 4).
  for (let at = start + 1; at + 10 <= bytes.length; at++) {
    if (bytes[at]! > 1 || bytes[at + 9]! > 4) continue;
    const transactionHashAt = search.read(at, readTransactionInfo);
    if (transactionHashAt === undefined) return -1;
    if (transactionHashAt === null) continue;
    // The hash of the bytes before `at`, fed once: a copy of the hash is read at each candidate.
    hasher.update(bytes.subarray(hashed, at));
    hashed = at;
    if (!hashAt(hasher.copy().digest(), bytes, transactionHashAt)) continue;
    if (found >= 0) return -1;
    found = at;
  }
  return found;
}

/**
 * The end of the events that start at `start`: the offset of the accumulator root hash,
 * the first offset after which 32 bytes and then a WriteSet read whose hash is the
 * state_change_hash at bytes[stateChangeHashAt], and after which comes the version
 * `next` (or, for the page's last transaction, nothing). -1 when there is none (or the
 * search reached its bound).
 */
export function eventsEndByWriteSet(
  bytes: Uint8Array,
  start: number,
  stateChangeHashAt: number,
  next: bigint | null,
): number {
  const search = new Search(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const followed = (end: number): boolean =>
    next === null ? end === bytes.length : end + 8 <= bytes.length && view.getBigUint64(end, true) === next;
  // A WriteSet starts with its variant, 0 (V0).
  for (let at = start; at + 34 <= bytes.length; at++) {
    if (bytes[at + 32] !== 0) continue;
    const writeSetEnd = search.read(at + 32, (c) => {
      readWriteSet(c);
      return c.pos;
    });
    if (writeSetEnd === undefined) return -1;
    if (writeSetEnd === null || !followed(writeSetEnd)) continue;
    if (!search.spend(writeSetEnd - at - 32)) return -1;
    if (hashAt(writeSetHash(bytes, at + 32, writeSetEnd), bytes, stateChangeHashAt)) return at;
  }
  return -1;
}

/** One search's candidates and the bytes it has read, against its bounds. */
class Search {
  private candidates = 0;
  private work = 0;

  constructor(private readonly bytes: Uint8Array) {}

  /** Whether `n` more bytes may be read or hashed. */
  spend(n: number): boolean {
    this.work += n;
    return this.work <= MAX_WORK_BYTES;
  }

  /** What `read` makes of the bytes at `at`; null when they are not what it reads; undefined past the bounds. */
  read<T>(at: number, read: (c: BcsCursor) => T): T | null | undefined {
    if (++this.candidates > MAX_CANDIDATES) return undefined;
    const c = new BcsCursor(this.bytes, at);
    let value: T | null;
    try {
      value = read(c);
    } catch (err) {
      if (!(err instanceof Undecodable)) throw err;
      value = null;
    }
    return this.spend(c.pos - at) ? value : undefined;
  }
}
