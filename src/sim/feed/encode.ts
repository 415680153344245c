// BCS of the transaction feed's parts, written from aptos-core's types
// (testsuite/generate-format/tests/staged/api.yaml, types/src/transaction/mod.rs,
// authenticator.rs, block_metadata_ext.rs, block_epilogue.rs, contract_event.rs,
// write_set.rs) and checked against real mainnet transactions
// (test/fixtures/feed-vectors.json). Apart from the product's decoder on purpose.
import { simAddressBytes } from '../parse/address.js';
import type { SimTypeTag } from '../parse/type-tag.js';
import { bcsBool, bcsBytes, bcsOption, bcsSeq, bcsString, bcsU32, bcsU64, uleb128 } from '../state/bcs.js';
import { simBcsTypeTag, simSaltedHash } from '../sparse/keys.js';

const tag = (variant: number, ...parts: Buffer[]): Buffer => Buffer.concat([uleb128(variant), ...parts]);

/** AccountAuthenticator::Ed25519 {public_key, signature} (each a byte vector). */
export const bcsAccountEd25519 = (publicKey: Buffer, signature: Buffer): Buffer =>
  tag(0, bcsBytes(publicKey), bcsBytes(signature));

/** TransactionAuthenticator: 0 Ed25519 {public_key, signature}. */
export const bcsEd25519Authenticator = (publicKey: Buffer, signature: Buffer): Buffer =>
  tag(0, bcsBytes(publicKey), bcsBytes(signature));

/** TransactionAuthenticator: 3 FeePayer {sender, secondary_signer_addresses, secondary_signers, fee_payer_address, fee_payer_signer}. */
export const bcsFeePayerAuthenticator = (sender: Buffer, feePayer: string, feePayerSigner: Buffer): Buffer =>
  tag(3, sender, bcsSeq([]), bcsSeq([]), simAddressBytes(feePayer), feePayerSigner);

/**
 * TransactionAuthenticator: 4 SingleSender {sender: AccountAuthenticator 2 SingleKey
 * {SingleKeyAuthenticator {AnyPublicKey 0 Ed25519 {public_key}, AnySignature 0 Ed25519 {signature}}}}.
 */
export const bcsSingleSenderAuthenticator = (publicKey: Buffer, signature: Buffer): Buffer =>
  tag(4, tag(2, tag(0, bcsBytes(publicKey)), tag(0, bcsBytes(signature))));

export interface SimUserTransaction {
  sender: string;
  sequenceNumber: bigint;
  /** EntryFunction {module: ModuleId {address, name}, function, ty_args, args} */
  module: { address: string; name: string };
  function: string;
  typeArgs: SimTypeTag[];
  args: Buffer[];
  maxGasAmount: bigint;
  gasUnitPrice: bigint;
  expirationTimestampSecs: bigint;
  chainId: number;
  /** a TransactionAuthenticator's BCS */
  authenticator: Buffer;
}

/** Transaction 0 UserTransaction(SignedTransaction {raw_txn, authenticator}); the payload is 2 EntryFunction. */
export function bcsUserTransaction(t: SimUserTransaction): Buffer {
  const payload = tag(
    2,
    simAddressBytes(t.module.address),
    bcsString(t.module.name),
    bcsString(t.function),
    bcsSeq(t.typeArgs.map(simBcsTypeTag)),
    bcsSeq(t.args.map(bcsBytes)),
  );
  const raw = Buffer.concat([
    simAddressBytes(t.sender),
    bcsU64(t.sequenceNumber),
    payload,
    bcsU64(t.maxGasAmount),
    bcsU64(t.gasUnitPrice),
    bcsU64(t.expirationTimestampSecs),
    Buffer.from([t.chainId]),
  ]);
  return tag(0, raw, t.authenticator);
}

export interface SimBlockMetadata {
  id: Buffer;
  epoch: bigint;
  round: bigint;
  proposer: string;
  previousBlockVotesBitvec: Buffer;
  failedProposerIndices: number[];
  timestampUsecs: bigint;
  randomness: { epoch: bigint; round: bigint; randomness: Buffer } | null;
}

/** Transaction 5 BlockMetadataExt, 1 V1 (BlockMetadataWithRandomness; Randomness {epoch, round, randomness}). */
export function bcsBlockMetadataExt(m: SimBlockMetadata): Buffer {
  const randomness =
    m.randomness === null
      ? null
      : Buffer.concat([bcsU64(m.randomness.epoch), bcsU64(m.randomness.round), bcsBytes(m.randomness.randomness)]);
  return tag(
    5,
    tag(1, m.id),
    bcsU64(m.epoch),
    bcsU64(m.round),
    simAddressBytes(m.proposer),
    bcsBytes(m.previousBlockVotesBitvec),
    bcsSeq(m.failedProposerIndices.map(bcsU32)),
    bcsU64(m.timestampUsecs),
    bcsOption(randomness),
  );
}

export interface SimBlockEnd {
  blockId: Buffer;
  gasLimitReached: boolean;
  outputLimitReached: boolean;
  effectiveGasUnits: bigint;
  approxOutputSize: bigint;
  /** V1's fee distribution (validator index → octas); absent: V0 */
  feeDistribution?: Array<[bigint, bigint]>;
}

/**
 * Transaction 6 BlockEpilogue: 0 V0 {block_id, block_end_info} or 1 V1 {…, fee_distribution:
 * FeeDistribution 0 V0 {amount: BTreeMap<u64, u64>}}; BlockEndInfo 0 V0 {two bools, two u64s}.
 */
export function bcsBlockEpilogue(e: SimBlockEnd): Buffer {
  const endInfo = tag(
    0,
    bcsBool(e.gasLimitReached),
    bcsBool(e.outputLimitReached),
    bcsU64(e.effectiveGasUnits),
    bcsU64(e.approxOutputSize),
  );
  if (e.feeDistribution === undefined) return tag(6, tag(0, e.blockId, endInfo));
  // A BCS map is sorted by its keys' bytes: a u64's little-endian bytes, not its value.
  const entries = e.feeDistribution
    .map(([index, amount]) => Buffer.concat([bcsU64(index), bcsU64(amount)]))
    .sort((a, b) => Buffer.compare(a.subarray(0, 8), b.subarray(0, 8)));
  return tag(6, tag(1, e.blockId, endInfo, tag(0, bcsSeq(entries))));
}

export type SimEvent =
  | { kind: 'v1'; creationNumber: bigint; account: string; sequenceNumber: bigint; type: SimTypeTag; data: Buffer }
  | { kind: 'v2'; type: SimTypeTag; data: Buffer };

/** ContractEvent 0 V1 {key: EventKey {creation_number, account_address}, sequence_number, type_tag, event_data} | 1 V2 {type_tag, event_data}. */
export function bcsEvent(e: SimEvent): Buffer {
  if (e.kind === 'v2') return tag(1, simBcsTypeTag(e.type), bcsBytes(e.data));
  return tag(
    0,
    bcsU64(e.creationNumber),
    simAddressBytes(e.account),
    bcsU64(e.sequenceNumber),
    simBcsTypeTag(e.type),
    bcsBytes(e.data),
  );
}

export interface SimTransactionInfo {
  gasUsed: bigint;
  transactionHash: Buffer;
  eventRootHash: Buffer;
  stateChangeHash: Buffer;
  stateCheckpointHash: Buffer | null;
  auxiliaryInfoHash: Buffer | null;
}

/** TransactionInfo 0 V0 {gas_used, status: ExecutionStatus 0 Success, the three hashes, two optional ones}. */
export function bcsTransactionInfo(i: SimTransactionInfo): Buffer {
  return tag(
    0,
    bcsU64(i.gasUsed),
    tag(0),
    i.transactionHash,
    i.eventRootHash,
    i.stateChangeHash,
    bcsOption(i.stateCheckpointHash),
    bcsOption(i.auxiliaryInfoHash),
  );
}

/** PersistedStateValueMetadata 1 V1 {slot_deposit, bytes_deposit, creation_time_usecs}. */
export interface SimValueMetadata {
  slotDeposit: bigint;
  bytesDeposit: bigint;
  creationTimeUsecs: bigint;
}

const bcsMetadata = (m: SimValueMetadata): Buffer =>
  tag(1, bcsU64(m.slotDeposit), bcsU64(m.bytesDeposit), bcsU64(m.creationTimeUsecs));

/**
 * WriteOp (PersistedWriteOp): 0 Creation(bytes), 1 Modification(bytes), 2 Deletion, and with
 * metadata 3 CreationWithMetadata {data, metadata}, 4 ModificationWithMetadata, 5 DeletionWithMetadata {metadata}.
 */
export function bcsWriteOp(
  op: 'creation' | 'modification' | 'deletion',
  value: Buffer | null,
  metadata: SimValueMetadata | null,
): Buffer {
  const base = op === 'creation' ? 0 : op === 'modification' ? 1 : 2;
  if (metadata === null) return value === null ? tag(base) : tag(base, bcsBytes(value));
  return value === null ? tag(base + 3, bcsMetadata(metadata)) : tag(base + 3, bcsBytes(value), bcsMetadata(metadata));
}

/** WriteSet 0 V0(map StateKey → WriteOp), entries sorted by their StateKeys' bytes (a BCS map). */
export function bcsWriteSet(entries: Array<{ stateKey: Buffer; op: Buffer }>): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(a.stateKey, b.stateKey));
  return tag(0, uleb128(sorted.length), ...sorted.flatMap((e) => [e.stateKey, e.op]));
}

/** TransactionOnChainData {version, transaction, info, events, accumulator_root_hash, changes}. */
export function bcsOnChainData(p: {
  version: bigint;
  transaction: Buffer;
  info: Buffer;
  events: Buffer[];
  accumulatorRootHash: Buffer;
  writeSet: Buffer;
}): Buffer {
  return Buffer.concat([bcsU64(p.version), p.transaction, p.info, bcsSeq(p.events), p.accumulatorRootHash, p.writeSet]);
}

/** "ACCUMULATOR_PLACEHOLDER_HASH", zero-padded to 32 bytes: the root of no leaves, and an empty subtree. */
export const SIM_ACCUMULATOR_PLACEHOLDER = Buffer.concat([
  Buffer.from('ACCUMULATOR_PLACEHOLDER_HASH'),
  Buffer.alloc(4),
]);

/**
 * event_root_hash: the Merkle accumulator (aptos-core types/src/proof/accumulator) over the
 * events' hashes (salt ContractEvent), internal nodes hashed with salt EventAccumulator, a
 * missing right subtree the placeholder. The product does not check it; no vector does either.
 */
export function simEventRootHash(events: Buffer[]): Buffer {
  if (events.length === 0) return SIM_ACCUMULATOR_PLACEHOLDER;
  let level = events.map((e) => simSaltedHash('ContractEvent', e));
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      next.push(simSaltedHash('EventAccumulator', level[i], level[i + 1] ?? SIM_ACCUMULATOR_PLACEHOLDER));
    }
    level = next;
  }
  return level[0];
}
