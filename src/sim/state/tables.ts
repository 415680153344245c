// Deterministic table contents: every (handle, key) pair either exists or not, and
// an existing item's value changes every SIM_VALUE_PERIOD versions. Tests compute
// the expected answer with simTableItem instead of hard-coding bytes.
import { createHash } from 'node:crypto';
import { simAddressBytes } from '../parse/address.js';
import { bcsU64 } from './bcs.js';

/** An item's value (and a balance) stays the same for this many versions. */
export const SIM_VALUE_PERIOD = 10n;

/** sha256 over the concatenated parts. */
export function simHash(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** The value period a version falls in; the u64 LE of it feeds the value hashes. */
export function simPeriod(version: bigint): Buffer {
  return bcsU64(version / SIM_VALUE_PERIOD);
}

/**
 * The raw stored bytes at `version`, or null when the item is absent.
 * Present iff sha256(handle ‖ key)[0] % 4 !== 0 (about three keys in four);
 * value = BCS u64 whose bytes are the first 8 of sha256(handle ‖ key ‖ u64le(version / 10)).
 * @param handle canonical 0x + 64 lower-case digits
 */
export function simTableItem(handle: string, key: Buffer, version: bigint): Buffer | null {
  const handleBytes = simAddressBytes(handle);
  if (simHash(handleBytes, key)[0] % 4 === 0) return null;
  return simHash(handleBytes, key, simPeriod(version)).subarray(0, 8);
}
