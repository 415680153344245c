// StateKey (aptos-core types/src/state_store/state_key/inner.rs, StateKeyInner): 0
// AccessPath { address, path: bcs(Path) }, 1 TableItem { handle, key bytes }, 2 Raw(bytes),
// 3 TradingNative (TradingNativeKey: 0 Position { exchange, account, market }). Path
// (types/src/access_path.rs): 0 Code(ModuleId), 1 Resource(StructTag), 2 ResourceGroup
// (StructTag). The routes name the key a request reads with encodeStateKey; the write sets
// name the keys a version wrote: the same key is the same bytes.
import type { TypeTag } from '../wire/move-type.js';
import { BcsCursor, UNKNOWN_VARIANT, Undecodable } from './cursor.js';
import { stateKeyEncodingHash } from './hashes.js';
import { BcsWriter, readStructTag, readText, skipStructTag } from './type-tag.js';

/** What the routes encode a request's state key from. Addresses and handles canonical: 0x + 64 lower-case hex. */
export type StateKeySpec =
  | { kind: 'table_item'; handle: string; key: Uint8Array }
  | { kind: 'resource' | 'resource_group'; address: string; tag: TypeTag & { kind: 'struct' } }
  | { kind: 'code'; address: string; module: string };

/** One StateKey a version wrote, as the write set holds it. */
export interface StateKeyWrite {
  /** the StateKey's BCS bytes exactly as serialized in the write set (a copy: it holds no part of the page) */
  key: Buffer;
  /**
   * 'code' | 'resource' | 'resource_group': an AccessPath whose path parses as that Path variant;
   * 'access_path': an AccessPath whose path bytes do not parse as a Path; 'table_item' | 'raw';
   * 'trading_native': the trading-native subsystem's keys (no route reads them)
   */
  kind: StateKeyKind;
  /** AccessPath keys: the account address, '0x' + 64 lower-case hex digits */
  address?: string;
  /** the write removes the key (a Deletion or DeletionWithMetadata op); the write set sets it */
  deleted?: boolean;
}

type StateKeyKind = 'code' | 'resource' | 'resource_group' | 'access_path' | 'table_item' | 'raw' | 'trading_native';

const PATH_KINDS: ReadonlyArray<StateKeyKind> = ['code', 'resource', 'resource_group'];

/** The StateKey's BCS bytes, exactly as a write set holds that key. */
export function encodeStateKey(spec: StateKeySpec): Buffer {
  if (spec.kind === 'table_item') return new BcsWriter().uleb(1).address(spec.handle).bytes(spec.key).done();
  const path = new BcsWriter();
  if (spec.kind === 'code') path.uleb(0).address(spec.address).text(spec.module);
  else path.uleb(spec.kind === 'resource' ? 1 : 2).structTag(spec.tag);
  return new BcsWriter().uleb(0).address(spec.address).bytes(path.done()).done();
}

/**
 * Moves past the StateKey at the cursor and says what it is. Reads the write set's
 * keys, so it is on the feed's hot path: a Path is walked, not built.
 */
export function readStateKeyWrite(c: BcsCursor): StateKeyWrite {
  const bytes = c.bytes;
  const start = c.pos;
  const variant = skipStateKey(c);
  const key = copy(bytes, start, c.pos);
  if (variant === 0) {
    // AccessPath { address, path }: the variant is one byte, the address 32, then the path's length.
    const path = new BcsCursor(bytes, start + 33, c.pos);
    const pathLength = path.length();
    const address = '0x' + Buffer.from(bytes.buffer, bytes.byteOffset + start + 1, 32).toString('hex');
    return { key, kind: pathKind(bytes, path.pos, path.pos + pathLength), address };
  }
  return { key, kind: VARIANT_KINDS[variant]! };
}

/** The kind of a StateKey by its variant, an AccessPath's by its path. */
const VARIANT_KINDS: ReadonlyArray<StateKeyKind> = ['access_path', 'table_item', 'raw', 'trading_native'];

/** Moves past the StateKey at the cursor, as a search for where a write set ends does; its variant. */
export function skipStateKey(c: BcsCursor): number {
  const variant = c.uleb();
  if (variant === 0 || variant === 1) {
    c.skip(32);
    c.skipBytes();
    return variant;
  }
  if (variant === 2) {
    c.skipBytes();
    return variant;
  }
  // TradingNative: TradingNativeKey 0 Position { exchange, account, market }.
  if (variant === 3 && c.uleb() === 0) {
    c.skip(96);
    return variant;
  }
  throw UNKNOWN_VARIANT;
}

/**
 * The node's state_key_hash of the StateKey whose BCS bytes are `bcs`: SHA3-256 of the
 * seed SHA3-256("APTOS::StateKey") and the key's storage encoding (StateKeyInner::encode),
 * which is its BCS for an AccessPath; a TableItem's key bytes go without their length, a Raw
 * key's tag is 255, a TradingNative key's tag is 2. A RangeError for bytes that are no StateKey.
 */
export function stateKeyHash(bcs: Uint8Array): Buffer {
  let encoded: Uint8Array | null;
  try {
    encoded = storageEncoding(bcs);
  } catch (err) {
    if (!(err instanceof Undecodable)) throw err;
    encoded = null;
  }
  if (encoded === null) throw new RangeError('not the BCS bytes of a StateKey');
  return stateKeyEncodingHash(encoded);
}

/** StateKeyInner::encode of the key whose BCS bytes are `bcs`, or null when they are no StateKey. */
function storageEncoding(bcs: Uint8Array): Uint8Array | null {
  const c = new BcsCursor(bcs);
  const variant = c.uleb();
  const parts: Uint8Array[] = [];
  if (variant === 0) {
    // AccessPath: its tag and bcs(AccessPath) are its BCS.
    c.skip(32);
    c.skipBytes();
    parts.push(bcs);
  } else if (variant === 1) {
    // TableItem: its tag, the handle, and the key's bytes without their length.
    const handle = bcs.subarray(c.pos, c.pos + 32);
    c.skip(32);
    const n = c.length();
    parts.push(Uint8Array.of(1), handle, bcs.subarray(c.pos, c.pos + n));
    c.skip(n);
  } else if (variant === 2) {
    const n = c.length();
    parts.push(Uint8Array.of(255), bcs.subarray(c.pos, c.pos + n));
    c.skip(n);
  } else if (variant === 3 && c.uleb() === 0) {
    parts.push(Uint8Array.of(2, 0), bcs.subarray(c.pos, c.pos + 96));
    c.skip(96);
  } else return null;
  return c.left === 0 ? Buffer.concat(parts) : null;
}

function copy(bytes: Uint8Array, start: number, end: number): Buffer {
  return Buffer.from(bytes.subarray(start, end));
}

/** Which Path the bytes [start, end) are, all of them: else 'access_path'. */
function pathKind(bytes: Uint8Array, start: number, end: number): StateKeyKind {
  const c = new BcsCursor(bytes, start, end);
  try {
    const variant = c.uleb();
    if (variant === 0) {
      c.skip(32);
      readText(c);
    } else if (variant === 1 || variant === 2) skipStructTag(c);
    else return 'access_path';
    return c.pos === end ? PATH_KINDS[variant]! : 'access_path';
  } catch (err) {
    if (err instanceof Undecodable) return 'access_path';
    throw err;
  }
}

/**
 * The spec a StateKey's bytes were encoded from, or null when they are no key
 * encodeStateKey makes (a raw key, a path that is no Path, trailing bytes, a type
 * wire/ cannot say).
 */
export function decodeStateKey(bcs: Uint8Array): StateKeySpec | null {
  const c = new BcsCursor(bcs);
  try {
    const variant = c.uleb();
    if (variant === 1) {
      const handle = hexAddress(bcs, c);
      const n = c.length();
      const key = Uint8Array.from(bcs.subarray(c.pos, c.pos + n));
      c.skip(n);
      return c.left === 0 ? { kind: 'table_item', handle, key } : null;
    }
    if (variant !== 0) return null;
    const address = hexAddress(bcs, c);
    const pathLength = c.length();
    if (pathLength !== c.left) return null;
    const pathVariant = c.uleb();
    if (pathVariant === 0) {
      const moduleAddress = hexAddress(bcs, c);
      const module = readText(c);
      return c.left === 0 && moduleAddress === address ? { kind: 'code', address, module } : null;
    }
    if (pathVariant !== 1 && pathVariant !== 2) return null;
    const tag = readStructTag(c);
    if (tag === null || c.left !== 0) return null;
    return { kind: pathVariant === 1 ? 'resource' : 'resource_group', address, tag };
  } catch (err) {
    if (err instanceof Undecodable) return null;
    throw err;
  }
}

function hexAddress(bytes: Uint8Array, c: BcsCursor): string {
  const at = c.pos;
  c.skip(32);
  return '0x' + Buffer.from(bytes.buffer, bytes.byteOffset + at, 32).toString('hex');
}
