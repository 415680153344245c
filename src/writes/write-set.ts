// WriteSet (aptos-core types/src/write_set.rs): 0 V0(BTreeMap<StateKey, WriteOp>), as a
// count and then each key and its op. The map's order is StateKeyInner's derived Ord
// (variant, then its fields), which is not the order of the keys' bytes; nothing here
// depends on it. WriteOp (PersistedWriteOp): 0 Creation(bytes), 1 Modification(bytes),
// 2 Deletion, 3 CreationWithMetadata { data, metadata }, 4 ModificationWithMetadata
// { data, metadata }, 5 DeletionWithMetadata { metadata }; StateValueMetadata (persisted):
// 0 V0 { deposit, creation_time_usecs }, 1 V1 { slot_deposit, bytes_deposit, creation_time_usecs }.
import { type BcsCursor, UNKNOWN_VARIANT } from './cursor.js';
import { readStateKeyWrite, type StateKeyWrite } from './state-key.js';

/** Reads the WriteSet at the cursor: the keys it writes, in its order. */
export function readWriteSet(c: BcsCursor): StateKeyWrite[] {
  if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
  const n = c.length();
  const writes: StateKeyWrite[] = [];
  for (let i = 0; i < n; i++) {
    const write = readStateKeyWrite(c);
    if (skipWriteOp(c)) write.deleted = true;
    writes.push(write);
  }
  return writes;
}

/** Moves past a WriteSet (a genesis transaction carries one). */
export function skipWriteSet(c: BcsCursor): void {
  readWriteSet(c);
}

/** Moves past a WriteOp; true when it is a deletion. */
function skipWriteOp(c: BcsCursor): boolean {
  switch (c.uleb()) {
    case 0:
    case 1:
      c.skipBytes();
      return false;
    case 2:
      return true;
    case 3:
    case 4:
      c.skipBytes();
      skipMetadata(c);
      return false;
    case 5:
      skipMetadata(c);
      return true;
    default:
      throw UNKNOWN_VARIANT;
  }
}

function skipMetadata(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant === 0) c.skip(16);
  else if (variant === 1) c.skip(24);
  else throw UNKNOWN_VARIANT;
}
