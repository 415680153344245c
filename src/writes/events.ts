// ContractEvent (aptos-core types/src/contract_event.rs): 0 V1 { key: EventKey
// { creation_number: u64, account_address }, sequence_number: u64, type_tag, event_data },
// 1 V2 { type_tag, event_data }. Only where they end matters here.
import { type BcsCursor, UNKNOWN_VARIANT } from './cursor.js';
import { skipTypeTag } from './type-tag.js';

/** Moves past a Vec<ContractEvent>. */
export function skipEvents(c: BcsCursor): void {
  const n = c.length();
  for (let i = 0; i < n; i++) skipEvent(c);
}

function skipEvent(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant === 0) c.skip(8 + 32 + 8);
  else if (variant !== 1) throw UNKNOWN_VARIANT;
  skipTypeTag(c);
  c.skipBytes();
}
