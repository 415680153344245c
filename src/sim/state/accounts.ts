// The simulated accounts: which exist, their resources and modules, and balances,
// each a deterministic function of (address, version) like the table items, so
// tests compute expectations instead of hard-coding bytes. Values change every
// SIM_VALUE_PERIOD versions.
import { simAddressBytes } from '../parse/address.js';
import { SIM_MODULE_BYTECODE, simModuleAbi } from './abi.js';
import { simHash, simPeriod } from './tables.js';
import { simBalance, SIM_MODULE_ADDRESS, SIM_MODULE_NAME } from './views.js';

// Types are shown with short addresses, as a node renders them.
export const SIM_COIN = '0x1::aptos_coin::AptosCoin';
const ACCOUNT_TYPE = '0x1::account::Account';
const COIN_STORE_TYPE = `0x1::coin::CoinStore<${SIM_COIN}>`;

/** 0x1 always; any other address iff sha256(address)[0] % 8 !== 0 (seven in eight). */
export function simAccountExists(address: string): boolean {
  return address === SIM_MODULE_ADDRESS || simHash(simAddressBytes(address))[0] % 8 !== 0;
}

const SIM_COIN_CANONICAL = `${SIM_MODULE_ADDRESS}::aptos_coin::AptosCoin`;

const u64 = (hash: Buffer): bigint => hash.readBigUInt64LE(0) % 1_000_000_000n;

export function simSequenceNumber(address: string, version: bigint): bigint {
  return (u64(simHash(Buffer.from('seq'), simAddressBytes(address))) % 1000n) + version / 10n;
}

export function simAuthKey(address: string): string {
  return '0x' + simHash(Buffer.from('auth'), simAddressBytes(address)).toString('hex');
}

/**
 * An asset's balance (`asset` canonical: a long-form struct tag or address): the
 * sim's coin is the view's balance; any other asset its own hash.
 */
export function simAssetBalance(address: string, asset: string, version: bigint): bigint {
  if (asset === SIM_COIN_CANONICAL) return simBalance(address, version);
  return u64(simHash(Buffer.from(asset), simAddressBytes(address), simPeriod(version)));
}

export interface SimResource {
  type: string;
  data: Record<string, unknown>;
  /** the raw state bytes (the BCS answer) */
  bytes: Buffer;
}

/**
 * An existing account's resources at `version`, sorted by type: its Account, its
 * coin store, and 0 to 5 (0x1: 5) slots, so lists span several pages.
 */
export function simResources(address: string, version: bigint): SimResource[] {
  if (!simAccountExists(address)) return [];
  const slots = address === SIM_MODULE_ADDRESS ? 5 : simHash(Buffer.from('slots'), simAddressBytes(address))[0] % 6;
  const sequence = simSequenceNumber(address, version);
  const balance = simAssetBalance(address, SIM_COIN_CANONICAL, version);
  const resources: Array<Omit<SimResource, 'bytes'>> = [
    {
      type: ACCOUNT_TYPE,
      data: { authentication_key: simAuthKey(address), guid_creation_num: '2', sequence_number: String(sequence) },
    },
    { type: COIN_STORE_TYPE, data: { coin: { value: String(balance) }, frozen: false } },
  ];
  for (let i = 0; i < slots; i++) {
    const value = u64(simHash(Buffer.from(`slot${i}`), simAddressBytes(address), simPeriod(version)));
    resources.push({ type: `0x1::sim::Slot${i}`, data: { value: String(value) } });
  }
  return resources
    .map((r) => ({ ...r, bytes: simHash(Buffer.from(r.type), Buffer.from(JSON.stringify(r.data))) }))
    .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

export interface SimModule {
  name: string;
  bytecode: Buffer;
  abi: Record<string, unknown>;
}

/** 0x1: sim (the view functions) and two more; other accounts 0 to 2 modules. Sorted by name. */
export function simModules(address: string): SimModule[] {
  if (!simAccountExists(address)) return [];
  const names =
    address === SIM_MODULE_ADDRESS
      ? [SIM_MODULE_NAME, 'coin', 'account']
      : ['m0', 'm1'].slice(0, simHash(Buffer.from('mods'), simAddressBytes(address))[0] % 3);
  return names.sort().map((name) =>
    name === SIM_MODULE_NAME && address === SIM_MODULE_ADDRESS
      ? { name, bytecode: SIM_MODULE_BYTECODE, abi: simModuleAbi() }
      : {
          name,
          bytecode: Buffer.concat([
            SIM_MODULE_BYTECODE.subarray(0, 8),
            simHash(simAddressBytes(address), Buffer.from(name)),
          ]),
          abi: {
            address: address === SIM_MODULE_ADDRESS ? '0x1' : address,
            name,
            friends: [],
            exposed_functions: [],
            structs: [],
          },
        },
  );
}
