// Reading BCS as the bcs crate reads it: canonical ULEB128 lengths of at most
// 2^31 - 1, UTF-8 strings, TypeTag variants 0 to 10 nested at most 8 deep. The
// view request and the StateKey readers share it.
import { simHex } from './address.js';
import type { SimTypeTag } from './type-tag.js';

/** The bcs crate's error, in its words. */
export class BcsError extends Error {}

const MAX_SEQUENCE_LENGTH = 2 ** 31 - 1;
const MAX_TYPE_TAG_NESTING = 8;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** TypeTag's variants in their BCS order. */
const VARIANTS = ['bool', 'u8', 'u64', 'u128', 'address', 'signer', 'vector', 'struct', 'u16', 'u32', 'u256'] as const;

export class BcsInput {
  private at = 0;

  constructor(private readonly bytes: Uint8Array) {}

  bytesOf(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw new BcsError('unexpected end of input');
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** A ULEB128 u32, in its shortest form. */
  uleb(): number {
    let value = 0;
    for (let shift = 0; shift < 32; shift += 7) {
      const byte = this.bytesOf(1)[0];
      const digit = byte & 0x7f;
      value += digit * 2 ** shift;
      if ((byte & 0x80) === 0) {
        if (shift > 0 && digit === 0) throw new BcsError('ULEB128 encoding was not minimal in size');
        if (value > 0xffffffff) break;
        return value;
      }
    }
    throw new BcsError('ULEB128-encoded integer did not fit in the target size');
  }

  length(): number {
    const n = this.uleb();
    if (n > MAX_SEQUENCE_LENGTH) throw new BcsError(`exceeded max sequence length: ${n}`);
    return n;
  }

  string(): string {
    try {
      return UTF8.decode(this.bytesOf(this.length()));
    } catch (err) {
      if (err instanceof BcsError) throw err;
      throw new BcsError('malformed utf8');
    }
  }

  sequence<T>(element: () => T): T[] {
    const count = this.length();
    const out: T[] = [];
    for (let i = 0; i < count; i++) out.push(element());
    return out;
  }

  end(): void {
    if (this.at !== this.bytes.length) throw new BcsError('remaining input');
  }
}

/** A TypeTag at `nesting` levels below the top. */
export function bcsTypeTag(input: BcsInput, nesting: number): SimTypeTag {
  if (nesting > MAX_TYPE_TAG_NESTING) throw new BcsError('type tag nesting exceeded during deserialization');
  const index = input.uleb();
  const kind = VARIANTS[index];
  if (kind === undefined)
    throw new BcsError(`invalid value: integer \`${index}\`, expected variant index 0 <= i < ${VARIANTS.length}`);
  if (kind === 'vector') return { kind, of: bcsTypeTag(input, nesting + 1) };
  if (kind !== 'struct') return { kind };
  const address = simHex(input.bytesOf(32));
  const module = input.string();
  const name = input.string();
  return { kind, address, module, name, typeArgs: input.sequence(() => bcsTypeTag(input, nesting + 1)) };
}
