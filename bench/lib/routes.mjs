// Every cached read route the hit scenarios measure, one entry each: adding a
// route (such as a wallet GET route) to the bench = adding one entry here.
//   id       short name (result ids, logs)
//   title    how the README table names it
//   request  (item, version) => { method?, path, headers, body } of item number `item`
//   present  optional (item, version) => whether the sim holds an answer for it (others are 404s)
import { simTableItem } from '../../dist/sim/tables.js';
import { parseAddress } from '../../dist/wire/address.js';
import { parseHexBytes } from '../../dist/wire/hex.js';
import { address, HANDLE, itemKey, rawItem, viewBcs, viewJson } from './requests.mjs';

/** Whether the sim's table holds item `item` at `version` (the sim's own function: a quarter are absent). */
const tableHolds = (item, version) => simTableItem(parseAddress(HANDLE), parseHexBytes(itemKey(item)), BigInt(version)) !== null;

export const HIT_ROUTES = [
  { id: 'raw_item', title: 'raw_item (BCS)', request: (item, version) => rawItem(itemKey(item), version), present: tableHolds },
  { id: 'view_json', title: 'view, JSON body', request: (item, version) => viewJson(address(item), version) },
  { id: 'view_bcs', title: 'view, BCS body (TS SDK)', request: (item, version) => viewBcs(address(item), version) },
];

export function hitRoute(id) {
  const route = HIT_ROUTES.find((r) => r.id === id);
  if (!route) throw new Error(`unknown hit route ${id}`);
  return route;
}

/** The first `n` item numbers (from 1) that `route` answers with a 200 at `version`. */
export function routeItems(route, n, version) {
  const items = [];
  for (let i = 1; items.length < n; i++) if (!route.present || route.present(i, version)) items.push(i);
  return items;
}
