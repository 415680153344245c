// api.md §3: the BCS view request body, {module: {address, name}, function, ty_args, args}.
import { bcs, type BcsType } from '@mysten/bcs';
import { BcsReader, BcsUndecodable } from './bcs-reader.js';
import { toHex } from './hex.js';
import { TYPE_TAG_VARIANTS, type TypeTag } from './move-type.js';

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

/** A type argument nested deeper than this under the request's own is refused (move-core-types' safe_serialize). */
const MAX_TYPE_DEPTH = 8;

function readTypeTag(r: BcsReader, depth: number): TypeTag {
  if (depth > MAX_TYPE_DEPTH) throw new BcsUndecodable('type tag nesting exceeded during deserialization');
  const tag = r.uleb();
  const kind = TYPE_TAG_VARIANTS[tag];
  if (kind === undefined)
    throw new BcsUndecodable(
      `invalid value: integer \`${tag}\`, expected variant index 0 <= i < ${TYPE_TAG_VARIANTS.length}`,
    );
  if (kind === 'vector') return { kind, of: readTypeTag(r, depth + 1) };
  if (kind !== 'struct') return { kind } as TypeTag;
  const address = toHex(r.fixed(32));
  // Names are not checked here, as a node's Identifier does not check what it deserializes: a name that no
  // module has is the node's to answer.
  const module = r.text();
  const name = r.text();
  return { kind, address, module, name, typeArgs: r.sequence(() => readTypeTag(r, depth + 1)) };
}

/** A BCS view request body, decoded, or why it does not decode (the bcs crate's words). */
export type ViewDecoding = { request: ViewRequest; reason?: undefined } | { request?: undefined; reason: string };

/**
 * Decodes a BCS view request as a node's bcs crate does: exactly one well-formed
 * request (no bytes left over, lengths in their shortest form, UTF-8 names, known
 * type tags), else why not, in the crate's words.
 */
export function decodeViewRequest(bytes: Uint8Array): ViewDecoding {
  const r = new BcsReader(bytes);
  let request: ViewRequest;
  try {
    const address = toHex(r.fixed(32));
    const module = r.text();
    const fn = r.text();
    const typeArgs = r.sequence(() => readTypeTag(r, 0));
    const args = r.sequence(() => r.byteVector());
    if (r.left > 0) throw new BcsUndecodable('remaining input');
    request = { address, module, function: fn, typeArgs, args };
  } catch (err) {
    if (err instanceof BcsUndecodable) return { reason: err.message };
    throw err;
  }
  // One request has one encoding, so one cache key: the bytes are exactly its encoding.
  if (!Buffer.from(encodeViewRequest(request)).equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    return { reason: 'the bytes are not the canonical encoding of the request' };
  }
  return { request };
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

export function encodeViewRequest(request: ViewRequest): Uint8Array {
  return ViewRequestBcs.serialize({
    module: { address: Array.from(Buffer.from(request.address.slice(2), 'hex')), name: request.module },
    function: request.function,
    tyArgs: request.typeArgs.map(toBcsTag),
    args: request.args.map((a) => Array.from(a)),
  }).toBytes();
}
