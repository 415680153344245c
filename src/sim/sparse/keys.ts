// StateKeys as a node serializes them (aptos-core types/src/state_store/state_key/inner.rs,
// types/src/access_path.rs, move-core-types language_storage.rs), the salted hashes of
// aptos-crypto hash.rs, and the node's spelling of addresses and types in JSON. Written
// apart from the product's encoder: a difference between the two shows in the tests.
import { createHash } from 'node:crypto';
import { parseNodeAddress, simAddressBytes } from '../parse/address.js';
import type { SimStructTag } from '../parse/state-key.js';
import { parseNodeTypeTag, type SimTypeTag } from '../parse/type-tag.js';
import { bcsBytes, bcsSeq, bcsString } from '../state/bcs.js';

const TYPE_TAG_VARIANT: Record<Exclude<SimTypeTag['kind'], 'vector' | 'struct'>, number> = {
  bool: 0,
  u8: 1,
  u64: 2,
  u128: 3,
  address: 4,
  signer: 5,
  u16: 8,
  u32: 9,
  u256: 10,
};

/** TypeTag: 0 bool, 1 u8, 2 u64, 3 u128, 4 address, 5 signer, 6 vector, 7 struct, 8 u16, 9 u32, 10 u256. */
export function simBcsTypeTag(tag: SimTypeTag): Buffer {
  if (tag.kind === 'vector') return Buffer.concat([Buffer.from([6]), simBcsTypeTag(tag.of)]);
  if (tag.kind === 'struct') return Buffer.concat([Buffer.from([7]), simBcsStructTag(tag)]);
  return Buffer.from([TYPE_TAG_VARIANT[tag.kind]]);
}

/** StructTag {address, module, name, type_args}. */
export function simBcsStructTag(tag: SimStructTag): Buffer {
  return Buffer.concat([
    simAddressBytes(tag.address),
    bcsString(tag.module),
    bcsString(tag.name),
    bcsSeq(tag.typeArgs.map(simBcsTypeTag)),
  ]);
}

/** A struct tag written in Move syntax; throws on anything else (the sim's own constants). */
export function simStructTag(text: string): SimStructTag {
  const tag = parseNodeTypeTag(text);
  if (tag === null || tag.kind !== 'struct') throw new Error(`not a struct tag: ${text}`);
  return tag;
}

export type SimStateKeySpec =
  | { kind: 'resource' | 'resource_group'; address: string; tag: SimStructTag }
  | { kind: 'code'; address: string; module: string }
  | { kind: 'table_item'; handle: string; key: Buffer };

const PATH_VARIANT = { code: 0, resource: 1, resource_group: 2 } as const;

/** The StateKey's BCS: 0 AccessPath {address, path: bytes(bcs(Path))} or 1 TableItem {handle, key: bytes}. */
export function simStateKey(spec: SimStateKeySpec): Buffer {
  if (spec.kind === 'table_item') {
    return Buffer.concat([Buffer.from([1]), simAddressBytes(spec.handle), bcsBytes(spec.key)]);
  }
  const path =
    spec.kind === 'code'
      ? Buffer.concat([Buffer.from([PATH_VARIANT.code]), simAddressBytes(spec.address), bcsString(spec.module)])
      : Buffer.concat([Buffer.from([PATH_VARIANT[spec.kind]]), simBcsStructTag(spec.tag)]);
  return Buffer.concat([Buffer.from([0]), simAddressBytes(spec.address), bcsBytes(path)]);
}

/** SHA3-256(SHA3-256("APTOS::" + type) ‖ parts): how aptos-crypto hashes a value of that type. */
export function simSaltedHash(type: string, ...parts: Uint8Array[]): Buffer {
  const salt = createHash('sha3-256').update(`APTOS::${type}`).digest();
  const hash = createHash('sha3-256').update(salt);
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** A StateKey's hash (the JSON `state_key_hash` of a change). */
export const simStateKeyHash = (bcs: Uint8Array): Buffer => simSaltedHash('StateKey', bcs);

/** An address as a node writes it in JSON and types: 0x0 … 0xf short, any other in full. */
export function simJsonAddress(address: string): string {
  const canonical = parseNodeAddress(address) ?? address;
  const trimmed = canonical.slice(2).replace(/^0+/, '');
  return trimmed.length <= 1 ? `0x${trimmed || '0'}` : canonical;
}

/** A type as a node renders it in JSON. */
export function simNodeTypeName(tag: SimTypeTag): string {
  if (tag.kind === 'vector') return `vector<${simNodeTypeName(tag.of)}>`;
  if (tag.kind !== 'struct') return tag.kind;
  const args = tag.typeArgs.length > 0 ? `<${tag.typeArgs.map(simNodeTypeName).join(', ')}>` : '';
  return `${simJsonAddress(tag.address)}::${tag.module}::${tag.name}${args}`;
}
