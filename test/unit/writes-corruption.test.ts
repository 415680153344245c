// A page is claimed whole or not at all: each corruption gives its reason, the version
// where it happened and only the transactions verified before it, and no flipped byte
// anywhere in a page makes it read as other writes than the page's own.
import { describe, expect, it } from 'vitest';
import { decodeTransactionPage } from '../../src/writes/page.js';
import { FeedPageError, type FeedPageReason, type VerifiedTransaction } from '../../src/writes/verified.js';
import { Events, Transaction } from '../helpers/feed-bcs.js';
import { type OnChainParts, type OnChainSpec, onChain, page, writeSetBytes } from '../helpers/feed-build.js';
import {
  AUTHENTICATORS,
  addr,
  fill,
  PAYLOADS,
  STATE_KEYS,
  userTransaction,
  WRITE_OPS,
} from '../helpers/feed-samples.js';

const START = 100n;
const writeSet = (n: number) =>
  writeSetBytes(STATE_KEYS.slice(0, n).map((s, k) => [s.key, WRITE_OPS[k % WRITE_OPS.length]!]));
const events = Events.serialize([
  {
    V2: {
      type_tag: { struct: { address: addr(1), module: 'coin', name: 'Deposit', type_args: [] } },
      event_data: fill(16, 1),
    },
  },
]).toBytes();
const epilogue = Transaction.serialize({
  BlockEpilogue: {
    V0: {
      block_id: fill(32, 8),
      block_end_info: {
        V0: {
          block_gas_limit_reached: false,
          block_output_limit_reached: false,
          block_effective_block_gas_units: 1n,
          block_approx_output_size: 2n,
        },
      },
    },
  },
} as never).toBytes();

/** Three transactions at START…START + 2 (unless a spec of the middle one says otherwise). */
function items(middle: Partial<OnChainSpec> = {}): OnChainParts[] {
  return [
    onChain({
      version: START,
      transaction: userTransaction(PAYLOADS[1], AUTHENTICATORS[0]),
      events,
      writeSet: writeSet(3),
    }),
    onChain({
      version: START + 1n,
      transaction: userTransaction(PAYLOADS[7], AUTHENTICATORS[4]),
      writeSet: writeSet(8),
      ...middle,
    }),
    onChain({ version: START + 2n, transaction: epilogue }),
  ];
}

function decodeFails(body: Uint8Array, start = START): FeedPageError {
  try {
    decodeTransactionPage(body, start);
  } catch (err) {
    if (err instanceof FeedPageError) return err;
    throw err;
  }
  throw new Error('the page was claimed');
}

function expectFailure(body: Uint8Array, reason: FeedPageReason, version: bigint): void {
  const err = decodeFails(body);
  expect({ reason: err.reason, version: err.version }).toEqual({ reason, version });
  // What it keeps is the page's own transactions before the failure, each verified.
  expect(err.verifiedPrefix.map((t) => t.version)).toEqual(
    Array.from({ length: Number(version - START) }, (_, i) => START + BigInt(i)),
  );
}

/** The page with bytes[at] XOR `mask`. */
function flipped(body: Uint8Array, at: number, mask = 0x01): Buffer {
  const copy = Buffer.from(body);
  copy[at]! ^= mask;
  return copy;
}

describe('a corrupt page is not claimed', () => {
  const parts = items();
  const { body, at } = page(parts);
  const middle = (offset: number) => at[1]! + offset;
  const whole = decodeTransactionPage(body, START);

  it('a byte of a transaction flipped: transaction_hash', () => {
    // The last byte of the middle transaction: its signature's.
    expectFailure(flipped(body, middle(parts[1]!.transaction[1] - 1)), 'transaction_hash', START + 1n);
  });

  it('a byte of a write set flipped: state_change_hash', () => {
    // The last byte of the middle write set: the data of its last op.
    expectFailure(flipped(body, middle(parts[1]!.writeSet[1] - 1)), 'state_change_hash', START + 1n);
  });

  it('a byte of a recorded hash flipped: that hash', () => {
    expectFailure(flipped(body, middle(parts[1]!.transactionHashAt + 5)), 'transaction_hash', START + 1n);
    expectFailure(flipped(body, middle(parts[1]!.stateChangeHashAt + 31)), 'state_change_hash', START + 1n);
  });

  it('a page cut short anywhere: truncated, with the transactions wholly before the cut', () => {
    const ends = parts.map((p, i) => at[i]! + p.bytes.length);
    for (let cut = 0; cut < body.length; cut += cut < 40 ? 1 : 13) {
      const err = decodeFails(body.subarray(0, cut));
      expect(err.reason).toBe('truncated');
      expect(err.verifiedPrefix.length).toBe(ends.filter((end) => end <= cut).length);
    }
  });

  it('bytes after the last transaction: trailing_bytes, every transaction verified', () => {
    expectFailure(Buffer.concat([body, Uint8Array.of(0)]), 'trailing_bytes', START + 3n);
  });

  it('a version other than the next: not_contiguous', () => {
    expectFailure(page(items({ version: START + 2n })).body, 'not_contiguous', START + 1n);
    for (const start of [START - 1n, START + 1n]) {
      const err = decodeFails(body, start);
      expect({ reason: err.reason, version: err.version, kept: err.verifiedPrefix.length }).toEqual({
        reason: 'not_contiguous',
        version: start,
        kept: 0,
      });
    }
  });

  it('no byte flipped anywhere reads as other writes than the page has', () => {
    const print = (decoded: VerifiedTransaction[]) =>
      decoded
        .map((t) => `${t.version}:${t.writes.map((w) => `${w.kind}/${w.address}/${w.key.toString('hex')}`)}`)
        .join(';');
    const original = print(whole);
    let claimed = 0;
    const others: number[] = [];
    for (let i = 0; i < body.length; i++) {
      for (const mask of i % 3 === 0 ? [0x01, 0x80] : [0x01]) {
        try {
          if (print(decodeTransactionPage(flipped(body, i, mask), START)) !== original) others.push(i);
          claimed++;
        } catch (err) {
          if (!(err instanceof FeedPageError)) throw err;
        }
      }
    }
    expect(others).toEqual([]);
    // Only what no hash covers may change and still read: gas, status, event root, events, the accumulator root.
    expect(claimed).toBeGreaterThan(0);
    expect(claimed).toBeLessThan(body.length / 4);
  });
});
