// A user transaction with a variant the reader does not know, whose entry-function
// argument carries a forged TransactionInfo (its transaction_hash = hash of the bytes before
// it, which the sender controls), makes the search by hash (SPEC-feed rule 7) stop at the
// forged end. The forged info names a forged state_change_hash; a forged event's data
// swallows the rest of the real transaction, its real info, events, root and the real write
// set up to a table item's value, which ends with a forged WriteSet that reaches exactly the
// real write set's end. Every hash in the page is the honest node's: a search that took
// the first end that verifies would report the decoy's writes and not the version's real
// ones (the victim resource and the table item), so no end is claimed unless it is the
// only one.
import { describe, expect, it } from 'vitest';
import { decodeTransactionPage } from '../../src/writes/page.js';
import { FeedPageError } from '../../src/writes/verified.js';
import { encodeStateKey } from '../../src/writes/state-key.js';
import { parseTypeTag } from '../../src/wire/move-type.js';
import { concatBytes, u64le } from '../helpers/bytes.js';
import { onChain, uleb } from '../helpers/feed-build.js';
import { aptosHash } from '../helpers/feed-page.js';
import { fill } from '../helpers/feed-samples.js';

const uleb2 = (n: number): number[] => [(n & 0x7f) | 0x80, n >> 7]; // 128 <= n < 16384
const bytesOf = (b: ArrayLike<number>) => concatBytes(uleb(b.length), b);

const START = 1000n;
const victim = `0x${'ca'.repeat(32)}`;
const victimTag = parseTypeTag('0xcafe::pool::Reserves') as never;
const victimKey = encodeStateKey({ kind: 'resource', address: victim, tag: victimTag });
const handle = `0x${'ee'.repeat(32)}`;
const tableKey = encodeStateKey({ kind: 'table_item', handle, key: Uint8Array.of(7) });
const decoyKey = encodeStateKey({ kind: 'table_item', handle: `0x${'01'.repeat(32)}`, key: Uint8Array.of(1) });

/** The page, its user transaction's argument holding a forged TransactionInfo or (forge false) as many zeros. */
function pageOf(forge: boolean): Buffer {
  // --- the attacker's transaction, up to its vector<u8> argument
  const head = concatBytes(
    [0], // Transaction::User
    fill(32, 1), // sender
    u64le(5n), // sequence_number
    [2], // TransactionPayload::EntryFunction
    fill(32, 2), // module address
    bytesOf(Buffer.from('m')),
    bytesOf(Buffer.from('f')),
    [0], // ty_args
    [1], // one argument
  );
  const FORGED_INFO = 1 + 8 + 1 + 96 + 2;
  const EVENT_HEAD = 1 + 1 + 1 + 2; // count, V2, TypeTag bool, uleb2(L)
  const argLength = FORGED_INFO + EVENT_HEAD;
  const prefix = concatBytes(head, uleb(argLength)); // the bytes the forged transaction_hash covers
  const tail = concatBytes(u64le(1n), u64le(1n), u64le(1n), [1], [5], fill(64, 3)); // gas, price, expiry, chain, TransactionAuthenticator 5 (unknown)
  const metadata = concatBytes([1], u64le(1n), u64le(2n), u64le(3n)); // StateValueMetadata::V1, predictable for an existing slot
  // The table item's value: 32 bytes the reader takes for the accumulator root, then a forged WriteSet whose
  // one Creation swallows the rest of the value and the real metadata after it.
  const filler = fill(10, 9);
  const forgedHead = concatBytes([0, 1], decoyKey, [0], uleb(filler.length + metadata.length));
  const value = concatBytes(fill(32, 8), forgedHead, filler);
  const forgedWriteSet = concatBytes(forgedHead, filler, metadata);
  const realWriteSetHead = concatBytes([0, 2], victimKey, [1], bytesOf(u64le(42n)), tableKey, [4], uleb(value.length));
  const realWriteSet = concatBytes(realWriteSetHead, value, metadata);
  // L: from the end of the argument to the table value's first byte.
  const realInfoLength = 1 + 8 + 1 + 96 + 1 + 1 + 32;
  const L = tail.length + realInfoLength + 1 + 32 + realWriteSetHead.length;
  const forgedInfo = forge
    ? concatBytes(
        [0],
        u64le(1n),
        [0],
        aptosHash('Transaction', prefix),
        fill(32, 4),
        aptosHash('WriteSet', forgedWriteSet),
        [0, 0],
      )
    : new Uint8Array(FORGED_INFO);
  const arg = concatBytes(forgedInfo, [1, 1, 0], uleb2(L));
  expect(arg.length).toBe(argLength);
  const transaction = concatBytes(prefix, arg, tail);
  // --- the honest node's record of it: real hashes of the real bytes
  const realInfo = concatBytes(
    [0],
    u64le(7n),
    [0],
    aptosHash('Transaction', transaction),
    fill(32, 5),
    aptosHash('WriteSet', realWriteSet),
    [0],
    [1],
    fill(32, 6),
  );
  expect(realInfo.length).toBe(realInfoLength);
  const first = concatBytes(u64le(START), transaction, realInfo, [0], fill(32, 7), realWriteSet);
  const second = onChain({ version: START + 1n, transaction: concatBytes([3], fill(32, 10)) }).bytes; // a StateCheckpoint
  return Buffer.concat([Buffer.from([2]), first, second]);
}

describe('a transaction with an unknown variant whose sender forged a second end', () => {
  it('is not claimed: two ends verify by hash, so neither is believed', () => {
    let reason: string | undefined;
    try {
      decodeTransactionPage(pageOf(true), START);
    } catch (err) {
      if (err instanceof FeedPageError) reason = err.reason;
    }
    expect(['unknown_variant', 'transaction_hash']).toContain(reason);
  });

  it('the same page without the forged end is claimed, with every key the version wrote', () => {
    const keys = decodeTransactionPage(pageOf(false), START)[0]!.writes.map((w) => w.key.toString('hex'));
    expect(keys).toContain(Buffer.from(victimKey).toString('hex'));
    expect(keys).toContain(Buffer.from(tableKey).toString('hex'));
  });
});
