// Move's TypeTag as the node serializes it (move-core-types language_storage.rs): 0 bool,
// 1 u8, 2 u64, 3 u128, 4 address, 5 signer, 6 vector, 7 struct, 8 u16, 9 u32, 10 u256,
// 11 function (FunctionTag), 12-17 i8, i16, i32, i64, i128, i256. The TS SDK numbers the
// signed integers from 11 and has no function tag: its TypeTag is not this one.
import { TYPE_TAG_VARIANTS, type TypeTag } from '../wire/move-type.js';
import { type BcsCursor, MALFORMED, UNKNOWN_VARIANT } from './cursor.js';

/** Deeper than this is no type the VM makes (it refuses a nesting past 8 or so); it guards the stack. */
const MAX_DEPTH = 64;

/** Moves past a TypeTag. */
export function skipTypeTag(c: BcsCursor, depth = 0): void {
  if (depth > MAX_DEPTH) throw MALFORMED;
  const variant = c.uleb();
  if (variant <= 5 || (variant >= 8 && variant <= 10) || (variant >= 12 && variant <= 17)) return;
  if (variant === 6) return skipTypeTag(c, depth + 1);
  if (variant === 7) return skipStructTag(c, depth + 1);
  if (variant === 11) return skipFunctionTag(c, depth + 1);
  throw UNKNOWN_VARIANT;
}

/** Moves past a StructTag: address, module, name, type arguments. */
export function skipStructTag(c: BcsCursor, depth = 0): void {
  c.skip(32);
  c.skipBytes();
  c.skipBytes();
  const n = c.length();
  for (let i = 0; i < n; i++) skipTypeTag(c, depth + 1);
}

/** FunctionTag { args, results: Vec<FunctionParamOrReturnTag>, abilities: u8 }. */
function skipFunctionTag(c: BcsCursor, depth: number): void {
  for (let list = 0; list < 2; list++) {
    const n = c.length();
    for (let i = 0; i < n; i++) {
      // FunctionParamOrReturnTag: 0 Reference, 1 MutableReference, 2 Value, each of a TypeTag.
      if (c.uleb() > 2) throw UNKNOWN_VARIANT;
      skipTypeTag(c, depth + 1);
    }
  }
  c.skip(1);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A length-prefixed UTF-8 string, as the bcs crate reads a String. */
export function readText(c: BcsCursor): string {
  const n = c.length();
  const start = c.pos;
  c.skip(n);
  try {
    return UTF8.decode(c.bytes.subarray(start, start + n));
  } catch {
    throw MALFORMED;
  }
}

const address = (c: BcsCursor): string => {
  const start = c.pos;
  c.skip(32);
  return '0x' + Buffer.from(c.bytes.buffer, c.bytes.byteOffset + start, 32).toString('hex');
};

/** A TypeTag as wire/'s TypeTag, or null for one it cannot say (a function, a signed integer). */
function readTypeTag(c: BcsCursor, depth: number): TypeTag | null {
  if (depth > MAX_DEPTH) throw MALFORMED;
  const variant = c.uleb();
  if (variant === 6) {
    const of = readTypeTag(c, depth + 1);
    return of === null ? null : { kind: 'vector', of };
  }
  if (variant === 7) return readStructTag(c, depth + 1);
  const kind = TYPE_TAG_VARIANTS[variant];
  if (kind !== undefined) return { kind } as TypeTag;
  if (variant === 11) skipFunctionTag(c, depth + 1);
  else if (variant < 12 || variant > 17) throw UNKNOWN_VARIANT;
  return null;
}

/** A StructTag as wire/'s struct TypeTag (addresses in their canonical form), or null when wire/ cannot say it. */
export function readStructTag(c: BcsCursor, depth = 0): (TypeTag & { kind: 'struct' }) | null {
  const addr = address(c);
  const module = readText(c);
  const name = readText(c);
  const n = c.length();
  const typeArgs: TypeTag[] = [];
  let sayable = true;
  for (let i = 0; i < n; i++) {
    const arg = readTypeTag(c, depth + 1);
    if (arg === null) sayable = false;
    else typeArgs.push(arg);
  }
  return sayable ? { kind: 'struct', address: addr, module, name, typeArgs } : null;
}

/** The BCS bytes of values, written a field at a time. */
export class BcsWriter {
  private readonly out: number[] = [];

  uleb(n: number): this {
    let v = n;
    while (v >= 0x80) {
      this.out.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    this.out.push(v);
    return this;
  }

  raw(bytes: Uint8Array): this {
    for (const b of bytes) this.out.push(b);
    return this;
  }

  /** A canonical address (0x + 64 lower-case hex digits): its 32 bytes. */
  address(canonical: string): this {
    return this.raw(Buffer.from(canonical.slice(2), 'hex'));
  }

  bytes(bytes: Uint8Array): this {
    return this.uleb(bytes.length).raw(bytes);
  }

  text(text: string): this {
    return this.bytes(Buffer.from(text, 'utf8'));
  }

  typeTag(tag: TypeTag): this {
    switch (tag.kind) {
      case 'vector':
        return this.uleb(6).typeTag(tag.of);
      case 'struct':
        return this.uleb(7).structTag(tag);
      default:
        return this.uleb(TYPE_TAG_VARIANTS.indexOf(tag.kind));
    }
  }

  structTag(tag: TypeTag & { kind: 'struct' }): this {
    this.address(tag.address).text(tag.module).text(tag.name).uleb(tag.typeArgs.length);
    for (const arg of tag.typeArgs) this.typeTag(arg);
    return this;
  }

  done(): Buffer {
    return Buffer.from(this.out);
  }
}
