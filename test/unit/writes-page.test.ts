// Whole pages of every transaction kind, payload, authenticator and key scheme the golden
// has, with events of both versions and every kind of type tag, both TransactionInfo
// variants and every ExecutionStatus, and write sets of every StateKey kind and WriteOp:
// built by the tests' own encoder, decoded and verified, every key read as the test wrote it.
import { describe, expect, it } from 'vitest';
import { decodeTransactionPage } from '../../src/writes/page.js';
import { BcsCursor } from '../../src/writes/cursor.js';
import { skipEvents } from '../../src/writes/events.js';
import { readTransactionInfo } from '../../src/writes/info.js';
import { measureTransaction } from '../../src/writes/transaction.js';
import { Events, Path, Transaction } from '../helpers/feed-bcs.js';
import { onChain, page, type StatusInput, writeSetBytes } from '../helpers/feed-build.js';
import {
  AUTHENTICATORS,
  addr,
  fill,
  PAYLOADS,
  STATE_KEYS,
  script,
  stateKeyBytes,
  struct,
  TYPE_TAGS,
  userTransaction,
  WRITE_OPS,
} from '../helpers/feed-samples.js';

const blockMetadata = {
  id: fill(32, 1),
  epoch: 13473n,
  round: 11165n,
  proposer: addr(2),
  previous_block_votes_bitvec: [0xec, 0xde, 0xf3],
  failed_proposer_indices: [3, 70000],
  timestamp_usecs: 1762134258889133n,
};
const endInfo = {
  V0: {
    block_gas_limit_reached: true,
    block_output_limit_reached: false,
    block_effective_block_gas_units: 24n,
    block_approx_output_size: 5759n,
  },
};
const events = Events.serialize(
  TYPE_TAGS.map((type_tag, i) =>
    i % 2 === 0
      ? { V2: { type_tag, event_data: fill(i * 7, i) } }
      : {
          V1: {
            key: { creation_number: BigInt(i), account_address: addr(i) },
            sequence_number: 9n,
            type_tag,
            event_data: fill(i, 1),
          },
        },
  ),
).toBytes();
const writes = (shift: number) =>
  STATE_KEYS.map((s, k) => [s.key, WRITE_OPS[(k + shift) % WRITE_OPS.length]!] as const);

/** Every kind of Transaction the golden has, each with its label. */
const TRANSACTIONS: Array<[string, Uint8Array]> = [
  ...PAYLOADS.map((payload, i): [string, Uint8Array] => [
    `user: payload ${Object.keys(payload)[0]}, authenticator ${Object.keys(AUTHENTICATORS[i % AUTHENTICATORS.length]!)[0]}`,
    userTransaction(payload, AUTHENTICATORS[i % AUTHENTICATORS.length], BigInt(i)),
  ]),
  ...[
    ['genesis, direct', { GenesisTransaction: { Direct: { write_set: { V0: writes(0) }, events: [] } } }],
    ['genesis, script', { GenesisTransaction: { Script: { execute_as: addr(1), script } } }],
    ['block metadata', { BlockMetadata: blockMetadata }],
    ['state checkpoint', { StateCheckpoint: fill(32, 9) }],
    [
      'validator transaction, DKG result',
      {
        ValidatorTransaction: {
          DKGResult: { metadata: { epoch: 5n, author: addr(3) }, transcript_bytes: fill(900, 4) },
        },
      },
    ],
    [
      'validator transaction, JWK update',
      {
        ValidatorTransaction: {
          ObservedJWKUpdate: {
            update: {
              issuer: Buffer.from('https://accounts.google.com'),
              version: 3n,
              jwks: [
                { variant: { type_name: '0x1::jwks::RSA_JWK', data: fill(300, 5) } },
                { variant: { type_name: 'x', data: [] } },
              ],
            },
            multi_sig: { validator_bitmask: { inner: [0xff] }, sig: fill(96, 6) },
          },
        },
      },
    ],
    ['block metadata ext V0', { BlockMetadataExt: { V0: blockMetadata } }],
    ['block metadata ext V1, no randomness', { BlockMetadataExt: { V1: { ...blockMetadata, randomness: null } } }],
    [
      'block metadata ext V1',
      {
        BlockMetadataExt: {
          V1: { ...blockMetadata, randomness: { metadata: { epoch: 1n, round: 2n }, randomness: fill(32, 7) } },
        },
      },
    ],
    ['block epilogue V0', { BlockEpilogue: { V0: { block_id: fill(32, 8), block_end_info: endInfo } } }],
    [
      'block epilogue V1',
      {
        BlockEpilogue: {
          V1: {
            block_id: fill(32, 8),
            block_end_info: endInfo,
            fee_distribution: {
              V0: {
                amount: [
                  [0n, 5n],
                  [7n, 100n],
                ],
              },
            },
          },
        },
      },
    ],
  ].map(([label, value]) => [label, Transaction.serialize(value as never).toBytes()] as [string, Uint8Array]),
];

const STATUSES: StatusInput[] = [
  { Success: true },
  { OutOfGas: true },
  {
    MoveAbort: {
      location: { Module: { address: addr(1), name: 'coin' } },
      code: 65542n,
      info: { reason_name: 'EINSUFFICIENT', description: 'not enough' },
    },
  },
  { MoveAbort: { location: { Script: true }, code: 1n, info: null } },
  { ExecutionFailure: { location: { Module: { address: addr(1), name: 'm' } }, function: 3, code_offset: 17 } },
  { MiscellaneousError: 4016n },
  { MiscellaneousError: null },
];

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** The page of every transaction above, and the writes each must decode to. */
function everyKind(start: bigint) {
  const expected: Array<Array<{ key: string; kind: string; address?: string }>> = [];
  const items = TRANSACTIONS.map(([, transaction], i) => {
    const entries = i % 3 === 2 ? [] : writes(i);
    expected.push(
      entries
        .map(([key]) => {
          const known = STATE_KEYS.find((s) => s.key === key)!;
          return {
            key: hex(stateKeyBytes(key)),
            kind: known.kind,
            ...(known.address ? { address: '0x' + hex(known.address) } : {}),
          };
        })
        .sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
    return onChain({
      version: start + BigInt(i),
      transaction,
      events: i % 2 === 0 ? events : undefined,
      writeSet: writeSetBytes(entries as never),
      infoVariant: i % 2 === 0 ? 'V1' : 'V0',
      status: STATUSES[i % STATUSES.length],
    });
  });
  return { ...page(items), expected };
}

describe('decodeTransactionPage', () => {
  it.each(TRANSACTIONS)('walks %s to its end', (_, bytes) => {
    expect(measureTransaction(bytes).end).toBe(bytes.length);
  });

  // The page finds an end by hash where a walk fails: these walk each part alone, with no such help.
  it('walks events of every kind of type tag to their end', () => {
    const c = new BcsCursor(events);
    skipEvents(c);
    expect(c.pos).toBe(events.length);
  });

  it.each(
    STATUSES.flatMap((status, i) =>
      (['V0', 'V1'] as const).map((infoVariant) => [infoVariant, `${i} ${Object.keys(status)[0]}`, status] as const),
    ),
  )('walks a TransactionInfo %s with status %s to its end', (infoVariant, _, status) => {
    const parts = onChain({ version: 0n, transaction: TRANSACTIONS[0]![1], infoVariant, status });
    const c = new BcsCursor(parts.bytes, parts.info[0]);
    expect(readTransactionInfo(c)).toBe(parts.transactionHashAt);
    expect(c.pos).toBe(parts.info[1]);
  });

  it.each([0n, 3665938236n, 18446744073709551615n - 40n])(
    'decodes and verifies a page of every kind from version %s',
    (start) => {
      const { body, expected } = everyKind(start);
      const decoded = decodeTransactionPage(body, start);
      expect(decoded.map((t) => t.version)).toEqual(TRANSACTIONS.map((_, i) => start + BigInt(i)));
      const read = decoded.map((t) =>
        t.writes
          .map((w) => ({ key: w.key.toString('hex'), kind: w.kind, ...(w.address ? { address: w.address } : {}) }))
          .sort((a, b) => (a.key < b.key ? -1 : 1)),
      );
      expect(read).toEqual(expected);
    },
  );

  it('reads every StateKey kind and WriteOp of one write set, in its order', () => {
    const entries = writes(0);
    const { body } = page([
      onChain({ version: 1n, transaction: TRANSACTIONS[0]![1], writeSet: writeSetBytes(entries as never) }),
    ]);
    const [decoded] = decodeTransactionPage(body, 1n);
    const kinds = decoded!.writes.map((w) => w.kind).sort();
    expect(kinds).toEqual([
      'access_path',
      'access_path',
      'code',
      'raw',
      'resource',
      'resource_group',
      'table_item',
      'table_item',
      'trading_native',
    ]);
    // The node's order: AccessPath keys by address, then table items by handle, raw keys, trading-native keys.
    expect(decoded!.writes.map((w) => w.key[0])).toEqual([0, 0, 0, 0, 0, 1, 1, 2, 3]);
  });

  it('marks the writes that delete their key, with metadata or without, and no other', () => {
    for (const [op, deletes] of WRITE_OPS.map(
      (op) => [op, 'Deletion' in op || 'DeletionWithMetadata' in op] as const,
    )) {
      const { body } = page([
        onChain({ version: 1n, transaction: TRANSACTIONS[0]![1], writeSet: writeSetBytes([[STATE_KEYS[0]!.key, op]]) }),
      ]);
      expect(decodeTransactionPage(body, 1n)[0]!.writes[0]!.deleted === true, Object.keys(op)[0]).toBe(deletes);
    }
  });

  it('reads an empty page as no transactions', () => {
    expect(decodeTransactionPage(Uint8Array.of(0), 5n)).toEqual([]);
  });

  it('gives each key its own bytes, which outlive the page', () => {
    const { body } = page([
      onChain({ version: 0n, transaction: TRANSACTIONS[0]![1], writeSet: writeSetBytes(writes(0) as never) }),
    ]);
    const [decoded] = decodeTransactionPage(body, 0n);
    const before = decoded!.writes.map((w) => w.key.toString('hex'));
    body.fill(0);
    expect(decoded!.writes.map((w) => w.key.toString('hex'))).toEqual(before);
  });

  it('reads a struct key whose type arguments wire/ cannot say as a resource all the same', () => {
    const tag = struct('m', 'R', [{ i64: true }, { Function: { args: [], results: [], abilities: 0 } }]).struct;
    const key = { AccessPath: { address: addr(3), path: Path.serialize({ Resource: tag } as never).toBytes() } };
    const { body } = page([
      onChain({ version: 0n, transaction: TRANSACTIONS[0]![1], writeSet: writeSetBytes([[key, { Deletion: true }]]) }),
    ]);
    expect(decodeTransactionPage(body, 0n)[0]!.writes).toEqual([
      { key: Buffer.from(stateKeyBytes(key)), kind: 'resource', address: '0x' + hex(addr(3)), deleted: true },
    ]);
  });
});
