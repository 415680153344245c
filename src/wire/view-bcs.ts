// SPEC §3: the BCS view request body, {module: {address, name}, function, ty_args, args}.
import { bcs, type BcsType } from '@mysten/bcs';
import { toHex } from './hex.js';
import { isIdentifier } from './function-id.js';
import type { TypeTag } from './move-type.js';

const Address = bcs.fixedArray(32, bcs.u8());

interface BcsTypeTag {
  [variant: string]: unknown;
}

// Variant order is the BCS tag byte (aptos TypeTag): bool=0 … u256=10.
// biome-ignore lint/suspicious/noExplicitAny: a recursive BCS type cannot name its own input and output types
const TypeTagBcs: BcsType<any, any> = bcs.enum('TypeTag', {
  Bool: null,
  U8: null,
  U64: null,
  U128: null,
  Address: null,
  Signer: null,
  Vector: bcs.lazy(() => TypeTagBcs),
  Struct: bcs.struct('StructTag', {
    address: Address,
    module: bcs.string(),
    name: bcs.string(),
    typeArgs: bcs.vector(bcs.lazy(() => TypeTagBcs)),
  }),
  U16: null,
  U32: null,
  U256: null,
});

const ViewRequestBcs = bcs.struct('ViewFunction', {
  module: bcs.struct('ModuleId', { address: Address, name: bcs.string() }),
  function: bcs.string(),
  tyArgs: bcs.vector(TypeTagBcs),
  args: bcs.vector(bcs.byteVector()),
});

export interface ViewRequest {
  /** canonical address of the module */
  address: string;
  module: string;
  function: string;
  typeArgs: TypeTag[];
  /** each argument's BCS bytes */
  args: Uint8Array[];
}

const SIMPLE: Record<string, TypeTag['kind']> = {
  Bool: 'bool',
  U8: 'u8',
  U16: 'u16',
  U32: 'u32',
  U64: 'u64',
  U128: 'u128',
  U256: 'u256',
  Address: 'address',
  Signer: 'signer',
};

function fromBcsTag(value: BcsTypeTag): TypeTag | null {
  const variant = (value as { $kind?: string }).$kind ?? Object.keys(value)[0];
  if (variant in SIMPLE) return { kind: SIMPLE[variant] } as TypeTag;
  if (variant === 'Vector') {
    const of = fromBcsTag(value.Vector as BcsTypeTag);
    return of && { kind: 'vector', of };
  }
  if (variant === 'Struct') {
    const s = value.Struct as { address: number[]; module: string; name: string; typeArgs: BcsTypeTag[] };
    if (!isIdentifier(s.module) || !isIdentifier(s.name)) return null;
    const typeArgs = s.typeArgs.map(fromBcsTag);
    if (typeArgs.some((t) => t === null)) return null;
    return { kind: 'struct', address: toHex(Uint8Array.from(s.address)), module: s.module, name: s.name, typeArgs: typeArgs as TypeTag[] };
  }
  return null;
}

function toBcsTag(tag: TypeTag): BcsTypeTag {
  switch (tag.kind) {
    case 'vector':
      return { Vector: toBcsTag(tag.of) };
    case 'struct':
      return {
        Struct: {
          address: Array.from(Buffer.from(tag.address.slice(2), 'hex')),
          module: tag.module,
          name: tag.name,
          typeArgs: tag.typeArgs.map(toBcsTag),
        },
      };
    default: {
      const variant = Object.keys(SIMPLE).find((k) => SIMPLE[k] === tag.kind)!;
      return { [variant]: true };
    }
  }
}

/**
 * Decodes a BCS view request. Null when the bytes are not exactly one well-formed
 * request (trailing bytes, bad identifiers, unknown type tags, non-canonical lengths).
 */
export function decodeViewRequest(bytes: Uint8Array): ViewRequest | null {
  let parsed: ReturnType<typeof ViewRequestBcs.parse>;
  try {
    parsed = ViewRequestBcs.parse(bytes);
  } catch {
    return null;
  }
  if (!isIdentifier(parsed.module.name) || !isIdentifier(parsed.function)) return null;
  const typeArgs = parsed.tyArgs.map((t: BcsTypeTag) => fromBcsTag(t));
  if (typeArgs.some((t: TypeTag | null) => t === null)) return null;
  const request: ViewRequest = {
    address: toHex(Uint8Array.from(parsed.module.address)),
    module: parsed.module.name,
    function: parsed.function,
    typeArgs: typeArgs as TypeTag[],
    args: parsed.args,
  };
  // Re-encoding must give the same bytes back: this refuses trailing bytes and
  // non-canonical encodings, so one request has one cache key.
  return Buffer.from(encodeViewRequest(request)).equals(Buffer.from(bytes)) ? request : null;
}

export function encodeViewRequest(request: ViewRequest): Uint8Array {
  return ViewRequestBcs.serialize({
    module: { address: Array.from(Buffer.from(request.address.slice(2), 'hex')), name: request.module },
    function: request.function,
    tyArgs: request.typeArgs.map(toBcsTag),
    args: request.args.map((a) => Array.from(a)),
  }).toBytes();
}
