// The value of a universe key after its write in window w (w = -1: its value before
// any write), a function of (key, w) alone. Resources are the Move structs a node
// stores, in BCS (fields in declaration order) and rendered as its JSON (fields by
// name, u64s as strings): 0x1::account::Account, 0x1::coin::CoinStore, a resource
// group's map of members (aptos-core types/src/resource_group.rs: BTreeMap<StructTag,
// bytes>), 0x1::object::ObjectCore, 0x1::fungible_asset::FungibleStore, and the sim's own
// 0x1::sim::Slot{i} {value: u64}.
import type { SimStructTag } from '../parse/state-key.js';
import { simAddressBytes } from '../parse/address.js';
import { SIM_MODULE_BYTECODE } from '../state/abi.js';
import { simModules, type SimModule } from '../state/accounts.js';
import { bcsBool, bcsBytes, bcsU64, uleb128 } from '../state/bcs.js';
import { simHash } from '../state/tables.js';
import { simBcsStructTag, simJsonAddress, simNodeTypeName, simStructTag } from './keys.js';
import { simMix, simWords } from './mix.js';
import { SIM_COIN_STORE, type SimUniverseKey } from './universe.js';

interface MoveValue {
  bcs: Buffer;
  json: unknown;
}

const u64 = (value: bigint): MoveValue => ({ bcs: bcsU64(value), json: String(value) });
const address = (a: string): MoveValue => ({ bcs: simAddressBytes(a), json: simJsonAddress(a) });
const bool = (b: boolean): MoveValue => ({ bcs: bcsBool(b), json: b });
const bytes = (b: Buffer): MoveValue => ({ bcs: bcsBytes(b), json: '0x' + b.toString('hex') });
const NO_ADDRESS: MoveValue = { bcs: Buffer.from([0]), json: { vec: [] } };

/** A struct: BCS in declaration order, JSON members by name (a node renders a BTreeMap). */
function struct(fields: Array<[string, MoveValue]>): MoveValue {
  const json = Object.fromEntries([...fields].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, v]) => [n, v.json]));
  return { bcs: Buffer.concat(fields.map(([, v]) => v.bcs)), json };
}

const guid = (creationNum: bigint, addr: string): MoveValue =>
  struct([
    [
      'id',
      struct([
        ['creation_num', u64(creationNum)],
        ['addr', address(addr)],
      ]),
    ],
  ]);

const eventHandle = (counter: bigint, creationNum: bigint, addr: string): MoveValue =>
  struct([
    ['counter', u64(counter)],
    ['guid', guid(creationNum, addr)],
  ]);

export interface SimStateResource {
  tag: SimStructTag;
  /** the type as a node spells it in JSON */
  type: string;
  bytes: Buffer;
  data: unknown;
}

/** A key's value: the state bytes; the resources a node lists for it (a group's members); a module. */
export interface SimKeyState {
  bytes: Buffer;
  resources: SimStateResource[];
  module?: SimModule;
}

const ACCOUNT = simStructTag('0x1::account::Account');
const OBJECT_CORE = simStructTag('0x1::object::ObjectCore');
const FUNGIBLE_STORE = simStructTag('0x1::fungible_asset::FungibleStore');
const BLOCK_RESOURCE = simStructTag('0x1::block::BlockResource');
const TIMESTAMP = simStructTag('0x1::timestamp::CurrentTimeMicroseconds');
/** The metadata object every store holds (the chain's coin as a fungible asset). */
const FA_METADATA = '0x' + 'a'.padStart(64, '0');
const MODULUS = 1_000_000_000_000n;
/** ObjectCore's GUID creation number (the object's derived-GUID range). */
const OBJECT_GUID = 0x4000000000000n;
/** An ObjectCore changes owner on one group write in this many. */
const TRANSFER_EVERY = 4n;

const windowBytes = (window: bigint): Buffer => bcsU64(BigInt.asUintN(64, window + 1n));
const draw = (what: string, owner: string, ...more: Buffer[]): bigint =>
  simHash(Buffer.from(what), simAddressBytes(owner), ...more).readBigUInt64LE(0);

const resource = (tag: SimStructTag, value: MoveValue): SimStateResource => ({
  tag,
  type: simNodeTypeName(tag),
  bytes: value.bcs,
  data: value.json,
});

/** Whether a deletable key holds a value after window w: 3 in 4 at first, then 7 writes in 8. */
function present(key: SimUniverseKey, window: bigint): boolean {
  if (!key.deletable) return true;
  return window < 0n
    ? simMix(key.index, 0x696e6974) % 4 !== 0
    : simMix(key.index, ...simWords(window), 0x64656c) % 8 !== 0;
}

function account(owner: string, window: bigint): SimStateResource {
  const base = draw('seq', owner) % 1000n;
  const value = struct([
    ['authentication_key', bytes(simHash(Buffer.from('auth'), simAddressBytes(owner)))],
    ['sequence_number', u64(base + window + 1n)],
    ['guid_creation_num', u64(4n)],
    ['coin_register_events', eventHandle(0n, 0n, owner)],
    ['key_rotation_events', eventHandle(0n, 1n, owner)],
    ['rotation_capability_offer', struct([['for', NO_ADDRESS]])],
    ['signer_capability_offer', struct([['for', NO_ADDRESS]])],
  ]);
  return resource(ACCOUNT, value);
}

function coinStore(owner: string, window: bigint): SimStateResource {
  const value = struct([
    ['coin', struct([['value', u64(draw('coin', owner, windowBytes(window)) % MODULUS)]])],
    ['frozen', bool(false)],
    ['deposit_events', eventHandle(window + 1n, 2n, owner)],
    ['withdraw_events', eventHandle(window + 1n, 3n, owner)],
  ]);
  return resource(SIM_COIN_STORE, value);
}

/** A resource group's state: BCS of BTreeMap<StructTag, bytes>, sorted by each tag's BCS. */
function group(members: SimStateResource[]): Buffer {
  const entries = members
    .map((m) => ({ key: simBcsStructTag(m.tag), bytes: m.bytes }))
    .sort((a, b) => Buffer.compare(a.key, b.key));
  return Buffer.concat([uleb128(entries.length), ...entries.flatMap((e) => [e.key, bcsBytes(e.bytes)])]);
}

function objectGroup(owner: string, window: bigint): SimKeyState {
  const transfers = (window + 1n) / TRANSFER_EVERY;
  const core = struct([
    ['guid_creation_num', u64(OBJECT_GUID + 1n)],
    ['owner', address('0x' + simHash(Buffer.from('owner'), simAddressBytes(owner), bcsU64(transfers)).toString('hex'))],
    ['allow_ungated_transfer', bool(true)],
    ['transfer_events', eventHandle(transfers, OBJECT_GUID, owner)],
  ]);
  const store = struct([
    ['metadata', struct([['inner', address(FA_METADATA)]])],
    ['balance', u64(draw('store', owner, windowBytes(window)) % MODULUS)],
    ['frozen', bool(false)],
  ]);
  const resources = [resource(OBJECT_CORE, core), resource(FUNGIBLE_STORE, store)];
  return { bytes: group(resources), resources };
}

function module(key: SimUniverseKey, name: string, window: bigint): SimModule {
  // 0x1's modules are the period model's, and never change.
  const system = key.schedule.kind === 'never' ? simModules(key.owner).find((m) => m.name === name) : undefined;
  if (system !== undefined) return system;
  const bytecode = Buffer.concat([
    SIM_MODULE_BYTECODE.subarray(0, 8),
    simHash(simAddressBytes(key.owner), Buffer.from(name), windowBytes(window)),
  ]);
  const abi = { address: simJsonAddress(key.owner), name, friends: [], exposed_functions: [], structs: [] };
  return { name, bytecode, abi };
}

/** The key's value after its write in window w, or null when it is absent. */
export function simKeyState(
  key: SimUniverseKey,
  window: bigint,
  timestampAt: (version: bigint) => bigint,
  blockVersion: (window: bigint) => bigint,
): SimKeyState | null {
  if (!present(key, window)) return null;
  const one = (r: SimStateResource): SimKeyState => ({ bytes: r.bytes, resources: [r] });
  switch (key.kind) {
    case 'account':
      return one(account(key.owner, window));
    case 'coin_store':
      return one(coinStore(key.owner, window));
    case 'slot': {
      const tag = simStructTag(`0x1::sim::Slot${key.detail}`);
      const value = draw(`slot${key.detail}`, key.owner, windowBytes(window));
      return one(resource(tag, struct([['value', u64(value)]])));
    }
    case 'object_group':
      return objectGroup(key.owner, window);
    case 'code': {
      const found = module(key, String(key.detail), window);
      return { bytes: found.bytecode, resources: [], module: found };
    }
    case 'table_item': {
      const spec = key.spec as { handle: string; key: Buffer };
      return {
        bytes: simHash(simAddressBytes(spec.handle), spec.key, windowBytes(window)).subarray(0, 8),
        resources: [],
      };
    }
    case 'block': {
      const height = window < 0n ? 0n : window;
      const value = struct([
        ['height', u64(height)],
        ['epoch_interval', u64(7_200_000_000n)],
        ['new_block_events', eventHandle(height + 1n, 3n, key.owner)],
        ['update_epoch_interval_events', eventHandle(0n, 4n, key.owner)],
      ]);
      return one(resource(BLOCK_RESOURCE, value));
    }
    case 'timestamp': {
      const at = timestampAt(window < 0n ? 0n : blockVersion(window));
      return one(resource(TIMESTAMP, struct([['microseconds', u64(at)]])));
    }
  }
}
