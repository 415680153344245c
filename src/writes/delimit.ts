// Where a value ends when this reader cannot walk it (a variant it does not know, or a
// layout it has wrong): found by the hashes the ledger recorded, never guessed. A search
// over offsets, bounded per page: a candidate offset must first pass a test of a few bytes
// and then read as the value that follows the end; at most MAX_CANDIDATES of those
// are hashed, and the bytes read and hashed are bounded too, so a page of many
// transactions the reader cannot walk costs a bounded time, then fails closed.
import { BcsCursor, Undecodable } from './cursor.js';
import { hashAt, transactionHasher, writeSetHash } from './hashes.js';
import { peekTransactionInfo, readTransactionInfo } from './info.js';
import { emptyWriteSetEnd, skipWriteSet } from './write-set.js';

/** Candidate ends hashed at most, per page: each costs a hash copy (microseconds). */
export const MAX_CANDIDATES = 32768;
/** Bytes the searches of one page read and hash at most. */
const MAX_WORK_BYTES = 64 * 1024 * 1024;
/**
 * A run this long of one byte value is in a SHA3-256 digest with odds below 2^-80, so
 * no real transaction_hash has one and no sender can grind for one; the bytes of BCS
 * values (zero padding, short addresses, small integers) hold such runs all the time.
 */
const RUN_NO_DIGEST_HOLDS = 12;

/**
 * The end of the Transaction whose bytes start at `start`: the one offset at which a
 * TransactionInfo reads whose transaction_hash is the hash of bytes[start, offset).
 * The whole rest of the page is searched: the transaction's sender chooses its bytes
 * (an argument can hold a TransactionInfo of the bytes before it, and after it events
 * and a write set of its own making whose hashes verify), so an end is claimed only
 * when no other offset verifies too. -1 when there is none, more than one, or the
 * search reached its bound.
 */
export function transactionEndByHash(bytes: Uint8Array, start: number, search = new SearchBudget()): number {
  const infos = search.transactionInfos(bytes, start + 1);
  if (infos === undefined) return -1;
  const hasher = transactionHasher();
  let hashed = start;
  let found = -1;
  for (let i = infos.firstFrom(start + 1); i < infos.at.length; i++) {
    const at = infos.at[i]!;
    if (!search.candidate() || !search.spend(at - hashed)) return -1;
    // The hash of the bytes before `at`, fed once: a copy of the hash is read at each candidate.
    hasher.update(bytes.subarray(hashed, at));
    hashed = at;
    if (!hashAt(hasher.copy().digest(), bytes, infos.transactionHashAt[i]!)) continue;
    if (found >= 0) return -1;
    found = at;
  }
  return found;
}

/** Offsets of a page from `from` on, ascending, found once for all its searches. */
abstract class PageOffsets {
  readonly at: number[] = [];

  constructor(
    readonly bytes: Uint8Array,
    readonly from: number,
  ) {}

  /** Reads the page for them; false when the search's bounds were reached first. */
  abstract find(search: SearchBudget): boolean;

  /** The index of the first offset at or after `from`. */
  firstFrom(from: number): number {
    let low = 0;
    let high = this.at.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.at[mid]! < from) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * The offsets of a page, from `from` on, at which a TransactionInfo reads whose
 * transaction_hash holds no run, with where that hash is. What reads at an offset does
 * not depend on where a search began, so every search of a page shares one list.
 */
class TransactionInfos extends PageOffsets {
  readonly transactionHashAt: number[] = [];

  find(search: SearchBudget): boolean {
    const bytes = this.bytes;
    // A TransactionInfo is at least 10 bytes: its variant, 8 of gas, its status variant.
    for (let at = this.from; at + 10 <= bytes.length; at++) {
      // Most offsets are ruled out by a few bytes, before a read that fails: such reads were most of a search's cost.
      const peeked = peekTransactionInfo(bytes, at);
      if (peeked === null || (peeked >= 0 && hasRun(bytes, peeked))) continue;
      const transactionHashAt = search.read(bytes, at, readTransactionInfo);
      if (transactionHashAt === undefined) return false;
      if (transactionHashAt === null || hasRun(bytes, transactionHashAt)) continue;
      this.at.push(at);
      this.transactionHashAt.push(transactionHashAt);
    }
    return true;
  }
}

/**
 * The end of the events that start at `start`: the one offset of an accumulator root
 * hash after which a WriteSet reads whose hash is the state_change_hash at
 * bytes[stateChangeHashAt], and after which comes the version `next` (or, for the
 * page's last transaction, nothing). The whole rest of the page is searched: event
 * data is the sender's to choose, and can hold a copy of the real write set followed
 * by a forged tail of transactions that hides the real ones, so an end is claimed only
 * when no other offset verifies too. -1 when there is none, more than one, or the
 * search reached its bound.
 */
export function eventsEndByWriteSet(
  bytes: Uint8Array,
  start: number,
  stateChangeHashAt: number,
  next: bigint | null,
  search = new SearchBudget(),
): number {
  const ends = search.writeSetEnds(bytes, start);
  if (ends === undefined) return -1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // `next` as two u32 halves: compared at every write set's end, with no BigInt made for it.
  const low = next === null ? 0 : Number(next & 0xffff_ffffn);
  const high = next === null ? 0 : Number(next >> 32n);
  const followed = (end: number): boolean =>
    next === null
      ? end === bytes.length
      : end + 8 <= bytes.length && view.getUint32(end, true) === low && view.getUint32(end + 4, true) === high;
  let found = -1;
  for (let i = ends.firstFrom(start); i < ends.at.length; i++) {
    const at = ends.at[i]!;
    const writeSetEnd = ends.end[i]!;
    if (!followed(writeSetEnd)) continue;
    if (!search.candidate() || !search.spend(writeSetEnd - at - 32)) return -1;
    if (!hashAt(writeSetHash(bytes, at + 32, writeSetEnd), bytes, stateChangeHashAt)) continue;
    if (found >= 0) return -1;
    found = at;
  }
  return found;
}

/**
 * The offsets of a page, from `from` on, at which an accumulator root hash can end a
 * transaction's events: a WriteSet reads after it, and after that comes a version of the
 * page's, or the page's end. What reads at an offset does not depend on where a search
 * began, so every search of a page shares one list.
 */
class WriteSetEnds extends PageOffsets {
  /** where the WriteSet after each offset's root hash ends */
  readonly end: number[] = [];
  private readonly view: DataView;

  constructor(
    bytes: Uint8Array,
    from: number,
    private readonly versions: PageVersions | undefined,
  ) {
    super(bytes, from);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  find(search: SearchBudget): boolean {
    const bytes = this.bytes;
    // A root hash (32 bytes), then a WriteSet, which starts with its variant, 0 (V0).
    for (let at = this.from; at + 34 <= bytes.length; at++) {
      if (bytes[at + 32] !== 0) continue;
      const empty = emptyWriteSetEnd(bytes, at + 32);
      const end =
        empty >= 0
          ? empty
          : search.read(bytes, at + 32, (c) => {
              skipWriteSet(c);
              return c.pos;
            });
      if (end === undefined) return false;
      if (end === null || !this.followedInPage(end)) continue;
      this.at.push(at);
      this.end.push(end);
    }
    return true;
  }

  /** Whether the page ends at `end`, or a version of the page's is there (any u64, without the page's versions). */
  private followedInPage(end: number): boolean {
    const bytes = this.bytes;
    if (end === bytes.length) return true;
    if (end + 8 > bytes.length) return false;
    const versions = this.versions;
    if (versions === undefined) return true;
    // The high half first: most offsets are ruled out without a BigInt made.
    const high = this.view.getUint32(end + 4, true);
    if (high !== versions.firstHigh && high !== versions.lastHigh) return false;
    const version = this.view.getBigUint64(end, true);
    return version >= versions.first && version <= versions.last;
  }
}

/** A page's versions, and the high halves of its first and last as u32s. */
interface PageVersions {
  first: bigint;
  last: bigint;
  firstHigh: number;
  lastHigh: number;
}

/** Whether the 32 bytes at `at` hold a run of one value no digest holds. */
function hasRun(bytes: Uint8Array, at: number): boolean {
  let run = 1;
  for (let i = at + 1; i < at + 32; i++) {
    run = bytes[i] === bytes[i - 1] ? run + 1 : 1;
    if (run >= RUN_NO_DIGEST_HOLDS) return true;
  }
  return false;
}

/**
 * The candidates hashed and the bytes read by the searches of one page, against their
 * bounds, and the TransactionInfos the page holds, which every search reads alike.
 */
export class SearchBudget {
  private candidates = 0;
  private work = 0;
  private infos: TransactionInfos | undefined;
  private ends: WriteSetEnds | undefined;
  private readonly versions: PageVersions | undefined;

  /** `versions`: the first and last of the page's (none: a write set's end may be followed by any u64) */
  constructor(versions?: { first: bigint; last: bigint }) {
    if (versions === undefined) return;
    const { first, last } = versions;
    this.versions = { first, last, firstHigh: Number(first >> 32n), lastHigh: Number(last >> 32n) };
  }

  /** The page's TransactionInfos from `from` on, found once per page; undefined past the bounds. */
  transactionInfos(bytes: Uint8Array, from: number): TransactionInfos | undefined {
    this.infos = this.found(this.infos, bytes, from, () => new TransactionInfos(bytes, from));
    return this.infos;
  }

  /** Candidates hashed so far. */
  get hashed(): number {
    return this.candidates;
  }

  /** The page's possible ends of events from `from` on, found once per page; undefined past the bounds. */
  writeSetEnds(bytes: Uint8Array, from: number): WriteSetEnds | undefined {
    this.ends = this.found(this.ends, bytes, from, () => new WriteSetEnds(bytes, from, this.versions));
    return this.ends;
  }

  /** `held` when it covers `from` of these bytes, else `make()`'s offsets once found; undefined past the bounds. */
  private found<T extends PageOffsets>(
    held: T | undefined,
    bytes: Uint8Array,
    from: number,
    make: () => T,
  ): T | undefined {
    if (held !== undefined && held.bytes === bytes && held.from <= from) return held;
    const offsets = make();
    return offsets.find(this) ? offsets : undefined;
  }

  /** Whether one more candidate may be hashed. */
  candidate(): boolean {
    return ++this.candidates <= MAX_CANDIDATES;
  }

  /** Whether `n` more bytes may be read or hashed. */
  spend(n: number): boolean {
    this.work += n;
    return this.work <= MAX_WORK_BYTES;
  }

  /** What `read` makes of bytes[at…]; null when they are not what it reads; undefined past the bounds. */
  read<T>(bytes: Uint8Array, at: number, read: (c: BcsCursor) => T): T | null | undefined {
    const c = new BcsCursor(bytes, at);
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
