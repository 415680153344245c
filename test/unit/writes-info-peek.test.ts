// The few bytes a search over offsets tests before it reads a TransactionInfo
// (peekTransactionInfo): they may rule an offset out only where the reader would fail,
// and the offset they give for transaction_hash is the reader's. A peek that ruled out
// a real TransactionInfo would hide the end of a transaction the reader cannot walk.
import { describe, expect, it } from 'vitest';
import { BcsCursor, Undecodable } from '../../src/writes/cursor.js';
import { peekTransactionInfo, readTransactionInfo } from '../../src/writes/info.js';
import { type ExecutionStatus, TransactionInfo } from '../helpers/feed-bcs.js';

type Status = Parameters<typeof ExecutionStatus.serialize>[0];

const hash = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);
const module = { Module: { address: hash(1), name: 'coin' } };
const STATUSES: Array<[string, Status]> = [
  ['Success', { Success: true }],
  ['OutOfGas', { OutOfGas: true }],
  [
    'MoveAbort with its info',
    { MoveAbort: { location: module, code: 7n, info: { reason_name: 'E', description: 'd' } } },
  ],
  ['MoveAbort in a script', { MoveAbort: { location: { Script: true }, code: 7n, info: null } }],
  ['ExecutionFailure', { ExecutionFailure: { location: module, function: 1, code_offset: 2 } }],
  ['MiscellaneousError', { MiscellaneousError: 4016n }],
  ['MiscellaneousError without a code', { MiscellaneousError: null }],
];

/** Every TransactionInfo variant with every status, and the first two Option hashes absent and present. */
function infos(): Array<[string, Uint8Array]> {
  const out: Array<[string, Uint8Array]> = [];
  for (const [name, status] of STATUSES)
    for (const checkpoint of [null, hash(0xc1)])
      for (const second of [null, hash(0xc2)]) {
        const fields = {
          gas_used: 9n,
          status,
          transaction_hash: hash(0x11).map((b, i) => b ^ i),
          event_root_hash: hash(0xee),
          state_change_hash: hash(0x5c),
          state_checkpoint_hash: checkpoint,
        };
        const label = `${name}, checkpoint ${checkpoint ? 'some' : 'none'}, next ${second ? 'some' : 'none'}`;
        out.push([
          `V0, ${label}`,
          TransactionInfo.serialize({ V0: { ...fields, auxiliary_info_hash: second } }).toBytes(),
        ]);
        const v1 = {
          ...fields,
          hot_state_checkpoint_hash: second,
          auxiliary_info_hash: null,
          position_state_checkpoint_hash: hash(0x0d),
          placeholders: [null, null, null, null, null, null, null],
        };
        out.push([`V1, ${label}`, TransactionInfo.serialize({ V1: v1 }).toBytes()]);
      }
  return out;
}

/** What the reader makes of bytes[at…]: the offset of transaction_hash, or null where it fails. */
function read(bytes: Uint8Array, at: number): number | null {
  try {
    return readTransactionInfo(new BcsCursor(bytes, at));
  } catch (err) {
    if (err instanceof Undecodable) return null;
    throw err;
  }
}

/** Bytes like a page's: runs of zeros, small integers and random bytes, seeded. */
function pageLike(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = seed;
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 16;
  };
  for (let i = 0; i < length; ) {
    const kind = next() % 3;
    const run = 1 + (next() % 40);
    for (let j = 0; j < run && i < length; j++, i++)
      bytes[i] = kind === 0 ? 0 : kind === 1 ? next() % 3 : next() & 0xff;
  }
  return bytes;
}

describe('peekTransactionInfo', () => {
  it.each(infos())(
    'never rules out a real TransactionInfo (%s), and places its transaction_hash as the reader does',
    (_, info) => {
      const bytes = new Uint8Array([...info, 0, 0, 0]);
      const transactionHashAt = read(bytes, 0);
      expect(transactionHashAt).not.toBeNull();
      const peeked = peekTransactionInfo(bytes, 0);
      expect(peeked).not.toBeNull();
      if (peeked !== -1) expect(peeked).toBe(transactionHashAt);
    },
  );

  it('rules an offset out only where the reader fails, over page-like bytes with real infos among them', () => {
    const parts: Uint8Array[] = [];
    for (const [i, [, info]] of infos().entries()) parts.push(pageLike(50 + (i % 7) * 13, i + 1), info);
    const bytes = new Uint8Array(Buffer.concat(parts));
    let ruledOut = 0;
    let readable = 0;
    for (let at = 0; at < bytes.length; at++) {
      const peeked = peekTransactionInfo(bytes, at);
      const transactionHashAt = read(bytes, at);
      if (transactionHashAt !== null) readable++;
      if (peeked === null) {
        ruledOut++;
        expect(transactionHashAt, `offset ${at}`).toBeNull();
      } else if (peeked !== -1 && transactionHashAt !== null) {
        expect(transactionHashAt, `offset ${at}`).toBe(peeked);
      }
    }
    // The peek does its job: most offsets are ruled out, and every real info still reads.
    expect(readable).toBeGreaterThanOrEqual(infos().length);
    expect(ruledOut).toBeGreaterThan(bytes.length * 0.9);
  });
});
