// Reading BCS a value at a time from a request body, bounded by its bytes, as
// strictly as a node's bcs crate reads it: every read checks that the bytes are
// there, and a body that is not what it should be is refused with the crate's
// words for why (BcsUndecodable), so the proxy's refusal reads as a node's.

/** BCS lengths and enum tags are ULEB128 u32s, and a sequence holds at most 2^31 - 1 elements. */
const MAX_SEQUENCE_LENGTH = 2 ** 31 - 1;
const U32_MAX = 2 ** 32 - 1;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes that are not the BCS value they should be: `message` says why, as the bcs crate does. */
export class BcsUndecodable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BcsUndecodable';
  }
}

export class BcsReader {
  private at = 0;

  constructor(private readonly bytes: Uint8Array) {}

  /** Bytes not read yet. */
  get left(): number {
    return this.bytes.length - this.at;
  }

  /** `n` bytes, copied (the body's buffer is not kept). */
  fixed(n: number): Uint8Array {
    if (n > this.left) throw new BcsUndecodable('unexpected end of input');
    const out = this.bytes.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** A ULEB128 u32 (a length or an enum tag) in its shortest form: at most five bytes. */
  uleb(): number {
    let value = 0;
    for (let shift = 0; shift < 32; shift += 7) {
      if (this.left === 0) throw new BcsUndecodable('unexpected end of input');
      const byte = this.bytes[this.at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) {
        if (byte === 0 && shift > 0) throw new BcsUndecodable('ULEB128 encoding was not minimal in size');
        if (value > U32_MAX) break;
        return value;
      }
    }
    throw new BcsUndecodable('ULEB128-encoded integer did not fit in the target size');
  }

  /** The length of a sequence, a byte vector or a string. */
  length(): number {
    const n = this.uleb();
    if (n > MAX_SEQUENCE_LENGTH) throw new BcsUndecodable(`exceeded max sequence length: ${n}`);
    return n;
  }

  /** A length-prefixed byte vector. */
  byteVector(): Uint8Array {
    return this.fixed(this.length());
  }

  /** A length-prefixed UTF-8 string. */
  text(): string {
    const bytes = this.byteVector();
    try {
      return UTF8.decode(bytes);
    } catch {
      throw new BcsUndecodable('malformed utf8');
    }
  }

  /** A length-prefixed sequence, each element read by `element`. */
  sequence<T>(element: () => T): T[] {
    const count = this.length();
    const out: T[] = [];
    // Every element takes at least one byte: a count beyond the body fails at its end, not in a loop.
    for (let i = 0; i < count; i++) out.push(element());
    return out;
  }
}
