// TransactionInfo (aptos-core types/src/transaction/mod.rs): 0 V0 { gas_used: u64, status:
// ExecutionStatus, transaction_hash, event_root_hash, state_change_hash, state_checkpoint_hash:
// Option, auxiliary_info_hash: Option }, 1 V1 { the same five, then state_checkpoint_hash,
// hot_state_checkpoint_hash, auxiliary_info_hash, position_state_checkpoint_hash and
// placeholder1 to placeholder7, each an Option<HashValue> }.
import { type BcsCursor, UNKNOWN_VARIANT } from './cursor.js';

/** The Option<HashValue> fields after state_change_hash, per TransactionInfo variant. */
const OPTIONAL_HASHES = [2, 11];

/** The offset of state_change_hash after transaction_hash and event_root_hash. */
export const STATE_CHANGE_HASH_AFTER = 64;

/** Success and OutOfGas: statuses without fields, so transaction_hash follows the status byte. */
const STATUS_WITHOUT_FIELDS = 1;
/** From a TransactionInfo's first byte: the variant (1), gas_used (8), the status variant (1). */
const STATUS_AT = 9;
/** From transaction_hash to the first Option tag: the three hashes. */
const OPTIONS_AFTER = 32 * 3;

/**
 * What a few bytes say of a TransactionInfo at `at`, before it is read, for a search
 * over offsets: null where none can start (a variant or status this reader does not
 * know, or, when transaction_hash follows the status directly, either of the first two
 * Option tags no tag); otherwise the offset its transaction_hash would have, or -1 when
 * the status has fields of its own. Never null where readTransactionInfo would read.
 */
export function peekTransactionInfo(bytes: Uint8Array, at: number): number | null {
  if (bytes[at]! >= OPTIONAL_HASHES.length || bytes[at + STATUS_AT]! > 4) return null;
  if (bytes[at + STATUS_AT]! > STATUS_WITHOUT_FIELDS) return -1;
  const transactionHashAt = at + STATUS_AT + 1;
  // A tag past the bytes is left to the reader, which fails there.
  const firstTag = bytes[transactionHashAt + OPTIONS_AFTER];
  if (firstTag !== undefined && firstTag > 1) return null;
  const secondTag = bytes[transactionHashAt + OPTIONS_AFTER + 1 + (firstTag === 1 ? 32 : 0)];
  if (secondTag !== undefined && secondTag > 1) return null;
  return transactionHashAt;
}

/** Moves past the TransactionInfo at the cursor; the offset of its transaction_hash. */
export function readTransactionInfo(c: BcsCursor): number {
  const optional = OPTIONAL_HASHES[c.uleb()];
  if (optional === undefined) throw UNKNOWN_VARIANT;
  c.skip(8);
  skipExecutionStatus(c);
  const transactionHashAt = c.pos;
  c.skip(32 * 3);
  for (let i = 0; i < optional; i++) if (c.option()) c.skip(32);
  return transactionHashAt;
}

/**
 * ExecutionStatus: 0 Success, 1 OutOfGas, 2 MoveAbort { location, code: u64, info: Option<AbortInfo
 * { reason_name, description }> }, 3 ExecutionFailure { location, function: u16, code_offset: u16 },
 * 4 MiscellaneousError(Option<StatusCode>, a u64).
 */
function skipExecutionStatus(c: BcsCursor): void {
  switch (c.uleb()) {
    case 0:
    case 1:
      return;
    case 2:
      skipAbortLocation(c);
      c.skip(8);
      if (c.option()) {
        c.skipBytes();
        c.skipBytes();
      }
      return;
    case 3:
      skipAbortLocation(c);
      c.skip(4);
      return;
    case 4:
      if (c.option()) c.skip(8);
      return;
    default:
      throw UNKNOWN_VARIANT;
  }
}

/** AbortLocation: 0 Module(ModuleId { address, name }), 1 Script. */
function skipAbortLocation(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant === 0) {
    c.skip(32);
    c.skipBytes();
  } else if (variant !== 1) throw UNKNOWN_VARIANT;
}
