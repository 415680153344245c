// Reading BCS a value at a time from a request body, bounded by its bytes: every
// read checks that the bytes are there, and a body that is not what it should be
// is refused with why, in the proxy's words (BcsUndecodable), never a library's.

/** BCS lengths and enum tags are ULEB128 u32s, and a sequence holds at most 2^31 - 1 elements. */
const MAX_LENGTH = 2 ** 31 - 1;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes that are not the BCS value they should be: `message` says why. */
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

  /** `n` bytes of `what`, copied (the body's buffer is not kept). */
  fixed(n: number, what: string): Uint8Array {
    if (n > this.left) throw new BcsUndecodable(`the body ends inside ${what}`);
    const out = this.bytes.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** A ULEB128 length or enum tag of `what`, in its shortest form. */
  uleb(what: string): number {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (this.left === 0) throw new BcsUndecodable(`the body ends inside ${what}`);
      const byte = this.bytes[this.at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (value > MAX_LENGTH) throw new BcsUndecodable(`a length in ${what} is beyond 2^31 - 1`);
      if ((byte & 0x80) === 0) {
        if (byte === 0 && shift > 0) throw new BcsUndecodable(`a length in ${what} is not in its shortest form`);
        return value;
      }
    }
  }

  /** A length-prefixed byte vector of `what`. */
  byteVector(what: string): Uint8Array {
    return this.fixed(this.uleb(what), what);
  }

  /** A length-prefixed UTF-8 string: `what`. */
  text(what: string): string {
    const bytes = this.byteVector(what);
    try {
      return UTF8.decode(bytes);
    } catch {
      throw new BcsUndecodable(`${what} is not UTF-8`);
    }
  }

  /** A length-prefixed sequence of `what`, each element read by `element`. */
  sequence<T>(what: string, element: () => T): T[] {
    const count = this.uleb(what);
    const out: T[] = [];
    // Every element takes at least one byte: a count beyond the body fails at its end, not in a loop.
    for (let i = 0; i < count; i++) out.push(element());
    return out;
  }
}
