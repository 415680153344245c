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

export const bcsBool = (b: boolean): Buffer => Buffer.from([b ? 1 : 0]);

export function bcsU32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value);
  return out;
}

/** vector<T>: a ULEB128 count, then each element's bytes. */
export const bcsSeq = (elements: Buffer[]): Buffer => Buffer.concat([uleb128(elements.length), ...elements]);

/** Option<T>: 0, or 1 and the value's bytes. */
export const bcsOption = (value: Buffer | null): Buffer =>
  value === null ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), value]);
