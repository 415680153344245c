// The sim's feed encoder against real mainnet bytes (test/fixtures/feed-vectors.json):
// fed each recorded transaction's fields, it rebuilds BCS whose hash is the one the
// chain recorded; likewise the empty write set and each StateKey.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  bcsAccountEd25519,
  bcsBlockEpilogue,
  bcsBlockMetadataExt,
  bcsFeePayerAuthenticator,
  bcsUserTransaction,
  bcsWriteSet,
  SIM_ACCUMULATOR_PLACEHOLDER,
  simEventRootHash,
} from '../../src/sim/feed/encode.js';
import { simSaltedHash, simStateKey, simStateKeyHash, simStructTag } from '../../src/sim/index.js';
import { parseNodeAddress } from '../../src/sim/parse/address.js';
import { aptosHash } from '../helpers/feed-page.js';

const vectors = JSON.parse(readFileSync(new URL('../fixtures/feed-vectors.json', import.meta.url), 'utf8'));
const bytes = (hex: string): Buffer => Buffer.from(hex.replace(/^0x/, ''), 'hex');
const address = (text: string): string => parseNodeAddress(text) as string;
const hashOf = (kind: string) => vectors.transactions.find((t: { kind: string }) => t.kind.includes(kind));

describe('the feed encoder rebuilds the recorded mainnet hashes', () => {
  it('salts as aptos-crypto does: SHA3-256(SHA3-256("APTOS::" + type) ‖ bcs)', () => {
    expect(vectors.hashSalts).toEqual({
      transaction: 'APTOS::Transaction',
      writeSet: 'APTOS::WriteSet',
      stateKey: 'APTOS::StateKey',
    });
    const sample = Buffer.from('any bytes');
    expect(simSaltedHash('Transaction', sample)).toEqual(aptosHash('Transaction', sample));
  });

  it('BlockMetadataExt::V1: its transaction_hash', () => {
    const { fields, transaction_hash } = hashOf('BlockMetadataExt');
    const bcs = bcsBlockMetadataExt({
      id: bytes(fields.id),
      epoch: BigInt(fields.epoch),
      round: BigInt(fields.round),
      proposer: address(fields.proposer),
      previousBlockVotesBitvec: bytes(fields.previous_block_votes_bitvec),
      failedProposerIndices: fields.failed_proposer_indices,
      timestampUsecs: BigInt(fields.timestamp_usecs),
      randomness: {
        epoch: BigInt(fields.randomness.epoch),
        round: BigInt(fields.randomness.round),
        randomness: bytes(fields.randomness.randomness),
      },
    });
    expect('0x' + simSaltedHash('Transaction', bcs).toString('hex')).toBe(transaction_hash);
  });

  it('a fee-payer entry-function user transaction: its transaction_hash', () => {
    const { fields, transaction_hash } = hashOf('FeePayer');
    const { authenticator: auth, payload } = fields;
    expect(auth.secondary_signers).toEqual([]);
    const signer = (s: { public_key: string; signature: string }): Buffer =>
      bcsAccountEd25519(bytes(s.public_key), bytes(s.signature));
    const bcs = bcsUserTransaction({
      sender: address(fields.sender),
      sequenceNumber: BigInt(fields.sequence_number),
      module: { address: address(payload.module_address), name: payload.module_name },
      function: payload.function,
      typeArgs: payload.type_arguments,
      args: payload.arguments_bcs.map(bytes),
      maxGasAmount: BigInt(fields.max_gas_amount),
      gasUnitPrice: BigInt(fields.gas_unit_price),
      expirationTimestampSecs: BigInt(fields.expiration_timestamp_secs),
      chainId: fields.chain_id,
      authenticator: bcsFeePayerAuthenticator(
        signer(auth.sender),
        address(auth.fee_payer_address),
        signer(auth.fee_payer_signer),
      ),
    });
    expect('0x' + simSaltedHash('Transaction', bcs).toString('hex')).toBe(transaction_hash);
  });

  it('BlockEpilogue::V0: its transaction_hash, and its empty write set’s state_change_hash', () => {
    const { fields, transaction_hash, state_change_hash } = hashOf('BlockEpilogue');
    const end = fields.block_end_info;
    const bcs = bcsBlockEpilogue({
      blockId: bytes(fields.block_id),
      gasLimitReached: end.block_gas_limit_reached,
      outputLimitReached: end.block_output_limit_reached,
      effectiveGasUnits: BigInt(end.block_effective_block_gas_units),
      approxOutputSize: BigInt(end.block_approx_output_size),
    });
    expect('0x' + simSaltedHash('Transaction', bcs).toString('hex')).toBe(transaction_hash);
    const empty = bcsWriteSet([]);
    expect('0x' + empty.toString('hex')).toBe(vectors.emptyWriteSet.bcs);
    expect('0x' + simSaltedHash('WriteSet', empty).toString('hex')).toBe(vectors.emptyWriteSet.state_change_hash);
    expect(state_change_hash).toBe(vectors.emptyWriteSet.state_change_hash);
  });

  it('each StateKey (resources and resource groups): its state_key_hash', () => {
    expect(vectors.stateKeys.length).toBeGreaterThan(0);
    for (const key of vectors.stateKeys) {
      const kind = key.kind.includes('ResourceGroup') ? 'resource_group' : 'resource';
      const bcs = simStateKey({ kind, address: address(key.address), tag: simStructTag(key.struct) });
      expect('0x' + simStateKeyHash(bcs).toString('hex'), key.struct).toBe(key.state_key_hash);
    }
  });

  it('an event root hash: the placeholder with no events, one event’s hash alone', () => {
    expect(simEventRootHash([])).toEqual(SIM_ACCUMULATOR_PLACEHOLDER);
    expect('0x' + SIM_ACCUMULATOR_PLACEHOLDER.toString('hex')).toBe(
      '0x414343554d554c41544f525f504c414345484f4c4445525f4841534800000000',
    );
    const event = Buffer.from([1, 1, 0]);
    expect(simEventRootHash([event])).toEqual(aptosHash('ContractEvent', event));
  });
});
