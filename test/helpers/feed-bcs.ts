// The ledger's transaction types in BCS, written with @mysten/bcs from aptos-core's
// api.yaml golden: the tests' own encoder of transaction pages, independent of the
// reader in src/writes/ (nothing of it is imported here), so a misreading of the
// layout shows as a difference instead of hiding in both.
import { bcs } from '@mysten/bcs';
import { Address, Bytes, Hash, ModuleId, Script, StructTag, TypeTag } from './feed-bcs-move.js';
import { SignedTransaction } from './feed-bcs-user.js';

export const Path = bcs.enum('Path', { Code: ModuleId, Resource: StructTag, ResourceGroup: StructTag });
export const StateKey = bcs.enum('StateKey', {
  AccessPath: bcs.struct('AccessPath', { address: Address, path: Bytes }),
  TableItem: bcs.struct('TableItem', { handle: Address, key: Bytes }),
  Raw: Bytes,
  TradingNative: bcs.enum('TradingNativeKey', {
    Position: bcs.struct('Position', { exchange: Address, account: Address, market: Address }),
  }),
});
const Metadata = bcs.enum('StateValueMetadata', {
  V0: bcs.struct('V0', { deposit: bcs.u64(), creation_time_usecs: bcs.u64() }),
  V1: bcs.struct('V1', { slot_deposit: bcs.u64(), bytes_deposit: bcs.u64(), creation_time_usecs: bcs.u64() }),
});
export const WriteOp = bcs.enum('WriteOp', {
  Creation: Bytes,
  Modification: Bytes,
  Deletion: null,
  CreationWithMetadata: bcs.struct('CreationWithMetadata', { data: Bytes, metadata: Metadata }),
  ModificationWithMetadata: bcs.struct('ModificationWithMetadata', { data: Bytes, metadata: Metadata }),
  DeletionWithMetadata: bcs.struct('DeletionWithMetadata', { metadata: Metadata }),
});
export const WriteSet = bcs.enum('WriteSet', { V0: bcs.vector(bcs.tuple([StateKey, WriteOp])) });
const ContractEvent = bcs.enum('ContractEvent', {
  V1: bcs.struct('ContractEventV1', {
    key: bcs.struct('EventKey', { creation_number: bcs.u64(), account_address: Address }),
    sequence_number: bcs.u64(),
    type_tag: TypeTag,
    event_data: Bytes,
  }),
  V2: bcs.struct('ContractEventV2', { type_tag: TypeTag, event_data: Bytes }),
});
export const Events = bcs.vector(ContractEvent);
const AbortLocation = bcs.enum('AbortLocation', { Module: ModuleId, Script: null });
export const ExecutionStatus = bcs.enum('ExecutionStatus', {
  Success: null,
  OutOfGas: null,
  MoveAbort: bcs.struct('MoveAbort', {
    location: AbortLocation,
    code: bcs.u64(),
    info: bcs.option(bcs.struct('AbortInfo', { reason_name: bcs.string(), description: bcs.string() })),
  }),
  ExecutionFailure: bcs.struct('ExecutionFailure', {
    location: AbortLocation,
    function: bcs.u16(),
    code_offset: bcs.u16(),
  }),
  MiscellaneousError: bcs.option(bcs.u64()),
});
const infoFields = {
  gas_used: bcs.u64(),
  status: ExecutionStatus,
  transaction_hash: Hash,
  event_root_hash: Hash,
  state_change_hash: Hash,
  state_checkpoint_hash: bcs.option(Hash),
};
export const TransactionInfo = bcs.enum('TransactionInfo', {
  V0: bcs.struct('TransactionInfoV0', { ...infoFields, auxiliary_info_hash: bcs.option(Hash) }),
  V1: bcs.struct('TransactionInfoV1', {
    ...infoFields,
    hot_state_checkpoint_hash: bcs.option(Hash),
    auxiliary_info_hash: bcs.option(Hash),
    position_state_checkpoint_hash: bcs.option(Hash),
    placeholders: bcs.fixedArray(7, bcs.option(Hash)),
  }),
});
const blockMetadataFields = {
  id: Hash,
  epoch: bcs.u64(),
  round: bcs.u64(),
  proposer: Address,
  previous_block_votes_bitvec: Bytes,
  failed_proposer_indices: bcs.vector(bcs.u32()),
  timestamp_usecs: bcs.u64(),
};
const BlockMetadata = bcs.struct('BlockMetadata', blockMetadataFields);
const BlockEndInfo = bcs.enum('BlockEndInfo', {
  V0: bcs.struct('V0', {
    block_gas_limit_reached: bcs.bool(),
    block_output_limit_reached: bcs.bool(),
    block_effective_block_gas_units: bcs.u64(),
    block_approx_output_size: bcs.u64(),
  }),
});
export const Transaction = bcs.enum('Transaction', {
  UserTransaction: SignedTransaction,
  GenesisTransaction: bcs.enum('WriteSetPayload', {
    Direct: bcs.struct('ChangeSet', { write_set: WriteSet, events: Events }),
    Script: bcs.struct('Script', { execute_as: Address, script: Script }),
  }),
  BlockMetadata,
  StateCheckpoint: Hash,
  ValidatorTransaction: bcs.enum('ValidatorTransaction', {
    DKGResult: bcs.struct('DKGTranscript', {
      metadata: bcs.struct('DKGTranscriptMetadata', { epoch: bcs.u64(), author: Address }),
      transcript_bytes: Bytes,
    }),
    ObservedJWKUpdate: bcs.struct('QuorumCertifiedUpdate', {
      update: bcs.struct('ProviderJWKs', {
        issuer: Bytes,
        version: bcs.u64(),
        jwks: bcs.vector(
          bcs.struct('JWKMoveStruct', { variant: bcs.struct('Any', { type_name: bcs.string(), data: Bytes }) }),
        ),
      }),
      multi_sig: bcs.struct('AggregateSignature', {
        validator_bitmask: bcs.struct('BitVec', { inner: Bytes }),
        sig: bcs.option(Bytes),
      }),
    }),
  }),
  BlockMetadataExt: bcs.enum('BlockMetadataExt', {
    V0: BlockMetadata,
    V1: bcs.struct('BlockMetadataWithRandomness', {
      ...blockMetadataFields,
      randomness: bcs.option(
        bcs.struct('Randomness', {
          metadata: bcs.struct('RandMetadata', { epoch: bcs.u64(), round: bcs.u64() }),
          randomness: Bytes,
        }),
      ),
    }),
  }),
  BlockEpilogue: bcs.enum('BlockEpiloguePayload', {
    V0: bcs.struct('V0', { block_id: Hash, block_end_info: BlockEndInfo }),
    V1: bcs.struct('V1', {
      block_id: Hash,
      block_end_info: BlockEndInfo,
      fee_distribution: bcs.enum('FeeDistribution', {
        V0: bcs.struct('V0', { amount: bcs.vector(bcs.tuple([bcs.u64(), bcs.u64()])) }),
      }),
    }),
  }),
});
