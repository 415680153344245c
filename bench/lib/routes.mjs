// Every cached read route the hit scenarios measure, one entry each: adding a
// route (such as a wallet GET route) to the bench = adding one entry here.
//   id       short name (result ids, logs)
//   title    how the results table names it
//   request  (item, version) => { method?, path, headers, body } of item number `item`
//   present  optional (item, version) => whether the sim holds an answer for it (others are 404s)
//   anchor   the target of memory hit ÷ nginx proxy_cache on this route (scenario 1n): 1.0 where a
//            wallet's hot reads are (raw_item, views), 0.9 elsewhere
import { simAccountExists, simModules } from '../../dist/sim/state/accounts.js';
import { simTableItem } from '../../dist/sim/state/tables.js';
import { parseAddress } from '../../dist/wire/address.js';
import { parseHexBytes } from '../../dist/wire/hex.js';
import {
  address,
  blockByHeight,
  HANDLE,
  itemKey,
  moduleAbi,
  rawItem,
  resource,
  tableItem,
  transactionByVersion,
  viewBcs,
  viewJson,
} from './requests.mjs';

/** Whether the sim's table holds item `item` at `version` (the sim's own function: a quarter are absent). */
const tableHolds = (item, version) =>
  simTableItem(parseAddress(HANDLE), parseHexBytes(itemKey(item)), BigInt(version)) !== null;
const u64le = (n) => Buffer.from(new BigUint64Array([BigInt(n)]).buffer);
/** The same table read by its JSON u64 key (tables/item). */
const tableHoldsU64 = (item, version) => simTableItem(parseAddress(HANDLE), u64le(item), BigInt(version)) !== null;
/** Accounts the sim has (seven in eight), and those with a module m0. */
const accountExists = (item) => simAccountExists(parseAddress(address(item)));
const hasModule = (item) => simModules(parseAddress(address(item))).some((m) => m.name === 'm0');

export const HIT_ROUTES = [
  {
    id: 'raw_item',
    title: 'raw_item (BCS)',
    request: (item, version) => rawItem(itemKey(item), version),
    present: tableHolds,
    anchor: 1.0,
  },
  {
    id: 'view_json',
    title: 'view, JSON body',
    request: (item, version) => viewJson(address(item), version),
    anchor: 1.0,
  },
  {
    id: 'view_bcs',
    title: 'view, BCS body (TS SDK)',
    request: (item, version) => viewBcs(address(item), version),
    anchor: 1.0,
  },
  {
    id: 'resource',
    title: 'account resource (GET)',
    request: (item, version) => resource(address(item), version),
    present: accountExists,
    anchor: 0.9,
  },
  {
    id: 'module',
    title: 'module ABI (GET)',
    request: (item, version) => moduleAbi(address(item), 'm0', version),
    present: hasModule,
    anchor: 0.9,
  },
  {
    id: 'table_item',
    title: 'table item, JSON key',
    request: (item, version) => tableItem(item, version),
    present: tableHoldsU64,
    anchor: 0.9,
  },
  // Items are versions and heights: the bench's sim starts with a history deep enough for 10,000 of each.
  {
    id: 'txn_by_version',
    title: 'transaction by version',
    request: (item) => transactionByVersion(item),
    anchor: 0.9,
  },
  { id: 'block_by_height', title: 'block by height', request: (item) => blockByHeight(item), anchor: 0.9 },
];

export function hitRoute(id) {
  const route = HIT_ROUTES.find((r) => r.id === id);
  if (!route) throw new Error(`unknown hit route ${id}`);
  return route;
}

/** The first `n` item numbers (from `from`, 1 unless given) that `route` answers with a 200 at `version`. */
export function routeItems(route, n, version, from = 1) {
  const items = [];
  for (let i = from; items.length < n; i++) if (!route.present || route.present(i, version)) items.push(i);
  return items;
}
