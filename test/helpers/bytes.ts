// Byte spellings the suites share.
import { createHash } from 'node:crypto';

/** 0x-prefixed lower-case hex, as keys and handles are written in requests. */
export const hex = (b: Buffer): string => '0x' + b.toString('hex');

/** A u64 in BCS: 8 bytes, little-endian. */
export function u64le(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
}

/** Byte arrays one after another, as one. */
export const concatBytes = (...parts: Array<ArrayLike<number>>): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => Array.from(p)));

/** sha256 of a text, in hex (how tenant keys are listed in a config). */
export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
