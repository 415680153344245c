// WriteSet (aptos-core types/src/write_set.rs): 0 V0(BTreeMap<StateKey, WriteOp>), as a
// count and then each key and its op. The map's order is StateKeyInner's derived Ord
// (variant, then its fields), which is not the order of the keys' bytes; nothing here
// depends on it. WriteOp (PersistedWriteOp): 0 Creation(bytes), 1 Modification(bytes),
// 2 Deletion, 3 CreationWithMetadata { data, metadata }, 4 ModificationWithMetadata
// { data, metadata }, 5 DeletionWithMetadata { metadata }; StateValueMetadata (persisted):
// 0 V0 { deposit, creation_time_usecs }, 1 V1 { slot_deposit, bytes_deposit, creation_time_usecs }.
import { type BcsCursor, UNKNOWN_VARIANT } from './cursor.js';
import { readStateKeyWrite, skipStateKey, type StateKeyWrite } from './state-key.js';

/** Reads the WriteSet at the cursor: the keys it writes, in its order. */
export function readWriteSet(c: BcsCursor): StateKeyWrite[] {
  const n = writeSetLength(c);
  const writes: StateKeyWrite[] = [];
  for (let i = 0; i < n; i++) {
    const write = readStateKeyWrite(c);
    if (skipWriteOp(c)) write.deleted = true;
    writes.push(write);
  }
  return writes;
}

/** Moves past a WriteSet, its keys unread: a genesis transaction's, or a search's for where one ends. */
export function skipWriteSet(c: BcsCursor): void {
  const n = writeSetLength(c);
  for (let i = 0; i < n; i++) {
    skipStateKey(c);
    skipWriteOp(c);
  }
}

/**
 * What two bytes say of a WriteSet at `at`, for a search over offsets: where it ends when
 * they are an empty one (V0 and no entries, which runs of zeros are), else -1 (it must be read).
 */
export function emptyWriteSetEnd(bytes: Uint8Array, at: number): number {
  return bytes[at] === 0 && bytes[at + 1] === 0 ? at + 2 : -1;
}

/** Moves past a WriteSet's variant (V0 alone is known); its count of entries. */
function writeSetLength(c: BcsCursor): number {
  if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
  return c.length();
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
