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
