// What the handlers read the simulated chain's state through, so one handler serves
// either write model: the period model (every value a function of the version's
// period, the default) here, the sparse model in sim/sparse/.
import { SimError } from '../node-error.js';
import { decodeNodeStateKey } from '../parse/state-key.js';
import { simTypeName, parseNodeTypeTag } from '../parse/type-tag.js';
import {
  simAccountExists,
  simAssetBalance,
  simAuthKey,
  simModules,
  simResources,
  simSequenceNumber,
} from './accounts.js';
import type { SimModule, SimResource } from './accounts.js';
import { bcsBytes, bcsString, bcsU64, uleb128 } from './bcs.js';
import { pageOf } from './pages.js';
import { simTableItem } from './tables.js';
import { simBalance } from './views.js';

export type SimListName = 'resources' | 'modules';

/** One page of /resources or /modules: both renderings, and the next page's cursor. */
export interface SimListPage {
  json: unknown[];
  bcs: Buffer;
  cursor?: string;
}

export interface SimStateView {
  /** GET /accounts/{a}: its Account resource, or null when it has none. */
  account(address: string, version: bigint): { sequenceNumber: bigint; authenticationKey: string; bcs: Buffer } | null;
  /** Whether /resources and /modules find the account (404 otherwise, as older nodes answer). */
  accountExists(address: string, version: bigint): boolean;
  /** A `start` a node refuses while reading the request (a 400 without ledger headers). */
  checkCursor(address: string, start: string | null): void;
  /** A page of the list; a SimError for a limit or cursor a node refuses. */
  listPage(
    address: string,
    list: SimListName,
    version: bigint,
    page: { start: string | null; limit: number | null; maxPageSize: number },
  ): SimListPage;
  /** The resource of this canonical struct tag (long addresses, no spaces). */
  resource(address: string, canonicalTag: string, version: bigint): SimResource | undefined;
  module(address: string, name: string, version: bigint): SimModule | undefined;
  /** An asset's balance (`asset` canonical: a long-form struct tag or address). */
  balance(address: string, asset: string, version: bigint): bigint;
  /** What 0x1::sim::balance(owner) returns. */
  viewBalance(owner: string, version: bigint): bigint;
  tableItem(handle: string, key: Buffer, version: bigint): Buffer | null;
  /** The value of a BCS StateKey; null when absent; a 500 SimError when the key does not decode. */
  stateValue(key: Buffer, version: bigint): Buffer | null;
}

/** A struct tag's canonical form (long addresses, no spaces), or null. */
export function simCanonicalStruct(text: string): string | null {
  const tag = parseNodeTypeTag(text);
  return tag === null || tag.kind !== 'struct' ? null : simTypeName(tag);
}

const byKey = <T extends { key: string }>(a: T, b: T): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A node's answer to a StateKey that does not decode: a 500, not a 400. */
export const undecodableStateKey = (): SimError =>
  new SimError(500, 'internal_error', 'Failed to deserialize the state key');

/**
 * The period model: each value a function of (key, version / SIM_VALUE_PERIOD).
 * `frozenAt`: every read is at that version instead (the sparse model's keys outside
 * its universe, which never change).
 */
export class SimPeriodState implements SimStateView {
  constructor(private readonly frozenAt?: bigint) {}

  #at(version: bigint): bigint {
    return this.frozenAt ?? version;
  }

  account(address: string, version: bigint): ReturnType<SimStateView['account']> {
    if (!simAccountExists(address)) return null;
    const sequenceNumber = simSequenceNumber(address, this.#at(version));
    const authenticationKey = simAuthKey(address);
    const bcs = Buffer.concat([bcsBytes(Buffer.from(authenticationKey.slice(2), 'hex')), bcsU64(sequenceNumber)]);
    return { sequenceNumber, authenticationKey, bcs };
  }

  accountExists(address: string, _version: bigint): boolean {
    return simAccountExists(address);
  }

  /** The period model's cursors are checked with the page, after the ledger is read. */
  checkCursor(_address: string, _start: string | null): void {}

  listPage(
    address: string,
    list: SimListName,
    version: bigint,
    page: { start: string | null; limit: number | null; maxPageSize: number },
  ): SimListPage {
    const entries: Array<{ json: unknown; key: string; bytes: Buffer }> =
      list === 'resources'
        ? simResources(address, this.#at(version)).map((r) => ({
            json: { type: r.type, data: r.data },
            key: r.type,
            bytes: r.bytes,
          }))
        : simModules(address).map((m) => ({
            json: { bytecode: '0x' + m.bytecode.toString('hex'), abi: m.abi },
            key: m.name,
            bytes: m.bytecode,
          }));
    const { page: shown, cursor } = pageOf(entries, address, list, page.start, page.limit, page.maxPageSize);
    // A BCS map, sorted by key within the page.
    const sorted = [...shown].sort(byKey);
    const bcs = Buffer.concat([
      uleb128(sorted.length),
      ...sorted.flatMap((e) => [bcsString(e.key), bcsBytes(e.bytes)]),
    ]);
    return { json: shown.map((e) => e.json), bcs, ...(cursor === undefined ? {} : { cursor }) };
  }

  resource(address: string, canonicalTag: string, version: bigint): SimResource | undefined {
    return simResources(address, this.#at(version)).find((r) => simCanonicalStruct(r.type) === canonicalTag);
  }

  module(address: string, name: string, _version?: bigint): SimModule | undefined {
    return simModules(address).find((m) => m.name === name);
  }

  balance(address: string, asset: string, version: bigint): bigint {
    return simAccountExists(address) ? simAssetBalance(address, asset, this.#at(version)) : 0n;
  }

  viewBalance(owner: string, version: bigint): bigint {
    return simBalance(owner, this.#at(version));
  }

  tableItem(handle: string, key: Buffer, version: bigint): Buffer | null {
    return simTableItem(handle, key, this.#at(version));
  }

  stateValue(key: Buffer, version: bigint): Buffer | null {
    const stateKey = decodeNodeStateKey(key);
    if (stateKey === null) throw undecodableStateKey();
    return stateKey.kind === 'table_item' ? this.tableItem(stateKey.handle, stateKey.key, version) : null;
  }
}
