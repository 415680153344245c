// The sparse model's universe: the finite set of state keys it ever writes, and how
// often each is written. Everything outside it never changes. Its parts:
//   user accounts   0x1::account::Account, 0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>,
//                   0 to 2 0x1::sim::Slot{i} (deletable), and at every eighth a module
//                   (Code) or two, written rarely;
//   objects         the resource group 0x1::object::ObjectGroup holding
//                   0x1::object::ObjectCore and 0x1::fungible_asset::FungibleStore;
//   tables          u64 keys 0 … tableKeys-1 of each handle (deletable);
//   0x1             0x1::block::BlockResource and 0x1::timestamp::CurrentTimeMicroseconds,
//                   written by every block's metadata transaction; its Account and
//                   modules never change.
// A block of SIM_VERSIONS_PER_BLOCK versions is its metadata transaction, user
// transactions, and its epilogue (which writes nothing). A key is written once in every
// window of `every` user transactions, at an offset in the window that simMix picks.
import { simStateKey, simStructTag, type SimStateKeySpec } from './keys.js';
import { simHash } from '../state/tables.js';
import { SIM_VERSIONS_PER_BLOCK } from '../state/ledger.js';
import { SIM_MODULE_ADDRESS } from '../state/views.js';
import { simMix } from './mix.js';

export interface SimSparseOptions {
  /** user accounts (default 36) */
  accounts?: number;
  /** objects holding a resource group (default 12) */
  objects?: number;
  /** table handles (default 4) */
  tables?: number;
  /** keys per table, the u64s 0 … tableKeys-1 (default 32) */
  tableKeys?: number;
  /** the mean share of the universe's keys written per version (default 0.02: one in fifty) */
  writeRate?: number;
  /** the share of the accounts', objects' and tables' keys that are hot (default 0.05) */
  hotShare?: number;
  /** a hot key is written about once in this many versions (default 8) */
  hotEvery?: number;
}

type SimKeyKind = 'account' | 'coin_store' | 'slot' | 'object_group' | 'code' | 'table_item' | 'block' | 'timestamp';

/** user: once per window of `every` user transactions; block: by every block's metadata; never. */
type SimKeySchedule = { kind: 'user'; every: bigint } | { kind: 'block' } | { kind: 'never' };

export interface SimUniverseKey {
  /** its place in the universe */
  index: number;
  kind: SimKeyKind;
  spec: SimStateKeySpec;
  /** the StateKey's BCS, as a write set holds it */
  stateKey: Buffer;
  /** the account, object or 0x1 (AccessPath keys), or the table handle */
  owner: string;
  /** slot number (slot), module name (code), u64 key (table_item) */
  detail: number | string;
  hot: boolean;
  schedule: SimKeySchedule;
  /** written at times as a deletion (and created again by its next write) */
  deletable: boolean;
  /** its write ops carry state value metadata (storage deposits) */
  withMetadata: boolean;
}

export interface SimUniverse {
  keys: SimUniverseKey[];
  accounts: string[];
  objects: string[];
  tables: string[];
  tableKeys: number;
  /** the keys at each address (accounts, objects and 0x1), in StateKey order */
  byAddress: Map<string, SimUniverseKey[]>;
  /** StateKey hex → key */
  byStateKey: Map<string, SimUniverseKey>;
  /** table handle → its first key's index */
  tableBase: Map<string, number>;
  /** the windows, in user transactions: hot keys, cold keys, modules */
  every: { hot: bigint; cold: bigint; code: bigint };
}

export const SIM_COIN_STORE = simStructTag('0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>');
const SIM_ACCOUNT = simStructTag('0x1::account::Account');
const SIM_OBJECT_GROUP = simStructTag('0x1::object::ObjectGroup');
const BLOCK_RESOURCE = simStructTag('0x1::block::BlockResource');
const TIMESTAMP = simStructTag('0x1::timestamp::CurrentTimeMicroseconds');
const SYSTEM_MODULES = ['account', 'coin', 'sim'];

/** User transactions per block: all but its metadata transaction and its epilogue. */
export const SIM_USER_TXNS_PER_BLOCK = SIM_VERSIONS_PER_BLOCK - 2n;

const addressOf = (what: string, i: number): string =>
  '0x' + simHash(Buffer.from(`sim sparse ${what} ${i}`)).toString('hex');

function count(name: string, value: number | undefined, fallback: number, max = 100_000): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n < 0 || n > max)
    throw new RangeError(`${name} must be a whole number 0 to ${max}: ${n}`);
  return n;
}

function share(name: string, value: number | undefined, fallback: number): number {
  const x = value ?? fallback;
  if (!(x >= 0 && x <= 1)) throw new RangeError(`${name} must be from 0 to 1: ${x}`);
  return x;
}

type Draft = Omit<SimUniverseKey, 'index' | 'stateKey' | 'hot' | 'schedule'> & { schedule?: SimKeySchedule };

function drafts(accounts: string[], objects: string[], tables: string[], tableKeys: number): Draft[] {
  const out: Draft[] = [];
  const resource = (address: string, tag = SIM_ACCOUNT): SimStateKeySpec => ({ kind: 'resource', address, tag });
  const plain = { deletable: false, withMetadata: false };
  accounts.forEach((address, i) => {
    out.push({ kind: 'account', spec: resource(address), owner: address, detail: 0, ...plain });
    const coin = resource(address, SIM_COIN_STORE);
    out.push({ kind: 'coin_store', spec: coin, owner: address, detail: 0, deletable: false, withMetadata: true });
    for (let slot = 0; slot < i % 3; slot++) {
      const tag = simStructTag(`0x1::sim::Slot${slot}`);
      out.push({
        kind: 'slot',
        spec: resource(address, tag),
        owner: address,
        detail: slot,
        deletable: true,
        withMetadata: false,
      });
    }
    const modules = i % 16 === 1 ? ['m0', 'm1'] : i % 8 === 1 ? ['m0'] : [];
    for (const module of modules)
      out.push({ kind: 'code', spec: { kind: 'code', address, module }, owner: address, detail: module, ...plain });
  });
  for (const address of objects) {
    const spec: SimStateKeySpec = { kind: 'resource_group', address, tag: SIM_OBJECT_GROUP };
    out.push({ kind: 'object_group', spec, owner: address, detail: 0, deletable: false, withMetadata: true });
  }
  tables.forEach((handle, t) => {
    for (let k = 0; k < tableKeys; k++) {
      const key = Buffer.alloc(8);
      key.writeBigUInt64LE(BigInt(k));
      const withMetadata = simMix(t, k, 0x6d657461) % 2 === 0;
      out.push({
        kind: 'table_item',
        spec: { kind: 'table_item', handle, key },
        owner: handle,
        detail: k,
        deletable: true,
        withMetadata,
      });
    }
  });
  const system = SIM_MODULE_ADDRESS;
  const never: SimKeySchedule = { kind: 'never' };
  out.push({ kind: 'account', spec: resource(system), owner: system, detail: 0, ...plain, schedule: never });
  out.push({
    kind: 'block',
    spec: resource(system, BLOCK_RESOURCE),
    owner: system,
    detail: 0,
    ...plain,
    schedule: { kind: 'block' },
  });
  out.push({
    kind: 'timestamp',
    spec: resource(system, TIMESTAMP),
    owner: system,
    detail: 0,
    ...plain,
    schedule: { kind: 'block' },
  });
  for (const module of SYSTEM_MODULES)
    out.push({
      kind: 'code',
      spec: { kind: 'code', address: system, module },
      owner: system,
      detail: module,
      ...plain,
      schedule: never,
    });
  return out;
}

/**
 * The cold window (in user transactions) that makes the mean rate `writeRate` per version:
 * writeRate·U = blockKeys/B + (K/B)·(hot/hotEvery + cold/coldEvery + code/(4·coldEvery)).
 */
function coldEvery(
  total: number,
  hot: number,
  cold: number,
  code: number,
  blockKeys: number,
  writeRate: number,
  hotEvery: number,
): bigint {
  const perBlock = Number(SIM_VERSIONS_PER_BLOCK);
  const perUser =
    ((writeRate * total - blockKeys / perBlock) * perBlock) / Number(SIM_USER_TXNS_PER_BLOCK) - hot / hotEvery;
  if (cold + code === 0) return 1n;
  if (!(perUser > 0))
    throw new RangeError(`writeRate ${writeRate} leaves no writes for the cold keys: raise it, or lower hotShare`);
  return BigInt(Math.max(1, Math.round((cold + code / 4) / perUser)));
}

export function simSparseUniverse(options: SimSparseOptions = {}): SimUniverse {
  const accounts = Array.from({ length: count('accounts', options.accounts, 36) }, (_, i) => addressOf('account', i));
  const objects = Array.from({ length: count('objects', options.objects, 12) }, (_, i) => addressOf('object', i));
  const tables = Array.from({ length: count('tables', options.tables, 4, 1000) }, (_, i) => addressOf('table', i));
  const tableKeys = count('tableKeys', options.tableKeys, 32);
  const writeRate = share('writeRate', options.writeRate, 0.02);
  const hotShare = share('hotShare', options.hotShare, 0.05);
  const hotVersions = options.hotEvery ?? 8;
  if (!(hotVersions >= 1 && Number.isFinite(hotVersions)))
    throw new RangeError(`hotEvery must be at least 1: ${hotVersions}`);
  const hotEvery = Math.max(
    1,
    Math.round((hotVersions * Number(SIM_USER_TXNS_PER_BLOCK)) / Number(SIM_VERSIONS_PER_BLOCK)),
  );

  const all = drafts(accounts, objects, tables, tableKeys);
  const eligible = all.map((d, i) => ({ d, i })).filter(({ d }) => d.schedule === undefined && d.kind !== 'code');
  const hotCount = hotShare === 0 ? 0 : Math.max(1, Math.round(hotShare * eligible.length));
  const hot = new Set(
    eligible
      .sort((a, b) => simMix(a.i, 0x686f74) - simMix(b.i, 0x686f74))
      .slice(0, hotCount)
      .map(({ i }) => i),
  );
  const code = all.filter((d) => d.schedule === undefined && d.kind === 'code').length;
  const blockKeys = all.filter((d) => d.schedule?.kind === 'block').length;
  const cold = eligible.length - hot.size;
  const coldWindow = coldEvery(all.length, hot.size, cold, code, blockKeys, writeRate, hotEvery);
  const every = { hot: BigInt(hotEvery), cold: coldWindow, code: coldWindow * 4n };

  const keys: SimUniverseKey[] = all.map((d, index) => {
    const schedule: SimKeySchedule = d.schedule ?? {
      kind: 'user',
      every: hot.has(index) ? every.hot : d.kind === 'code' ? every.code : every.cold,
    };
    return { ...d, index, stateKey: simStateKey(d.spec), hot: hot.has(index), schedule };
  });
  const byAddress = new Map<string, SimUniverseKey[]>();
  const byStateKey = new Map<string, SimUniverseKey>();
  const tableBase = new Map<string, number>();
  for (const key of keys) {
    byStateKey.set(key.stateKey.toString('hex'), key);
    if (key.kind === 'table_item') {
      if (!tableBase.has(key.owner)) tableBase.set(key.owner, key.index);
    } else byAddress.set(key.owner, [...(byAddress.get(key.owner) ?? []), key]);
  }
  for (const list of byAddress.values()) list.sort((a, b) => Buffer.compare(a.stateKey, b.stateKey));
  return { keys, accounts, objects, tables, tableKeys, byAddress, byStateKey, tableBase, every };
}
