// A user transaction's RawTransaction and payload (aptos-core types/src/transaction/mod.rs,
// script.rs, multisig.rs; move-core-types transaction_argument.rs), walked to their end.
import { type BcsCursor, UNKNOWN_VARIANT } from './cursor.js';
import { skipTypeTag } from './type-tag.js';

/** RawTransaction { sender, sequence_number: u64, payload, max_gas_amount, gas_unit_price, expiration_timestamp_secs: u64, chain_id: u8 }. */
export function skipRawTransaction(c: BcsCursor): void {
  c.skip(32 + 8);
  skipPayload(c);
  c.skip(8 + 8 + 8 + 1);
}

/**
 * TransactionPayload: 0 Script, 1 ModuleBundle (DeprecatedPayload { dummy_value: u64 }),
 * 2 EntryFunction, 3 Multisig, 4 Payload (TransactionPayloadInner). 5 EncryptedPayload
 * (its ciphertext and proofs are batch-encryption types) is left to the search by hash.
 */
function skipPayload(c: BcsCursor): void {
  switch (c.uleb()) {
    case 0:
      skipScript(c);
      return;
    case 1:
      c.skip(8);
      return;
    case 2:
      skipEntryFunction(c);
      return;
    case 3: // Multisig { multisig_address, transaction_payload: Option<MultisigTransactionPayload (0 EntryFunction)> }
      c.skip(32);
      if (c.option()) {
        if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
        skipEntryFunction(c);
      }
      return;
    case 4: // TransactionPayloadInner: 0 V1 { executable, extra_config }
      if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
      skipExecutable(c);
      skipExtraConfig(c);
      return;
    default:
      throw UNKNOWN_VARIANT;
  }
}

/** TransactionExecutable: 0 Script, 1 EntryFunction, 2 Empty. */
function skipExecutable(c: BcsCursor): void {
  switch (c.uleb()) {
    case 0:
      skipScript(c);
      return;
    case 1:
      skipEntryFunction(c);
      return;
    case 2:
      return;
    default:
      throw UNKNOWN_VARIANT;
  }
}

/** TransactionExtraConfig: 0 V1 { multisig_address: Option<AccountAddress>, replay_protection_nonce: Option<u64> }. */
function skipExtraConfig(c: BcsCursor): void {
  if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
  if (c.option()) c.skip(32);
  if (c.option()) c.skip(8);
}

/** EntryFunction { module: ModuleId { address, name }, function, ty_args: Vec<TypeTag>, args: Vec<bytes> }. */
function skipEntryFunction(c: BcsCursor): void {
  c.skip(32);
  c.skipBytes();
  c.skipBytes();
  skipTypeArguments(c);
  const n = c.length();
  for (let i = 0; i < n; i++) c.skipBytes();
}

/** Script { code, ty_args: Vec<TypeTag>, args: Vec<TransactionArgument> }. */
export function skipScript(c: BcsCursor): void {
  c.skipBytes();
  skipTypeArguments(c);
  const n = c.length();
  for (let i = 0; i < n; i++) skipTransactionArgument(c);
}

function skipTypeArguments(c: BcsCursor): void {
  const n = c.length();
  for (let i = 0; i < n; i++) skipTypeTag(c);
}

/**
 * The size of each TransactionArgument variant's value, -1 for a byte vector: 0 U8, 1 U64,
 * 2 U128, 3 Address, 4 U8Vector, 5 Bool, 6 U16, 7 U32, 8 U256, 9 Serialized, 10 I8, 11 I16,
 * 12 I32, 13 I64, 14 I128, 15 I256.
 */
const ARGUMENT_SIZE = [1, 8, 16, 32, -1, 1, 2, 4, 32, -1, 1, 2, 4, 8, 16, 32];

function skipTransactionArgument(c: BcsCursor): void {
  const variant = c.uleb();
  const size = ARGUMENT_SIZE[variant];
  if (size === undefined) throw UNKNOWN_VARIANT;
  if (variant === 5) c.skipBool();
  else if (size < 0) c.skipBytes();
  else c.skip(size);
}
