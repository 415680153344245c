// The requests the bench sends: the cached routes in each form a wallet uses.
// Each helper returns { method?, path, headers, body } (body a Buffer; GETs have none).

export const HANDLE = '0x' + 'ab'.repeat(32);
const VIEW_BCS_TYPE = 'application/x.node.view_function+bcs';

function query(version) {
  return version === undefined || version === null ? '' : `?ledger_version=${version}`;
}

/** 0x + 32-byte hex of item i (an account address). */
export function address(i) {
  return '0x' + i.toString(16).padStart(64, '0');
}

/** raw_item: JSON request body, BCS answer (the only answer format raw_item has). */
export function rawItem(key, version, handle = HANDLE) {
  return {
    path: `/v1/tables/${handle}/raw_item${query(version)}`,
    headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
    body: Buffer.from(JSON.stringify({ key })),
  };
}

/** view 0x1::sim::balance(owner) with a JSON body; answer JSON or BCS. */
export function viewJson(owner, version, accept = 'application/json') {
  return {
    path: `/v1/view${query(version)}`,
    headers: { 'content-type': 'application/json', accept },
    body: Buffer.from(JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [owner] })),
  };
}

const MODULE_ADDRESS = Buffer.from('00'.repeat(31) + '01', 'hex');
const BCS_PREFIX = Buffer.concat([
  MODULE_ADDRESS,
  Buffer.from([3]),
  Buffer.from('sim'),
  Buffer.from([7]),
  Buffer.from('balance'),
  Buffer.from([0, 1, 32]),
]);

/** view 0x1::sim::balance(owner) with a BCS body (what the Aptos SDK sends), BCS answer. */
export function viewBcs(owner, version) {
  return {
    path: `/v1/view${query(version)}`,
    headers: { 'content-type': VIEW_BCS_TYPE, accept: 'application/x-bcs' },
    body: Buffer.concat([BCS_PREFIX, Buffer.from(owner.slice(2), 'hex')]),
  };
}

/** GET an account's coin store, as getAccountResource sends it (%3C, %3E). */
export function resource(owner, version) {
  return {
    method: 'GET',
    path: `/v1/accounts/${owner}/resource/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E${query(version)}`,
    headers: { accept: 'application/json' },
  };
}

/** GET an account, as getAccountInfo sends it (its sequence number and auth key). */
export function account(owner, version) {
  return { method: 'GET', path: `/v1/accounts/${owner}${query(version)}`, headers: { accept: 'application/json' } };
}

/** GET a module's ABI, as aptos.view does before every view. */
export function moduleAbi(owner, name, version) {
  return {
    method: 'GET',
    path: `/v1/accounts/${owner}/module/${name}${query(version)}`,
    headers: { accept: 'application/json' },
  };
}

/** POST a table item by its JSON key, as getTableItem sends it. */
export function tableItem(n, version, handle = HANDLE) {
  return {
    path: `/v1/tables/${handle}/item${query(version)}`,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: Buffer.from(JSON.stringify({ key_type: 'u64', value_type: 'u64', key: String(n) })),
  };
}

/** GET a transaction by its version. */
export function transactionByVersion(v) {
  return { method: 'GET', path: `/v1/transactions/by_version/${v}`, headers: { accept: 'application/json' } };
}

/** GET a block by its height, without its transactions (getBlockByHeight's default). */
export function blockByHeight(h) {
  return {
    method: 'GET',
    path: `/v1/blocks/by_height/${h}?with_transactions=false`,
    headers: { accept: 'application/json' },
  };
}

/** raw_item table key of item i. */
export function itemKey(i) {
  return '0x' + i.toString(16).padStart(8, '0');
}
