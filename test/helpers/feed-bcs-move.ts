// Move's values in transactions as the ledger serializes them (aptos-core's api.yaml
// golden), written with @mysten/bcs: part of the tests' own encoder of transaction pages
// (feed-bcs.ts), independent of the reader in src/writes/.
import { bcs, type BcsType } from '@mysten/bcs';

export const Address = bcs.bytes(32);
export const Hash = bcs.bytes(32);
export const Bytes = bcs.byteVector();

export const TypeTag: BcsType<any, any> = bcs.enum('TypeTag', {
  bool: null,
  u8: null,
  u64: null,
  u128: null,
  address: null,
  signer: null,
  vector: bcs.lazy(() => TypeTag),
  struct: bcs.lazy(() => StructTag),
  u16: null,
  u32: null,
  u256: null,
  Function: bcs.lazy(() => FunctionTag),
  i8: null,
  i16: null,
  i32: null,
  i64: null,
  i128: null,
  i256: null,
});
const ParamOrReturn = bcs.enum('FunctionParamOrReturnTag', {
  Reference: TypeTag,
  MutableReference: TypeTag,
  Value: TypeTag,
});
const FunctionTag = bcs.struct('FunctionTag', {
  args: bcs.vector(ParamOrReturn),
  results: bcs.vector(ParamOrReturn),
  abilities: bcs.u8(),
});
export const StructTag = bcs.struct('StructTag', {
  address: Address,
  module: bcs.string(),
  name: bcs.string(),
  type_args: bcs.vector(TypeTag),
});
export const ModuleId = bcs.struct('ModuleId', { address: Address, name: bcs.string() });

const TransactionArgument = bcs.enum('TransactionArgument', {
  U8: bcs.u8(),
  U64: bcs.u64(),
  U128: bcs.u128(),
  Address,
  U8Vector: Bytes,
  Bool: bcs.bool(),
  U16: bcs.u16(),
  U32: bcs.u32(),
  U256: bcs.u256(),
  Serialized: Bytes,
  // The signed integers, as their two's complement bytes.
  I8: bcs.bytes(1),
  I16: bcs.bytes(2),
  I32: bcs.bytes(4),
  I64: bcs.bytes(8),
  I128: bcs.bytes(16),
  I256: bcs.bytes(32),
});
export const Script = bcs.struct('Script', {
  code: Bytes,
  ty_args: bcs.vector(TypeTag),
  args: bcs.vector(TransactionArgument),
});
export const EntryFunction = bcs.struct('EntryFunction', {
  module: ModuleId,
  function: bcs.string(),
  ty_args: bcs.vector(TypeTag),
  args: bcs.vector(Bytes),
});
