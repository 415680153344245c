// PLACEHOLDER until the codec branch lands (its encoder replaces this one).
import { createHash } from 'node:crypto';
import { addressBytes } from '../wire/address.js';
import type { TypeTag } from '../wire/move-type.js';

export type StructTypeTag = Extract<TypeTag, { kind: 'struct' }>;
export type StateKeySpec =
  | { kind: 'table_item'; handle: string; key: Uint8Array }
  | { kind: 'resource' | 'resource_group'; address: string; tag: StructTypeTag }
  | { kind: 'code'; address: string; module: string };

function uleb(n: number): Buffer {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}
const bytes = (b: Uint8Array): Buffer => Buffer.concat([uleb(b.length), b]);
const text = (s: string): Buffer => bytes(Buffer.from(s, 'utf8'));
const TAGS: Record<string, number> = {
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
function typeTag(tag: TypeTag): Buffer {
  if (tag.kind === 'vector') return Buffer.concat([Buffer.of(6), typeTag(tag.of)]);
  if (tag.kind === 'struct') return Buffer.concat([Buffer.of(7), structTag(tag)]);
  return Buffer.of(TAGS[tag.kind]!);
}
function structTag(tag: StructTypeTag): Buffer {
  return Buffer.concat([
    addressBytes(tag.address),
    text(tag.module),
    text(tag.name),
    uleb(tag.typeArgs.length),
    ...tag.typeArgs.map(typeTag),
  ]);
}
export function encodeStateKey(spec: StateKeySpec): Buffer {
  if (spec.kind === 'table_item') return Buffer.concat([Buffer.of(1), addressBytes(spec.handle), bytes(spec.key)]);
  const path =
    spec.kind === 'code'
      ? Buffer.concat([Buffer.of(0), addressBytes(spec.address), text(spec.module)])
      : Buffer.concat([Buffer.of(spec.kind === 'resource' ? 1 : 2), structTag(spec.tag)]);
  return Buffer.concat([Buffer.of(0), addressBytes(spec.address), bytes(path)]);
}
const SALT = createHash('sha3-256').update('APTOS::StateKey').digest();
export function stateKeyHash(bcs: Uint8Array): Buffer {
  return createHash('sha3-256').update(SALT).update(bcs).digest();
}
