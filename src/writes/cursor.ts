// Reading the ledger's BCS a field at a time, to find where each value ends. The
// readers skip what they need not keep; every read checks its bytes are there.
// Layouts follow aptos-core's testsuite/generate-format/tests/staged/api.yaml.

/** Why bytes did not read as the value they should be. */
export type UndecodableKind = 'truncated' | 'malformed' | 'unknown_variant';

/**
 * Bytes that are not the value they should be. The three are made once and thrown
 * as they are: a search over offsets fails many reads, and none needs a stack.
 */
export class Undecodable extends Error {
  constructor(readonly kind: UndecodableKind) {
    super(kind);
    this.name = 'Undecodable';
  }
}

const TRUNCATED = new Undecodable('truncated');
export const MALFORMED = new Undecodable('malformed');
export const UNKNOWN_VARIANT = new Undecodable('unknown_variant');

/** BCS sequences hold at most 2^31 - 1 elements (the bcs crate's MAX_SEQUENCE_LENGTH). */
const MAX_SEQUENCE_LENGTH = 2 ** 31 - 1;

export class BcsCursor {
  /** The offset of the next byte to read. */
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    pos = 0,
    /** The offset past the last byte this cursor may read. */
    readonly end = bytes.length,
  ) {
    this.pos = pos;
  }

  get left(): number {
    return this.end - this.pos;
  }

  u8(): number {
    if (this.pos >= this.end) throw TRUNCATED;
    return this.bytes[this.pos++]!;
  }

  /** Moves past `n` bytes. */
  skip(n: number): void {
    if (n > this.end - this.pos) throw TRUNCATED;
    this.pos += n;
  }

  /** A ULEB128 u32 (an enum variant or a length) in its shortest form. */
  uleb(): number {
    const bytes = this.bytes;
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) throw TRUNCATED;
      const byte = bytes[this.pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) {
        if ((byte === 0 && shift > 0) || value > 0xffff_ffff) throw MALFORMED;
        return value;
      }
    }
    throw MALFORMED;
  }

  /** The element count of a sequence, or the byte count of a byte vector or string. */
  length(): number {
    const n = this.uleb();
    if (n > MAX_SEQUENCE_LENGTH) throw MALFORMED;
    return n;
  }

  /** Moves past a length-prefixed byte vector or string. */
  skipBytes(): void {
    this.skip(this.length());
  }

  /** An Option's tag: whether a value follows. */
  option(): boolean {
    const tag = this.u8();
    if (tag > 1) throw MALFORMED;
    return tag === 1;
  }

  /** Moves past a bool, which is 0 or 1. */
  skipBool(): void {
    if (this.u8() > 1) throw MALFORMED;
  }

  /** Moves past a sequence whose elements are `size` bytes each. */
  skipFixedSequence(size: number): void {
    const n = this.length();
    this.skip(n * size);
  }

  /** Moves past a sequence, each element by `element`. */
  skipSequence(element: (c: BcsCursor) => void): void {
    const n = this.length();
    // Every element is at least one byte: a count beyond the bytes fails at their end.
    for (let i = 0; i < n; i++) element(this);
  }
}
