// The few BCS encodings the sim's answers are made of.

export function uleb128(n: number): Buffer {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return Buffer.from(out);
}

/** vector<u8>: a ULEB128 length, then the bytes. */
export const bcsBytes = (b: Buffer): Buffer => Buffer.concat([uleb128(b.length), b]);

export const bcsString = (s: string): Buffer => bcsBytes(Buffer.from(s, 'utf8'));

export function bcsU64(value: bigint): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(value);
  return out;
}
