// Real mainnet bytes (test/fixtures/feed-vectors.json: versions 3665938236-3665938238 as
// the node's JSON renders them, with the hashes the chain recorded). Each transaction is
// rebuilt from its fields by the tests' own encoder; the reader must walk it to its end
// and hash it to what the chain recorded, and so must a page of the three.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../src/wire/address.js';
import { parseTypeTag, type TypeTag } from '../../src/wire/move-type.js';
import { transactionHash, writeSetHash } from '../../src/writes/hashes.js';
import { decodeTransactionPage } from '../../src/writes/page.js';
import { decodeStateKey, encodeStateKey, type StateKeySpec, stateKeyHash } from '../../src/writes/state-key.js';
import { measureTransaction } from '../../src/writes/transaction.js';
import { Transaction } from '../helpers/feed-bcs.js';
import { onChain, page, writeSetBytes } from '../helpers/feed-build.js';

const vectors = JSON.parse(readFileSync(new URL('../fixtures/feed-vectors.json', import.meta.url), 'utf8'));
const [metadata, user, epilogue] = vectors.transactions;

const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/^0x/, ''), 'hex'));
const address = (text: string): Uint8Array => hex(parseAddress(text)!);

/** The transactions, rebuilt from the fields the node's JSON shows. */
const rebuilt = [
  Transaction.serialize({
    BlockMetadataExt: {
      V1: {
        id: hex(metadata.fields.id),
        epoch: metadata.fields.epoch,
        round: metadata.fields.round,
        proposer: address(metadata.fields.proposer),
        previous_block_votes_bitvec: hex(metadata.fields.previous_block_votes_bitvec),
        failed_proposer_indices: metadata.fields.failed_proposer_indices,
        timestamp_usecs: metadata.fields.timestamp_usecs,
        randomness: {
          metadata: { epoch: metadata.fields.randomness.epoch, round: metadata.fields.randomness.round },
          randomness: hex(metadata.fields.randomness.randomness),
        },
      },
    },
  }).toBytes(),
  (() => {
    const f = user.fields;
    const ed25519 = (a: { public_key: string; signature: string }) => ({
      Ed25519: { public_key: hex(a.public_key), signature: hex(a.signature) },
    });
    return Transaction.serialize({
      UserTransaction: {
        raw_txn: {
          sender: address(f.sender),
          sequence_number: f.sequence_number,
          payload: {
            EntryFunction: {
              module: { address: address(f.payload.module_address), name: f.payload.module_name },
              function: f.payload.function,
              ty_args: [],
              args: f.payload.arguments_bcs.map(hex),
            },
          },
          max_gas_amount: f.max_gas_amount,
          gas_unit_price: f.gas_unit_price,
          expiration_timestamp_secs: f.expiration_timestamp_secs,
          chain_id: f.chain_id,
        },
        authenticator: {
          FeePayer: {
            sender: ed25519(f.authenticator.sender),
            secondary_signer_addresses: [],
            secondary_signers: [],
            fee_payer_address: address(f.authenticator.fee_payer_address),
            fee_payer_signer: ed25519(f.authenticator.fee_payer_signer),
          },
        },
      },
    }).toBytes();
  })(),
  Transaction.serialize({
    BlockEpilogue: {
      V0: { block_id: hex(epilogue.fields.block_id), block_end_info: { V0: epilogue.fields.block_end_info } },
    },
  }).toBytes(),
];

const KINDS = ['block_metadata_ext', 'user', 'block_epilogue'];

/** The StateKeys of the vectors, as the routes name them. */
const keys: Array<{ spec: StateKeySpec; hash: string }> = vectors.stateKeys.map(
  (k: { kind: string; address: string; struct: string; state_key_hash: string }) => ({
    spec: {
      kind: k.kind.includes('ResourceGroup') ? 'resource_group' : 'resource',
      address: parseAddress(k.address)!,
      tag: parseTypeTag(k.struct) as TypeTag & { kind: 'struct' },
    },
    hash: k.state_key_hash.slice(2),
  }),
);

describe('real mainnet transactions', () => {
  it.each([0, 1, 2])('transaction %i is walked to its end and hashes to the recorded transaction_hash', (i) => {
    const bytes = rebuilt[i]!;
    expect(measureTransaction(bytes)).toEqual({ kind: KINDS[i], end: bytes.length });
    expect(transactionHash(bytes).toString('hex')).toBe(vectors.transactions[i].transaction_hash.slice(2));
  });

  it('the empty write set hashes to the recorded state_change_hash', () => {
    expect(writeSetHash(hex(vectors.emptyWriteSet.bcs)).toString('hex')).toBe(
      vectors.emptyWriteSet.state_change_hash.slice(2),
    );
  });

  it.each(keys.map((k, i) => [i, k] as const))('state key %i encodes to the bytes the chain hashed', (_, k) => {
    const bcs = encodeStateKey(k.spec);
    expect(stateKeyHash(bcs).toString('hex')).toBe(k.hash);
    expect(decodeStateKey(bcs)).toEqual(k.spec);
  });

  it('a page of the three, with their recorded hashes, decodes and verifies', () => {
    const start = BigInt(metadata.version);
    const writes = (specs: StateKeySpec[]) =>
      writeSetBytes(specs.map((s) => [{ AccessPath: accessPath(encodeStateKey(s)) }, { Modification: [1, 2, 3] }]));
    const { body } = page([
      onChain({
        version: start,
        transaction: rebuilt[0]!,
        transactionHash: hex(metadata.transaction_hash),
        writeSet: writes([keys[0]!.spec, keys[1]!.spec]),
      }),
      onChain({
        version: start + 1n,
        transaction: rebuilt[1]!,
        transactionHash: hex(user.transaction_hash),
        writeSet: writes([keys[2]!.spec, keys[3]!.spec, keys[4]!.spec]),
      }),
      onChain({
        version: start + 2n,
        transaction: rebuilt[2]!,
        transactionHash: hex(epilogue.transaction_hash),
        writeSet: hex(vectors.emptyWriteSet.bcs),
        stateChangeHash: hex(epilogue.state_change_hash),
      }),
    ]);
    const decoded = decodeTransactionPage(body, start);
    expect(decoded.map((t) => t.version)).toEqual([start, start + 1n, start + 2n]);
    const hashes = decoded.map((t) => t.writes.map((w) => stateKeyHash(w.key).toString('hex')).sort());
    expect(hashes).toEqual([
      [keys[0]!.hash, keys[1]!.hash].sort(),
      [keys[2]!.hash, keys[3]!.hash, keys[4]!.hash].sort(),
      [],
    ]);
    expect(decoded[1]!.writes.map((w) => w.kind).sort()).toEqual(['resource', 'resource_group', 'resource_group']);
  });
});

/** The AccessPath inside a StateKey's bytes, as the tests' encoder takes it: the test's own reading, not src/'s. */
function accessPath(key: Uint8Array): { address: Uint8Array; path: Uint8Array } {
  expect(key[0]).toBe(0);
  const pathLength = key[33]!;
  expect(key.length).toBe(34 + pathLength);
  return { address: key.slice(1, 33), path: key.slice(34) };
}
