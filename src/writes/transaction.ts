// Transaction (aptos-core types/src/transaction/mod.rs), walked to its end: 0 User
// (SignedTransaction), 1 Genesis (WriteSetPayload), 2 BlockMetadata, 3 StateCheckpoint,
// 4 ValidatorTransaction (types/src/validator_txn.rs), 5 BlockMetadataExt
// (types/src/block_metadata_ext.rs), 6 BlockEpilogue (types/src/transaction/block_epilogue.rs).
import { skipTransactionAuthenticator } from './authenticator.js';
import { BcsCursor, UNKNOWN_VARIANT } from './cursor.js';
import { skipEvents } from './events.js';
import { skipRawTransaction, skipScript } from './payload.js';
import { skipWriteSet } from './write-set.js';

const TRANSACTION_KINDS = [
  'user',
  'genesis',
  'block_metadata',
  'state_checkpoint',
  'validator_transaction',
  'block_metadata_ext',
  'block_epilogue',
] as const;

export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

/** Moves past the Transaction at the cursor; its variant index. */
export function skipTransaction(c: BcsCursor): number {
  const variant = c.uleb();
  switch (variant) {
    case 0:
      skipSignedTransaction(c);
      break;
    case 1:
      skipWriteSetPayload(c);
      break;
    case 2:
      skipBlockMetadata(c);
      break;
    case 3:
      c.skip(32);
      break;
    case 4:
      skipValidatorTransaction(c);
      break;
    case 5: {
      // BlockMetadataExt: 0 V0(BlockMetadata), 1 V1(BlockMetadataWithRandomness)
      const version = c.uleb();
      if (version > 1) throw UNKNOWN_VARIANT;
      skipBlockMetadata(c);
      // randomness: Option<Randomness { metadata: RandMetadata { epoch, round }, randomness: bytes }>
      if (version === 1 && c.option()) {
        c.skip(16);
        c.skipBytes();
      }
      break;
    }
    case 6:
      skipBlockEpilogue(c);
      break;
    default:
      throw UNKNOWN_VARIANT;
  }
  return variant;
}

/** SignedTransaction { raw_txn: RawTransaction, authenticator: TransactionAuthenticator }. */
function skipSignedTransaction(c: BcsCursor): void {
  skipRawTransaction(c);
  skipTransactionAuthenticator(c);
}

/** WriteSetPayload: 0 Direct(ChangeSet { write_set, events }), 1 Script { execute_as, script }. */
function skipWriteSetPayload(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant === 0) {
    skipWriteSet(c);
    skipEvents(c);
  } else if (variant === 1) {
    c.skip(32);
    skipScript(c);
  } else throw UNKNOWN_VARIANT;
}

/**
 * BlockMetadata { id, epoch: u64, round: u64, proposer, previous_block_votes_bitvec: bytes,
 * failed_proposer_indices: Vec<u32>, timestamp_usecs: u64 }: the fields BlockMetadataWithRandomness starts with.
 */
function skipBlockMetadata(c: BcsCursor): void {
  c.skip(32 + 8 + 8 + 32);
  c.skipBytes();
  c.skipFixedSequence(4);
  c.skip(8);
}

/**
 * ValidatorTransaction: 0 DKGResult(DKGTranscript { metadata: { epoch: u64, author }, transcript_bytes }),
 * 1 ObservedJWKUpdate(QuorumCertifiedUpdate { update: ProviderJWKs { issuer: bytes, version: u64,
 * jwks: Vec<JWKMoveStruct { variant: Any { type_name: String, data: bytes } }> },
 * multi_sig: AggregateSignature { validator_bitmask: BitVec, sig: Option<bytes> } }).
 */
function skipValidatorTransaction(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant === 0) {
    c.skip(8 + 32);
    c.skipBytes();
  } else if (variant === 1) {
    c.skipBytes();
    c.skip(8);
    const n = c.length();
    for (let i = 0; i < n; i++) {
      c.skipBytes();
      c.skipBytes();
    }
    c.skipBytes();
    if (c.option()) c.skipBytes();
  } else throw UNKNOWN_VARIANT;
}

/**
 * BlockEpiloguePayload: 0 V0 { block_id, block_end_info }, 1 V1 { block_id, block_end_info,
 * fee_distribution: FeeDistribution (0 V0 { amount: BTreeMap<u64, u64> }) }; BlockEndInfo: 0 V0
 * { block_gas_limit_reached: bool, block_output_limit_reached: bool, block_effective_block_gas_units: u64,
 * block_approx_output_size: u64 }.
 */
function skipBlockEpilogue(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant > 1) throw UNKNOWN_VARIANT;
  c.skip(32);
  if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
  c.skipBool();
  c.skipBool();
  c.skip(16);
  if (variant === 1) {
    if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
    c.skipFixedSequence(16);
  }
}

/** Where the Transaction whose BCS starts at bytes[offset] ends, and its kind (for tools and tests). */
export function measureTransaction(bytes: Uint8Array, offset = 0): { kind: TransactionKind; end: number } {
  const c = new BcsCursor(bytes, offset);
  const variant = skipTransaction(c);
  return { kind: TRANSACTION_KINDS[variant]!, end: c.pos };
}

/** Where the SignedTransaction whose BCS starts at bytes[offset] ends (for tools and tests). */
export function measureSignedTransaction(bytes: Uint8Array, offset = 0): number {
  const c = new BcsCursor(bytes, offset);
  skipSignedTransaction(c);
  return c.pos;
}

/** Where the RawTransaction whose BCS starts at bytes[offset] ends (for tools and tests). */
export function measureRawTransaction(bytes: Uint8Array, offset = 0): number {
  const c = new BcsCursor(bytes, offset);
  skipRawTransaction(c);
  return c.pos;
}
