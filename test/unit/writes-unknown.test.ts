// Variants the reader does not know (new transaction kinds and authenticators arrive
// every few months): a transaction's end is found by its hash, the end of its events by
// the write set's; where neither can be found, the page is not claimed. The search is
// bounded, and the bound holds.
import { describe, expect, it } from 'vitest';
import { eventsEndByWriteSet, MAX_CANDIDATES } from '../../src/writes/delimit.js';
import { concatBytes, u64le } from '../helpers/bytes.js';
import { decodeTransactionPage } from '../../src/writes/page.js';
import { FeedPageError } from '../../src/writes/verified.js';
import { Events, StateKey, WriteOp } from '../helpers/feed-bcs.js';
import { RawTransaction } from '../helpers/feed-bcs-user.js';
import { type OnChainParts, type OnChainSpec, onChain, page, writeSetBytes } from '../helpers/feed-build.js';
import { aptosHash } from '../helpers/feed-page.js';
import {
  AUTHENTICATORS,
  addr,
  fill,
  PAYLOADS,
  STATE_KEYS,
  userTransaction,
  WRITE_OPS,
} from '../helpers/feed-samples.js';

const START = 7n;
const writeSet = writeSetBytes(STATE_KEYS.map((s, k) => [s.key, WRITE_OPS[k % WRITE_OPS.length]!]));
const known = userTransaction(PAYLOADS[2], AUTHENTICATORS[0]);
const raw = RawTransaction.serialize({
  sender: addr(1),
  sequence_number: 3n,
  payload: PAYLOADS[2] as never,
  max_gas_amount: 1n,
  gas_unit_price: 1n,
  expiration_timestamp_secs: 1n,
  chain_id: 1,
}).toBytes();

/** Transactions with something the reader does not know, or walks to another end than their hash's. */
const UNDELIMITED: Array<[string, Uint8Array]> = [
  // User, SingleSender, SingleKey, AnyPublicKey::Ed25519, then an AnySignature variant after SlhDsa.
  ['an AnySignature variant', concatBytes([0], raw, [4, 2, 0, 32], fill(32, 1), [9], fill(90, 2))],
  ['an AccountAuthenticator variant', concatBytes([0], raw, [4, 6], fill(50, 3))],
  ['a TransactionAuthenticator variant', concatBytes([0], raw, [5], fill(120, 4))],
  ['a TransactionPayload variant (EncryptedPayload)', concatBytes([0], addr(1), fill(8, 5), [5], fill(300, 6))],
  ['a Transaction variant', concatBytes([7], fill(64, 7))],
  ['a value the walk ends before (a field it does not know)', concatBytes(known, [1, 2, 3])],
];

/** A page of a known transaction, the one under test, and another known one. */
function threeWith(middle: Partial<OnChainSpec> & { transaction: Uint8Array }): {
  body: Buffer;
  parts: OnChainParts[];
} {
  const parts = [
    onChain({ version: START, transaction: known, writeSet }),
    onChain({ version: START + 1n, writeSet, ...middle }),
    onChain({ version: START + 2n, transaction: known }),
  ];
  return { body: page(parts).body, parts };
}

function failure(body: Uint8Array): FeedPageError {
  try {
    decodeTransactionPage(body, START);
  } catch (err) {
    if (err instanceof FeedPageError) return err;
    throw err;
  }
  throw new Error('the page was claimed');
}

const writesOf = (body: Uint8Array) =>
  decodeTransactionPage(body, START).map((t) => t.writes.map((w) => w.key.toString('hex')));
/** Which of a page's transactions were delimited by hash. */
const delimitedOf = (body: Uint8Array) => decodeTransactionPage(body, START).map((t) => t.delimited === true);
const keys = STATE_KEYS.map((s) => Buffer.from(StateKey.serialize(s.key).toBytes()).toString('hex')).sort();

describe('a transaction the reader cannot walk', () => {
  it.each(UNDELIMITED)('with %s is delimited by its hash, and says so', (_, transaction) => {
    const { body } = threeWith({ transaction });
    expect(writesOf(body).map((w) => [...w].sort())).toEqual([keys, keys, []]);
    expect(delimitedOf(body)).toEqual([false, true, false]);
  });

  it.each(UNDELIMITED)('with %s and no end its hash owns is not claimed', (_, transaction) => {
    const err = failure(threeWith({ transaction, transactionHash: aptosHash('Transaction', known) }).body);
    // Why the walk stopped: a variant it does not know, bytes that are no TransactionInfo, or a hash that disowns them.
    expect(['unknown_variant', 'undecodable', 'transaction_hash']).toContain(err.reason);
    expect(err.version).toBe(START + 1n);
    expect(err.verifiedPrefix.map((t) => t.version)).toEqual([START]);
  });

  it('several in one page are each delimited by their own hash: their searches share one reading of the page', () => {
    const parts = UNDELIMITED.flatMap(([, transaction], i) => [
      onChain({ version: START + BigInt(2 * i), transaction, writeSet }),
      onChain({ version: START + BigInt(2 * i + 1), transaction: known }),
    ]);
    const body = page(parts).body;
    expect(delimitedOf(body)).toEqual(UNDELIMITED.flatMap(() => [true, false]));
    expect(writesOf(body).map((w) => [...w].sort())).toEqual(UNDELIMITED.flatMap(() => [keys, []]));
  });

  it('an unknown variant no hash delimits is unknown_variant', () => {
    const err = failure(threeWith({ transaction: UNDELIMITED[0]![1], transactionHash: fill(32, 9) }).body);
    expect(err.reason).toBe('unknown_variant');
  });

  it(`hashes no more than ${MAX_CANDIDATES} candidate ends in a page`, () => {
    // Bytes of 0 and 1 read as a TransactionInfo at nearly every offset (variant, gas, Success or OutOfGas, hashes, options).
    const noise = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 31);
    const withNoise = (n: number) => concatBytes([0], raw, [4, 6], noise(n), fill(20, 1));
    expect(writesOf(threeWith({ transaction: withNoise(MAX_CANDIDATES - 1000) }).body)[1]!.sort()).toEqual(keys);
    expect(failure(threeWith({ transaction: withNoise(MAX_CANDIDATES + 1000) }).body).reason).toBe('unknown_variant');
  });

  it('does not hash a candidate whose transaction_hash holds a run no digest holds: zeros cost a read each', () => {
    const withZeros = concatBytes([0], raw, [4, 6], new Uint8Array(4 * MAX_CANDIDATES), fill(20, 1));
    expect(writesOf(threeWith({ transaction: withZeros }).body)[1]!.sort()).toEqual(keys);
  });
});

describe('events the reader cannot walk', () => {
  const second = Events.serialize([{ V2: { type_tag: { u8: true }, event_data: [1] } }])
    .toBytes()
    .slice(1);
  // Two events: a V1 { key: { creation_number, account_address }, sequence_number, type_tag, event_data }, then a V2.
  const event = (typeTag: ArrayLike<number>) =>
    concatBytes([2, 0], fill(8, 1), addr(1), fill(8, 2), typeTag, [3, 1, 2, 3], second);
  const EVENTS: Array<[string, Uint8Array]> = [
    ['a TypeTag variant', event([0x30])],
    ['a TypeTag variant inside a vector', event([6, 6, 0x12 + 1])],
    ['a FunctionParamOrReturnTag variant', event([11, 1, 3, 2])],
    ['a ContractEvent variant', concatBytes([1, 2], fill(40, 4))],
  ];

  it.each(EVENTS)('with %s are delimited by the write set after them, and say so', (_, events) => {
    const { body } = threeWith({ transaction: known, events });
    expect(writesOf(body).map((w) => [...w].sort())).toEqual([keys, keys, []]);
    expect(delimitedOf(body)).toEqual([false, true, false]);
  });

  it('several in one page, across a version whose high half changes, are each delimited: their searches share one reading of the page', () => {
    // Versions 2^32 - 2 to 2^32 + 5: a write set's end is followed by a version of either high half.
    const first = 2n ** 32n - 2n;
    const parts = [...EVENTS, ...EVENTS].map(([, events], i) =>
      onChain({ version: first + BigInt(i), transaction: known, events, writeSet }),
    );
    const got = decodeTransactionPage(page(parts).body, first);
    expect(got.map((t) => t.delimited === true)).toEqual(parts.map(() => true));
    expect(got.map((t) => t.writes.map((w) => w.key.toString('hex')).sort())).toEqual(parts.map(() => keys));
  });

  it('claim no end when a second offset verifies too: event data can hold a copy of the real write set', () => {
    const next = START + 2n;
    const hash = aptosHash('WriteSet', writeSet);
    const end = (root: number) => concatBytes(fill(32, root), writeSet, u64le(next));
    // The state_change_hash, then events the reader cannot walk, then the real root, write set and next version.
    const honest = concatBytes(hash, [1, 2, 0x30], fill(40, 3), end(4), known);
    const realAt = 32 + 3 + 40;
    expect(eventsEndByWriteSet(honest, 32, 0, next)).toBe(realAt);
    // The same, with the sender's event data holding a root, a copy of the write set and the next version.
    const copied = concatBytes(hash, [1, 2, 0x30], end(5), fill(40, 3), end(4), known);
    expect(eventsEndByWriteSet(copied, 32, 0, next)).toBe(-1);
  });

  it.each(EVENTS)('with %s and no write set after them its hash owns is not claimed: unknown_variant', (_, events) => {
    const err = failure(threeWith({ transaction: known, events, stateChangeHash: fill(32, 1) }).body);
    expect({ reason: err.reason, version: err.version }).toEqual({ reason: 'unknown_variant', version: START + 1n });
  });
});

describe('what nothing else vouches for', () => {
  it('an unknown TransactionInfo variant: unknown_variant', () => {
    const { body, parts } = threeWith({ transaction: known });
    body[page(parts).at[1]! + parts[1]!.info[0]] = 2;
    expect(failure(body).reason).toBe('unknown_variant');
  });

  it.each([
    ['a WriteOp variant', concatBytes([0, 1], StateKey.serialize(STATE_KEYS[0]!.key).toBytes(), [6, 1, 9])],
    ['a StateKey variant', concatBytes([0, 1], [3, 2, 1, 1], WriteOp.serialize({ Deletion: true }).toBytes())],
    [
      'a StateValueMetadata variant',
      concatBytes([0, 1], StateKey.serialize(STATE_KEYS[0]!.key).toBytes(), [5, 2], fill(16, 1)),
    ],
    ['a WriteSet variant', concatBytes([1, 0])],
  ])('in the write set, %s with its hash: unknown_variant', (_, writes) => {
    const err = failure(threeWith({ transaction: known, writeSet: writes }).body);
    expect({ reason: err.reason, version: err.version }).toEqual({ reason: 'unknown_variant', version: START + 1n });
  });
});
