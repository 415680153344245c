// The sparse model's answers on every covered route: the JSON renderings agree with
// the BCS state bytes (decoded here by the Move layouts of aptos-framework), lists page
// as a node pages them, route answers change only where the feed's write sets say, and
// everything outside the universe never changes.
import { describe, expect, it } from 'vitest';
import { SIM_MODULE_ADDRESS, simKeyRequests, simStateKey, simStructTag, type SimNode } from '../../src/sim/index.js';
import { readFeedPage } from '../helpers/feed-page.js';
import { call, sparseSim, type Reply } from '../helpers/proxy.js';

type Layout = Array<[string, 'u64' | 'address' | 'bool' | 'bytes' | 'option_address' | Layout]>;
const EVENTS: Layout = [
  ['counter', 'u64'],
  [
    'guid',
    [
      [
        'id',
        [
          ['creation_num', 'u64'],
          ['addr', 'address'],
        ],
      ],
    ],
  ],
];
const LAYOUTS: Record<string, Layout> = {
  '0x1::account::Account': [
    ['authentication_key', 'bytes'],
    ['sequence_number', 'u64'],
    ['guid_creation_num', 'u64'],
    ['coin_register_events', EVENTS],
    ['key_rotation_events', EVENTS],
    ['rotation_capability_offer', [['for', 'option_address']]],
    ['signer_capability_offer', [['for', 'option_address']]],
  ],
  '0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>': [
    ['coin', [['value', 'u64']]],
    ['frozen', 'bool'],
    ['deposit_events', EVENTS],
    ['withdraw_events', EVENTS],
  ],
  '0x1::object::ObjectCore': [
    ['guid_creation_num', 'u64'],
    ['owner', 'address'],
    ['allow_ungated_transfer', 'bool'],
    ['transfer_events', EVENTS],
  ],
  '0x1::fungible_asset::FungibleStore': [
    ['metadata', [['inner', 'address']]],
    ['balance', 'u64'],
    ['frozen', 'bool'],
  ],
  '0x1::block::BlockResource': [
    ['height', 'u64'],
    ['epoch_interval', 'u64'],
    ['new_block_events', EVENTS],
    ['update_epoch_interval_events', EVENTS],
  ],
  '0x1::timestamp::CurrentTimeMicroseconds': [['microseconds', 'u64']],
};
const layoutOf = (type: string): Layout => LAYOUTS[type] ?? (/^0x1::sim::Slot\d$/.test(type) ? [['value', 'u64']] : []);

/** An address as a node writes it in JSON: 0x0 … 0xf short. */
const jsonAddress = (bytes: Buffer): string => {
  const digits = bytes.toString('hex').replace(/^0+/, '');
  return digits.length <= 1 ? `0x${digits || '0'}` : '0x' + bytes.toString('hex');
};

/** A Move struct's BCS as a node renders it in JSON, with the byte count it took. */
function decode(layout: Layout, bytes: Buffer, at = 0): [Record<string, unknown>, number] {
  const out: Record<string, unknown> = {};
  let i = at;
  for (const [name, kind] of layout) {
    if (Array.isArray(kind)) {
      const [inner, next] = decode(kind, bytes, i);
      out[name] = inner;
      i = next;
    } else if (kind === 'u64') {
      out[name] = String(bytes.readBigUInt64LE(i));
      i += 8;
    } else if (kind === 'address') {
      out[name] = jsonAddress(bytes.subarray(i, i + 32));
      i += 32;
    } else if (kind === 'bool') out[name] = bytes[i++] === 1;
    else if (kind === 'bytes') {
      const n = bytes[i++];
      out[name] = '0x' + bytes.subarray(i, i + n).toString('hex');
      i += n;
    } else {
      const some = bytes[i++] === 1;
      out[name] = { vec: some ? [jsonAddress(bytes.subarray(i, i + 32))] : [] };
      if (some) i += 32;
    }
  }
  return [out, i];
}

/** A BCS map of (StructTag → bytes) as the node's /resources answer: the type (no type args here but CoinStore's) → bytes. */
function resourceMap(body: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let i = 1;
  for (let n = 0; n < body[0]; n++) {
    const address = jsonAddress(body.subarray(i, i + 32));
    i += 32;
    const names: string[] = [];
    for (const _ of [0, 1]) {
      names.push(body.subarray(i + 1, i + 1 + body[i]).toString());
      i += 1 + body[i];
    }
    let type = `${address}::${names.join('::')}`;
    if (body[i++] === 1) {
      // One type argument: the sim's only generic resource, CoinStore<0x1::aptos_coin::AptosCoin>.
      expect(body[i]).toBe(7);
      type += '<0x1::aptos_coin::AptosCoin>';
      i += 1 + 32 + 1 + 10 + 1 + 9 + 1;
    }
    const length = body[i] < 0x80 ? body[i] : (body[i] & 0x7f) + body[i + 1] * 128;
    i += body[i] < 0x80 ? 1 : 2;
    out.set(type, body.subarray(i, i + length));
    i += length;
  }
  expect(i).toBe(body.length);
  return out;
}

const BCS = { accept: 'application/x-bcs' };
const get = (node: SimNode, path: string, bcs = false): Promise<Reply> =>
  call(node.url, path, bcs ? { headers: BCS } : {});

describe('the sparse model on the account routes: JSON agrees with BCS', () => {
  it('resources, resource, account, balance and the balance view, for accounts, objects and 0x1', async () => {
    const node = await sparseSim({ accounts: 6, objects: 2 }, { startVersion: 3000n });
    const universe = node.writes?.universe;
    const addresses = [...(universe?.accounts ?? []), ...(universe?.objects ?? []), '0x1'];
    for (const version of [1000n, 2999n]) {
      for (const address of addresses) {
        const at = `?ledger_version=${version}`;
        const list = (await get(node, `/v1/accounts/${address}/resources${at}`)).json() as Array<{
          type: string;
          data: unknown;
        }>;
        const map = resourceMap((await get(node, `/v1/accounts/${address}/resources${at}`, true)).body);
        expect([...map.keys()].sort()).toEqual(list.map((r) => r.type).sort());
        for (const { type, data } of list) {
          expect(decode(layoutOf(type), map.get(type) as Buffer)[0], `${type} at ${address}`).toEqual(data);
          const path = `/v1/accounts/${address}/resource/${encodeURIComponent(type)}${at}`;
          expect((await get(node, path)).json()).toEqual({ type, data });
          expect((await get(node, path, true)).body).toEqual(map.get(type));
        }
        const account = list.find((r) => r.type === '0x1::account::Account')?.data as
          | Record<string, string>
          | undefined;
        const info = (await get(node, `/v1/accounts/${address}${at}`)).json();
        expect(info).toEqual(
          account === undefined
            ? { sequence_number: '0', authentication_key: address }
            : { sequence_number: account.sequence_number, authentication_key: account.authentication_key },
        );
        if (account !== undefined)
          expect((await get(node, `/v1/accounts/${address}${at}`, true)).body).toEqual(
            map.get('0x1::account::Account'),
          );
        const coin = list.find((r) => r.type.startsWith('0x1::coin::CoinStore'))?.data as
          | { coin: { value: string } }
          | undefined;
        const balance = (
          await get(node, `/v1/accounts/${address}/balance/0x1::aptos_coin::AptosCoin${at}`)
        ).body.toString();
        expect(balance).toBe(coin?.coin.value ?? '0');
        const view = await call(node.url, `/v1/view${at}`, {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [address] }),
        });
        expect(view.json()).toEqual([balance]);
      }
    }
    // An object's group lists both members, each readable by its own type.
    const object = universe?.objects[0] as string;
    const members = (await get(node, `/v1/accounts/${object}/resources`)).json().map((r: { type: string }) => r.type);
    expect(members).toEqual(['0x1::object::ObjectCore', '0x1::fungible_asset::FungibleStore']);
  });

  it('pages /resources and /modules by state key, the cursor the next entry’s StateKey as a resource', async () => {
    const node = await sparseSim({ accounts: 20, objects: 2 }, { startVersion: 3000n });
    const universe = node.writes?.universe;
    const account = universe?.accounts.find((a) => (node.writes?.keysAt(a).length ?? 0) >= 5) as string;
    const object = universe?.objects[0] as string;
    // An account outside the universe pages by the period model's cursors, frozen.
    const outside = '0x' + '43'.repeat(32);
    expect((await get(node, `/v1/accounts/${outside}/resources`)).json().length).toBeGreaterThan(1);
    for (const address of [account, object, '0x1', outside]) {
      for (const list of ['resources', 'modules']) {
        const whole = (await get(node, `/v1/accounts/${address}/${list}`)).json();
        const walked: unknown[] = [];
        let start: string | undefined;
        for (let pages = 0; pages < 20; pages++) {
          const reply = await get(
            node,
            `/v1/accounts/${address}/${list}?limit=1${start === undefined ? '' : `&start=${start}`}`,
          );
          expect(reply.status).toBe(200);
          walked.push(...reply.json());
          start = reply.headers['x-node-cursor'];
          if (start === undefined) break;
          if (address !== outside) expect(start).toMatch(/^(?:[0-9a-f]{2})+$/);
        }
        expect(walked, `${list} of ${address}`).toEqual(whole);
      }
    }
    // The group is one entry: a page of one holds both its members.
    expect((await get(node, `/v1/accounts/${object}/resources?limit=1`)).json()).toHaveLength(2);
    const first = await get(node, `/v1/accounts/0x1/resources?limit=1`);
    const next = node.writes?.keysAt(SIM_MODULE_ADDRESS).filter((k) => k.kind !== 'code')[1];
    if (next?.spec.kind !== 'resource') throw new Error('0x1 has resources');
    expect(first.headers['x-node-cursor']).toBe(simStateKey(next.spec).toString('hex'));
    const bad = await get(node, `/v1/accounts/0x1/resources?start=0xzz`);
    expect([bad.status, bad.json().error_code, bad.headers['x-node-ledger-version']]).toEqual([
      400,
      'web_framework_error',
      undefined,
    ]);
  });
});

describe('the reads that name each universe key (simKeyRequests)', () => {
  it('answer 200 where the key holds a value and 404 where it does not, in each format the route has', async () => {
    const node = await sparseSim({ accounts: 6, objects: 2, tables: 1, tableKeys: 6 }, { startVersion: 3000n });
    const model = node.writes;
    if (model === null) throw new Error('a sparse sim has its model');
    let absent = 0;
    for (const key of model.universe.keys) {
      for (const version of [1500n, 3000n]) {
        const value = model.stateAt(key, version);
        if (value === null) absent++;
        for (const request of simKeyRequests(key)) {
          for (const format of request.formats) {
            const reply = await call(node.url, `${request.path}?ledger_version=${version}`, {
              method: request.method,
              headers: {
                accept: format === 'bcs' ? 'application/x-bcs' : 'application/json',
                ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
              },
              body: request.body === undefined ? undefined : JSON.stringify(request.body),
            });
            const label = `${request.method} ${request.path} (${format}) at ${version}`;
            // A missing account is a stateless one: GET /accounts/{a} never 404s here.
            expect(reply.status, label).toBe(
              value === null && request.path !== `/v1/accounts/${key.owner}` ? 404 : 200,
            );
            if (value !== null && request.path.endsWith('/state_values/raw'))
              expect(reply.body, label).toEqual(value.bytes);
          }
        }
      }
    }
    expect(absent).toBeGreaterThan(0);
  });
});

describe('route answers change only where the feed says, and never outside the universe', () => {
  it('resource, account, balance, module, tables/item and raw_item between each version and the next', async () => {
    const node = await sparseSim(
      { accounts: 10, objects: 2, tables: 1, tableKeys: 4, writeRate: 0.1 },
      { startVersion: 1100n },
    );
    const model = node.writes;
    if (model === null) throw new Error('a sparse sim has its model');
    const u = model.universe;
    const [account] = u.accounts;
    const withModule = u.accounts.find((a) => model.keysAt(a).some((k) => k.kind === 'code')) as string;
    const [handle] = u.tables;
    const coin = encodeURIComponent('0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>');
    const item = { key_type: 'u64', value_type: 'u64', key: '1' };
    const keyOf = (spec: Parameters<typeof simStateKey>[0]): string => simStateKey(spec).toString('hex');
    const [object] = u.objects;
    const group = keyOf({ kind: 'resource_group', address: object, tag: simStructTag('0x1::object::ObjectGroup') });
    const member = (type: string) => (v: bigint) =>
      get(node, `/v1/accounts/${object}/resource/${type}?ledger_version=${v}`);
    // exact: the answer changes at exactly the versions that write its keys; else only at some of them
    // (a group member the write left as it was).
    const reads: Array<{ name: string; keys: string[]; read: (v: bigint) => Promise<Reply>; exact?: false }> = [
      { name: 'fungible store', keys: [group], read: member('0x1::fungible_asset::FungibleStore') },
      { name: 'object core', keys: [group], read: member('0x1::object::ObjectCore'), exact: false },
      {
        name: 'coin store',
        keys: [
          keyOf({
            kind: 'resource',
            address: account,
            tag: simStructTag('0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>'),
          }),
        ],
        read: (v) => get(node, `/v1/accounts/${account}/resource/${coin}?ledger_version=${v}`),
      },
      {
        name: 'account',
        keys: [keyOf({ kind: 'resource', address: account, tag: simStructTag('0x1::account::Account') })],
        read: (v) => get(node, `/v1/accounts/${account}?ledger_version=${v}`),
      },
      {
        name: 'balance',
        keys: [
          keyOf({
            kind: 'resource',
            address: account,
            tag: simStructTag('0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>'),
          }),
        ],
        read: (v) => get(node, `/v1/accounts/${account}/balance/0x1::aptos_coin::AptosCoin?ledger_version=${v}`),
      },
      {
        name: 'module',
        keys: [keyOf({ kind: 'code', address: withModule, module: 'm0' })],
        read: (v) => get(node, `/v1/accounts/${withModule}/module/m0?ledger_version=${v}`),
      },
      {
        name: 'modules',
        keys: model
          .keysAt(withModule)
          .filter((k) => k.kind === 'code')
          .map((k) => k.stateKey.toString('hex')),
        read: (v) => get(node, `/v1/accounts/${withModule}/modules?ledger_version=${v}`),
      },
      {
        name: 'resources',
        keys: model
          .keysAt(account)
          .filter((k) => k.kind !== 'code')
          .map((k) => k.stateKey.toString('hex')),
        read: (v) => get(node, `/v1/accounts/${account}/resources?ledger_version=${v}`),
      },
      {
        name: 'table item',
        keys: [keyOf({ kind: 'table_item', handle, key: Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]) })],
        read: (v) =>
          call(node.url, `/v1/tables/${handle}/item?ledger_version=${v}`, {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(item),
          }),
      },
      {
        name: 'raw item',
        keys: [keyOf({ kind: 'table_item', handle, key: Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]) })],
        read: (v) =>
          call(node.url, `/v1/tables/${handle}/raw_item?ledger_version=${v}`, {
            headers: { 'content-type': 'application/json', ...BCS },
            body: JSON.stringify({ key: '0x0100000000000000' }),
          }),
      },
    ];
    const page = readFeedPage((await get(node, '/v1/transactions?start=1000&limit=100', true)).body);
    const changes = new Map<string, number>();
    for (const { name, keys, read, exact } of reads) {
      // A 404's message names the version it was asked at: its error code is the answer.
      const answer = async (v: bigint): Promise<string> => {
        const reply = await read(v);
        return reply.status === 200 ? reply.body.toString('hex') : `${reply.status} ${reply.json().error_code}`;
      };
      let previous = await answer(999n);
      for (const t of page) {
        const now = await answer(t.version);
        const changed = now !== previous;
        const written = t.writes.some((w) => keys.includes(w.stateKey.toString('hex')));
        if (exact === false) expect(!changed || written, `${name} at ${t.version}`).toBe(true);
        else expect(changed, `${name} at ${t.version}`).toBe(written);
        if (changed) changes.set(name, (changes.get(name) ?? 0) + 1);
        previous = now;
      }
    }
    expect(changes.get('coin store') ?? 0).toBeGreaterThan(0);
    expect(changes.get('table item') ?? 0).toBeGreaterThan(0);
    expect(changes.get('fungible store') ?? 0).toBeGreaterThan(changes.get('object core') ?? 0);
  });

  it('an account, table item or module outside the universe answers the same at every version', async () => {
    const node = await sparseSim({}, { startVersion: 5000n });
    const outside = '0x' + '42'.repeat(32);
    for (const path of [
      `/v1/accounts/${outside}/resources`,
      `/v1/accounts/${outside}`,
      '/v1/accounts/0x1/module/sim',
    ]) {
      const early = await get(node, `${path}?ledger_version=100`);
      const late = await get(node, `${path}?ledger_version=4999`);
      expect([late.status, late.body.toString()]).toEqual([early.status, early.body.toString()]);
    }
    const raw = (v: number) =>
      call(node.url, `/v1/tables/0x${'ab'.repeat(32)}/raw_item?ledger_version=${v}`, {
        headers: { 'content-type': 'application/json', ...BCS },
        body: JSON.stringify({ key: '0x07' }),
      });
    expect((await raw(4999)).body).toEqual((await raw(100)).body);
  });
});
