// What POST /v1/view names, as a node reads it:
// - the JSON "function" is an EntryFunctionId: split at the last "::" into a
//   module id and a name, the module id at its first "::" into an address (read
//   by the API contract, docs/api.md §2: see address.ts) and a name; both names
//   must be Move identifiers;
// - a BCS body is a ViewFunction {module: {address, name}, function, ty_args, args},
//   decoded by the bcs crate: canonical ULEB128 lengths of at most 2^31 - 1, UTF-8
//   strings, TypeTag variants 0 to 10, type arguments nested at most 8 deep under
//   the top, and no byte left over. Names are not checked here (a node's Identifier
//   does not check what it deserializes): a name no module has is not found later.
import { parseNodeAddress, simHex } from './address.js';
import { isMoveIdentifier, type SimTypeTag } from './type-tag.js';

export interface SimViewCall {
  address: string;
  module: string;
  function: string;
  typeArgs: SimTypeTag[];
}

/** An entry function id, or null when a node refuses the text. */
export function parseNodeFunctionId(text: string): Omit<SimViewCall, 'typeArgs'> | null {
  const last = text.lastIndexOf('::');
  if (last < 0) return null;
  const moduleId = text.slice(0, last);
  const name = text.slice(last + 2);
  const first = moduleId.indexOf('::');
  if (first < 0) return null;
  const address = parseNodeAddress(moduleId.slice(0, first));
  const module = moduleId.slice(first + 2);
  if (address === null || !isMoveIdentifier(module) || !isMoveIdentifier(name)) return null;
  return { address, module, function: name };
}

/** The bcs crate's error, in its words. */
class BcsError extends Error {}

const MAX_SEQUENCE_LENGTH = 2 ** 31 - 1;
const MAX_TYPE_TAG_NESTING = 8;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** TypeTag's variants in their BCS order. */
const VARIANTS = ['bool', 'u8', 'u64', 'u128', 'address', 'signer', 'vector', 'struct', 'u16', 'u32', 'u256'] as const;

class BcsInput {
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

function typeTag(input: BcsInput, nesting: number): SimTypeTag {
  if (nesting > MAX_TYPE_TAG_NESTING) throw new BcsError('type tag nesting exceeded during deserialization');
  const index = input.uleb();
  const kind = VARIANTS[index];
  if (kind === undefined)
    throw new BcsError(`invalid value: integer \`${index}\`, expected variant index 0 <= i < ${VARIANTS.length}`);
  if (kind === 'vector') return { kind, of: typeTag(input, nesting + 1) };
  if (kind !== 'struct') return { kind };
  const address = simHex(input.bytesOf(32));
  const module = input.string();
  const name = input.string();
  return { kind, address, module, name, typeArgs: input.sequence(() => typeTag(input, nesting + 1)) };
}

/** A BCS ViewFunction and its arguments' bytes, or the bcs crate's reason it does not decode. */
export function decodeNodeViewFunction(
  bytes: Uint8Array,
): { call: SimViewCall; args: Uint8Array[] } | { reason: string } {
  const input = new BcsInput(bytes);
  try {
    const address = simHex(input.bytesOf(32));
    const module = input.string();
    const fn = input.string();
    const typeArgs = input.sequence(() => typeTag(input, 0));
    const args = input.sequence(() => input.bytesOf(input.length()));
    input.end();
    return { call: { address, module, function: fn, typeArgs }, args };
  } catch (err) {
    if (err instanceof BcsError) return { reason: err.message };
    throw err;
  }
}
