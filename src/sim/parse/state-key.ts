// A StateKey's BCS bytes as a node reads them (aptos-core
// types/src/state_store/state_key/inner.rs and access_path.rs): variant 0
// AccessPath {address, path: bytes}, 1 TableItem {handle, key: bytes}, 2 Raw(bytes),
// with no byte left over. An AccessPath's path bytes are bcs(Path): 0 Code(ModuleId
// {address, name}), 1 Resource(StructTag), 2 ResourceGroup(StructTag); a path that
// does not parse as one leaves the key an AccessPath all the same (`path: null`).
import { simHex } from './address.js';
import { BcsError, BcsInput, bcsTypeTag } from './bcs-input.js';
import type { SimTypeTag } from './type-tag.js';

export type SimStructTag = Extract<SimTypeTag, { kind: 'struct' }>;

type SimStatePath =
  | { kind: 'code'; address: string; module: string }
  | { kind: 'resource' | 'resource_group'; tag: SimStructTag };

export type SimStateKeyRead =
  | { kind: 'access_path'; address: string; path: SimStatePath | null }
  | { kind: 'table_item'; handle: string; key: Buffer }
  | { kind: 'raw'; bytes: Buffer };

const bytesOf = (input: BcsInput): Buffer => Buffer.from(input.bytesOf(input.length()));

function decodePath(bytes: Buffer): SimStatePath | null {
  const input = new BcsInput(bytes);
  try {
    const variant = input.uleb();
    let path: SimStatePath;
    if (variant === 0) {
      const address = simHex(input.bytesOf(32));
      path = { kind: 'code', address, module: input.string() };
    } else if (variant === 1 || variant === 2) {
      const address = simHex(input.bytesOf(32));
      const module = input.string();
      const name = input.string();
      const typeArgs = input.sequence(() => bcsTypeTag(input, 1));
      const tag: SimStructTag = { kind: 'struct', address, module, name, typeArgs };
      path = { kind: variant === 1 ? 'resource' : 'resource_group', tag };
    } else return null;
    input.end();
    return path;
  } catch (err) {
    if (err instanceof BcsError) return null;
    throw err;
  }
}

/** The StateKey the bytes hold, or null when they are not exactly one. */
export function decodeNodeStateKey(bytes: Uint8Array): SimStateKeyRead | null {
  const input = new BcsInput(bytes);
  try {
    const variant = input.uleb();
    let key: SimStateKeyRead;
    if (variant === 0) {
      const address = simHex(input.bytesOf(32));
      key = { kind: 'access_path', address, path: decodePath(bytesOf(input)) };
    } else if (variant === 1) {
      const handle = simHex(input.bytesOf(32));
      key = { kind: 'table_item', handle, key: bytesOf(input) };
    } else if (variant === 2) key = { kind: 'raw', bytes: bytesOf(input) };
    else return null;
    input.end();
    return key;
  } catch (err) {
    if (err instanceof BcsError) return null;
    throw err;
  }
}
