// The sparse model's answers to the handlers (SimStateView): each read of a universe
// key at a version is its value there; anything outside the universe is the period
// model's value at version 0, and never changes. Lists are paged as a node pages
// them (aptos-core api/src/context.rs, get_resources_by_pagination): by state key, in
// StateKey order, a resource group one entry whose members are all listed, the next
// page's cursor the hex of the next entry's StateKey as a resource (a group's too).
import { SimError } from '../node-error.js';
import { SIM_COIN } from '../state/accounts.js';
import type { SimModule, SimResource } from '../state/accounts.js';
import { bcsBytes, bcsString, uleb128 } from '../state/bcs.js';
import { decodeNodeStateKey } from '../parse/state-key.js';
import { parseNodeAddress } from '../parse/address.js';
import { simTypeName } from '../parse/type-tag.js';
import { SimPeriodState, simCanonicalStruct, undecodableStateKey } from '../state/state-view.js';
import type { SimListName, SimListPage, SimStateView } from '../state/state-view.js';
import { simBcsStructTag, simJsonAddress, simStateKey } from './keys.js';
import type { SimSparseModel } from './model.js';
import type { SimUniverseKey } from './universe.js';
import type { SimKeyState, SimStateResource } from './values.js';

const APTOS_COIN = simCanonicalStruct(SIM_COIN) as string;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

const asResource = (r: SimStateResource): SimResource => ({
  type: r.type,
  data: r.data as Record<string, unknown>,
  bytes: r.bytes,
});

export class SimSparseState implements SimStateView {
  /** everything outside the universe: the period model, frozen at version 0 */
  readonly #outside = new SimPeriodState(0n);

  constructor(private readonly model: SimSparseModel) {}

  #inUniverse(address: string): boolean {
    return this.model.keysAt(address).length > 0;
  }

  #present(address: string, version: bigint): Array<{ key: SimUniverseKey; state: SimKeyState }> {
    const out: Array<{ key: SimUniverseKey; state: SimKeyState }> = [];
    for (const key of this.model.keysAt(address)) {
      const state = this.model.stateAt(key, version);
      if (state !== null) out.push({ key, state });
    }
    return out;
  }

  account(address: string, version: bigint): ReturnType<SimStateView['account']> {
    if (!this.#inUniverse(address)) return this.#outside.account(address, version);
    const found = this.#present(address, version).find(({ key }) => key.kind === 'account');
    if (found === undefined) return null;
    const data = found.state.resources[0].data as { sequence_number: string; authentication_key: string };
    return {
      sequenceNumber: BigInt(data.sequence_number),
      authenticationKey: data.authentication_key,
      bcs: found.state.bytes,
    };
  }

  accountExists(address: string, version: bigint): boolean {
    return this.#inUniverse(address) || this.#outside.accountExists(address, version);
  }

  /** A cursor is the hex of a BCS StateKey (no 0x), read as the request is: 400 when it is none. */
  checkCursor(address: string, start: string | null): void {
    if (start === null || !this.#inUniverse(address)) return;
    if (!HEX.test(start) || decodeNodeStateKey(Buffer.from(start, 'hex')) === null) {
      throw SimError.badRequest(`failed to parse query parameter \`start\`: not a state key: ${JSON.stringify(start)}`);
    }
  }

  listPage(
    address: string,
    list: SimListName,
    version: bigint,
    page: { start: string | null; limit: number | null; maxPageSize: number },
  ): SimListPage {
    if (!this.#inUniverse(address)) return this.#outside.listPage(address, list, version, page);
    if (page.limit === 0) throw new SimError(400, 'invalid_input', 'Given limit value (0) must not be zero');
    const size = page.limit === null || page.limit > page.maxPageSize ? page.maxPageSize : page.limit;
    const items = this.#present(address, version).filter(({ key }) => (key.kind === 'code') === (list === 'modules'));
    const seek = page.start === null ? null : Buffer.from(page.start, 'hex');
    let from = seek === null ? 0 : items.findIndex(({ key }) => Buffer.compare(key.stateKey, seek) >= 0);
    if (from < 0) from = items.length;
    const shown = items.slice(from, from + size);
    const next = items[from + size];
    const cursor = next === undefined ? undefined : this.#cursorOf(next.key);
    if (list === 'modules') {
      const modules = shown.map(({ state }) => state.module as SimModule);
      const json = modules.map((m) => ({ bytecode: '0x' + m.bytecode.toString('hex'), abi: m.abi }));
      const keyed = modules.map((m) => ({
        key: bcsString(`${simJsonAddress(address)}::${m.name}`),
        bytes: m.bytecode,
      }));
      return { json, bcs: bcsMap(keyed), ...(cursor === undefined ? {} : { cursor }) };
    }
    const resources = shown.flatMap(({ state }) => state.resources);
    const json = resources.map((r) => ({ type: r.type, data: r.data }));
    const keyed = resources.map((r) => ({ key: simBcsStructTag(r.tag), bytes: r.bytes }));
    return { json, bcs: bcsMap(keyed), ...(cursor === undefined ? {} : { cursor }) };
  }

  #cursorOf(key: SimUniverseKey): string {
    const spec = key.spec;
    if (spec.kind === 'code') return simStateKey(spec).toString('hex');
    if (spec.kind === 'table_item') throw new Error('a table item is on no account list');
    return simStateKey({ kind: 'resource', address: spec.address, tag: spec.tag }).toString('hex');
  }

  resource(address: string, canonicalTag: string, version: bigint): SimResource | undefined {
    if (!this.#inUniverse(address)) return this.#outside.resource(address, canonicalTag, version);
    for (const { state } of this.#present(address, version)) {
      const found = state.resources.find((r) => simTypeName(r.tag) === canonicalTag);
      if (found !== undefined) return asResource(found);
    }
    return undefined;
  }

  module(address: string, name: string, version: bigint): SimModule | undefined {
    if (!this.#inUniverse(address)) return this.#outside.module(address, name);
    return this.#present(address, version).find(({ key }) => key.kind === 'code' && key.detail === name)?.state.module;
  }

  /** The coin's value in the address's CoinStore (its first field), 0 without one. */
  #coin(address: string, version: bigint): bigint {
    const store = this.#present(address, version).find(({ key }) => key.kind === 'coin_store');
    return store === undefined ? 0n : store.state.bytes.readBigUInt64LE(0);
  }

  balance(address: string, asset: string, version: bigint): bigint {
    if (!this.#inUniverse(address) || asset !== APTOS_COIN) return this.#outside.balance(address, asset, version);
    return this.#coin(address, version);
  }

  viewBalance(owner: string, version: bigint): bigint {
    const address = parseNodeAddress(owner) ?? owner;
    return this.#inUniverse(address) ? this.#coin(address, version) : this.#outside.viewBalance(owner, version);
  }

  tableItem(handle: string, key: Buffer, version: bigint): Buffer | null {
    const found = this.model.tableKey(handle, key);
    if (found === undefined) return this.#outside.tableItem(handle, key, version);
    return this.model.stateAt(found, version)?.bytes ?? null;
  }

  stateValue(key: Buffer, version: bigint): Buffer | null {
    const stateKey = decodeNodeStateKey(key);
    if (stateKey === null) throw undecodableStateKey();
    const found = this.model.keyOf(key);
    if (found !== undefined) return this.model.stateAt(found, version)?.bytes ?? null;
    if (stateKey.kind === 'table_item') return this.tableItem(stateKey.handle, stateKey.key, version);
    return null;
  }
}

/** A BCS map: its entries sorted by their keys' bytes. */
function bcsMap(entries: Array<{ key: Buffer; bytes: Buffer }>): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(a.key, b.key));
  return Buffer.concat([uleb128(sorted.length), ...sorted.flatMap((e) => [e.key, bcsBytes(e.bytes)])]);
}
