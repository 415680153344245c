// A reader of the BCS transaction feed (bcs(Vec<TransactionOnChainData>)) for the
// tests of the simulated node: the variants the sim writes, from aptos-core's
// types, written apart from the sim's encoder and the product's decoder so that
// neither checks itself. An unknown variant throws FeedReadError with its version.
import { createHash } from 'node:crypto';

export class FeedReadError extends Error {
  constructor(
    readonly reason: 'unknown_variant' | 'truncated' | 'trailing_bytes',
    readonly version: bigint | null,
    message: string,
  ) {
    super(message);
  }
}

interface FeedWrite {
  stateKey: Buffer;
  op: 'creation' | 'modification' | 'deletion';
  /** the value written; null for a deletion */
  value: Buffer | null;
  withMetadata: boolean;
}

export interface FeedTransaction {
  version: bigint;
  kind: 'user' | 'block_metadata_ext' | 'block_epilogue';
  /** the Transaction's BCS bytes, what transaction_hash hashes */
  transaction: Buffer;
  transactionHash: Buffer;
  stateChangeHash: Buffer;
  eventRootHash: Buffer;
  gasUsed: bigint;
  events: number;
  /** the WriteSet's BCS bytes, what state_change_hash hashes */
  writeSet: Buffer;
  writes: FeedWrite[];
}

/** SHA3-256(SHA3-256("APTOS::" + type) ‖ bytes). */
export function aptosHash(type: string, bytes: Uint8Array): Buffer {
  const salt = createHash('sha3-256').update(`APTOS::${type}`).digest();
  return createHash('sha3-256').update(salt).update(bytes).digest();
}

class Reader {
  at = 0;
  version: bigint | null = null;
  constructor(readonly bytes: Buffer) {}

  take(n: number): Buffer {
    if (this.at + n > this.bytes.length) throw new FeedReadError('truncated', this.version, 'unexpected end');
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  uleb(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.take(1)[0];
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    throw new FeedReadError('truncated', this.version, 'a length beyond u32');
  }
  u64 = (): bigint => this.take(8).readBigUInt64LE(0);
  vec = (): Buffer => this.take(this.uleb());
  seq<T>(read: () => T): T[] {
    const count = this.uleb();
    // Each element takes a byte at least: a longer count is no page's.
    if (count > this.bytes.length - this.at)
      throw new FeedReadError('truncated', this.version, 'a count beyond the page');
    return Array.from({ length: count }, read);
  }
  option<T>(read: () => T): T | null {
    return this.take(1)[0] === 1 ? read() : null;
  }
  unknown(what: string, variant: number): never {
    throw new FeedReadError('unknown_variant', this.version, `${what} variant ${variant}`);
  }
}

function typeTag(r: Reader): void {
  const v = r.uleb();
  if (v === 6) return typeTag(r);
  if (v === 7) {
    r.take(32);
    r.vec();
    r.vec();
    r.seq(() => typeTag(r));
    return;
  }
  if (v > 10) r.unknown('TypeTag', v);
}

function accountAuthenticator(r: Reader): void {
  const v = r.uleb();
  if (v === 0) {
    r.vec();
    r.vec();
  } else if (v === 2) {
    if (r.uleb() !== 0) r.unknown('AnyPublicKey', 1);
    r.vec();
    if (r.uleb() !== 0) r.unknown('AnySignature', 1);
    r.vec();
  } else r.unknown('AccountAuthenticator', v);
}

function transaction(r: Reader): FeedTransaction['kind'] {
  const v = r.uleb();
  if (v === 0) {
    r.take(32);
    r.u64();
    const payload = r.uleb();
    if (payload !== 2) r.unknown('TransactionPayload', payload);
    r.take(32);
    r.vec();
    r.vec();
    r.seq(() => typeTag(r));
    r.seq(() => r.vec());
    r.take(8 * 3 + 1);
    const auth = r.uleb();
    if (auth === 0) {
      r.vec();
      r.vec();
    } else if (auth === 3) {
      accountAuthenticator(r);
      r.seq(() => r.take(32));
      r.seq(() => accountAuthenticator(r));
      r.take(32);
      accountAuthenticator(r);
    } else if (auth === 4) accountAuthenticator(r);
    else r.unknown('TransactionAuthenticator', auth);
    return 'user';
  }
  if (v === 5) {
    const ext = r.uleb();
    if (ext !== 1) r.unknown('BlockMetadataExt', ext);
    r.take(32 + 16 + 32);
    r.vec();
    r.seq(() => r.take(4));
    r.u64();
    r.option(() => [r.u64(), r.u64(), r.vec()]);
    return 'block_metadata_ext';
  }
  if (v === 6) {
    const payload = r.uleb();
    if (payload > 1) r.unknown('BlockEpiloguePayload', payload);
    r.take(32);
    if (r.uleb() !== 0) r.unknown('BlockEndInfo', 1);
    r.take(2 + 16);
    if (payload === 1) {
      if (r.uleb() !== 0) r.unknown('FeeDistribution', 1);
      r.seq(() => r.take(16));
    }
    return 'block_epilogue';
  }
  return r.unknown('Transaction', v);
}

/** TransactionInfo V0 at the reader's place. */
function readInfo(r: Reader): {
  gasUsed: bigint;
  transactionHash: Buffer;
  eventRootHash: Buffer;
  stateChangeHash: Buffer;
} {
  const v = r.uleb();
  if (v !== 0) r.unknown('TransactionInfo', v);
  const gasUsed = r.u64();
  const status = r.uleb();
  if (status !== 0) r.unknown('ExecutionStatus', status);
  const transactionHash = r.take(32);
  const eventRootHash = r.take(32);
  const stateChangeHash = r.take(32);
  r.option(() => r.take(32));
  r.option(() => r.take(32));
  return { gasUsed, transactionHash, eventRootHash, stateChangeHash };
}

function event(r: Reader): void {
  const v = r.uleb();
  if (v === 0) {
    r.take(8 + 32 + 8);
    typeTag(r);
    r.vec();
  } else if (v === 1) {
    typeTag(r);
    r.vec();
  } else r.unknown('ContractEvent', v);
}

function metadata(r: Reader): void {
  const v = r.uleb();
  if (v > 1) r.unknown('StateValueMetadata', v);
  r.take(v === 0 ? 16 : 24);
}

function writeSet(r: Reader): FeedWrite[] {
  const v = r.uleb();
  if (v !== 0) r.unknown('WriteSet', v);
  return r.seq(() => {
    const start = r.at;
    const key = r.uleb();
    if (key === 0 || key === 1) r.take(32);
    else if (key !== 2) r.unknown('StateKey', key);
    r.vec();
    const stateKey = r.bytes.subarray(start, r.at);
    const op = r.uleb();
    if (op > 5) r.unknown('WriteOp', op);
    const value = op % 3 === 2 ? null : r.vec();
    if (op >= 3) metadata(r);
    const kinds = ['creation', 'modification', 'deletion'] as const;
    return { stateKey, op: kinds[op % 3], value, withMetadata: op >= 3 };
  });
}

/** Every transaction of a page, in order; throws FeedReadError on what it does not know. */
export function readFeedPage(body: Buffer): FeedTransaction[] {
  const r = new Reader(body);
  const out = r.seq(() => {
    r.version = r.u64();
    const start = r.at;
    const kind = transaction(r);
    const transactionBytes = body.subarray(start, r.at);
    const info = readInfo(r);
    const events = r.seq(() => event(r)).length;
    r.take(32);
    const setStart = r.at;
    const writes = writeSet(r);
    return {
      version: r.version,
      kind,
      transaction: transactionBytes,
      ...info,
      events,
      writeSet: body.subarray(setStart, r.at),
      writes,
    };
  });
  if (r.at !== body.length) throw new FeedReadError('trailing_bytes', null, 'bytes after the page');
  return out;
}

/**
 * Where the transaction that starts at `start` ends, found as SPEC-feed rule 7 says: the
 * first offset at which a TransactionInfo V0 parses whose transaction_hash is the hash of
 * the bytes before it; null when none does.
 */
function delimitTransaction(body: Buffer, start: number): number | null {
  for (let end = start + 1; end < body.length; end++) {
    const r = new Reader(body);
    r.at = end;
    try {
      const info = readInfo(r);
      if (info.transactionHash.equals(aptosHash('Transaction', body.subarray(start, end)))) return end;
    } catch (err) {
      if (!(err instanceof FeedReadError)) throw err;
    }
  }
  return null;
}

/**
 * SPEC-feed rule 7 for the transaction that starts at `start`: its TransactionInfo found by
 * transaction_hash, then its write set found by state_change_hash (the 32-byte
 * accumulator root hash before it), over whatever events lie between. null when either
 * search fails.
 */
export function delimitByHashes(
  body: Buffer,
  start: number,
): { infoAt: number; writeSetAt: number; end: number } | null {
  const infoAt = delimitTransaction(body, start);
  if (infoAt === null) return null;
  const r = new Reader(body);
  r.at = infoAt;
  const info = readInfo(r);
  for (let at = r.at + 32; at < body.length; at++) {
    const w = new Reader(body);
    w.at = at;
    try {
      writeSet(w);
      if (aptosHash('WriteSet', body.subarray(at, w.at)).equals(info.stateChangeHash)) {
        return { infoAt, writeSetAt: at, end: w.at };
      }
    } catch (err) {
      if (!(err instanceof FeedReadError)) throw err;
    }
  }
  return null;
}

/** Where each transaction of a page starts (after its version), read as far as the reader knows. */
export function transactionStarts(body: Buffer): number[] {
  const r = new Reader(body);
  const count = r.uleb();
  const starts: number[] = [];
  for (let i = 0; i < count; i++) {
    r.version = r.u64();
    starts.push(r.at);
    try {
      transaction(r);
      readInfo(r);
      r.seq(() => event(r));
      r.take(32);
      writeSet(r);
    } catch (err) {
      if (err instanceof FeedReadError) return starts;
      throw err;
    }
  }
  return starts;
}
