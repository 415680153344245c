// The simulated node's wallet routes on their own (api.md §9): it is the
// oracle of the differential suite and the bench target, so its semantics are
// tested directly, not only through the proxy.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  simAccountExists,
  simBcsTableKey,
  simTableItem,
  simTransactionHash,
  SIM_VALUE_PERIOD,
  startSim,
  type SimNode,
  type SimOptions,
} from '../../src/sim/index.js';
import { parseTypeTag } from '../../src/wire/move-type.js';
import { expectError } from '../helpers/expect.js';
import { call, type Reply } from '../helpers/proxy.js';

const HANDLE = '0x' + 'ab'.repeat(32);
const LONG_1 = '0x' + '1'.padStart(64, '0');
const CURSOR = 'x-node-cursor';

let node: SimNode;
const started: SimNode[] = [];

async function start(options: SimOptions = {}): Promise<SimNode> {
  const sim = await startSim({ startVersion: 1000n, pruneWindow: 500n, gzip: false, ...options });
  started.push(sim);
  return sim;
}

beforeEach(async () => {
  node = await start();
});
afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
});

const get = (path: string, accept?: string): Promise<Reply> =>
  call(node.url, path, { headers: accept === undefined ? {} : { accept } });
const post = (path: string, body: unknown, accept?: string): Promise<Reply> =>
  call(node.url, path, {
    headers: { 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }) },
    body: JSON.stringify(body),
  });

/** A missing address (one in eight): the first of a fixed list. */
function missingAccount(): string {
  for (let i = 2; ; i++) {
    const address = '0x' + i.toString(16).padStart(64, '0');
    if (!simAccountExists(address)) return address;
  }
}

describe('accounts', () => {
  it('an account: JSON and BCS; a missing one is a stateless 200 by default and 404 when the feature is off', async () => {
    const json = (await get('/v1/accounts/0x1?ledger_version=990')).json();
    expect(json).toEqual({
      sequence_number: expect.stringMatching(/^\d+$/),
      authentication_key: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const bcs = await get('/v1/accounts/0x1?ledger_version=990', 'application/x-bcs');
    expect([bcs.headers['content-type'], bcs.body.length]).toEqual(['application/x-bcs', 1 + 32 + 8]);
    const missing = missingAccount();
    expect((await get(`/v1/accounts/${missing}`)).json()).toEqual({
      sequence_number: '0',
      authentication_key: missing,
    });
    node = await start({ statelessAccounts: false });
    expectError(await get(`/v1/accounts/${missing}`), 404, 'account_not_found', { ledgerHeaders: true });
  });

  it('version checks come first: a missing account above the latest is version_not_found, below the oldest version_pruned', async () => {
    const missing = missingAccount();
    expectError(await get(`/v1/accounts/${missing}/resources?ledger_version=1001`), 404, 'version_not_found', {
      ledgerHeaders: true,
    });
    expectError(await get(`/v1/accounts/${missing}/resources?ledger_version=499`), 410, 'version_pruned', {
      ledgerHeaders: true,
    });
    expectError(await get(`/v1/accounts/${missing}/resources?ledger_version=1000`), 404, 'account_not_found', {
      ledgerHeaders: true,
    });
    expectError(await get(`/v1/accounts/${missing}/modules`), 404, 'account_not_found', { ledgerHeaders: true });
  });

  it('values change across a value period and not within one', async () => {
    const at = async (v: bigint): Promise<string> =>
      (await get(`/v1/accounts/0x1/resources?ledger_version=${v}`)).body.toString();
    const start = (990n / SIM_VALUE_PERIOD) * SIM_VALUE_PERIOD;
    expect(await at(start)).toBe(await at(start + SIM_VALUE_PERIOD - 1n));
    expect(await at(start)).not.toBe(await at(start + SIM_VALUE_PERIOD));
  });
});

describe('pagination', () => {
  it.each(['resources', 'modules'])(
    'following the cursor visits every %s once, in order; the last page has none',
    async (list) => {
      const all = (await get(`/v1/accounts/0x1/${list}?ledger_version=990`)).json();
      expect(all.length).toBeGreaterThan(2);
      const seen: unknown[] = [];
      let start = '';
      for (let pages = 0; pages < 20; pages++) {
        const page = await get(`/v1/accounts/0x1/${list}?ledger_version=990&limit=2${start}`);
        expect(page.status).toBe(200);
        seen.push(...page.json());
        const cursor = page.headers[CURSOR];
        if (cursor === undefined) break;
        expect(cursor).toMatch(/^0x[0-9a-f]+$/);
        start = `&start=${cursor}`;
      }
      expect(seen).toEqual(all);
    },
  );

  it('limit 0 is 400 invalid_input with ledger headers, a limit that is no u16 400 without; a forged start 400 invalid_input', async () => {
    expectError(await get('/v1/accounts/0x1/resources?limit=0'), 400, 'invalid_input', { ledgerHeaders: true });
    expectError(await get('/v1/accounts/0x1/resources?limit=70000'), 400, 'web_framework_error', {
      ledgerHeaders: false,
    });
    expectError(await get('/v1/accounts/0x1/resources?start=0xdeadbeef00000001'), 400, 'invalid_input', {
      ledgerHeaders: true,
    });
  });

  it('the page size is capped at maxPageSize; a BCS page starts with its entry count', async () => {
    node = await start({ maxPageSize: 2 });
    const page = await get('/v1/accounts/0x1/resources?limit=100');
    expect(page.json()).toHaveLength(2);
    expect(page.headers[CURSOR]).toBeDefined();
    const bcs = await get('/v1/accounts/0x1/resources?limit=100', 'application/x-bcs');
    expect([bcs.headers['content-type'], bcs.body[0]]).toEqual(['application/x-bcs', 2]);
  });
});

describe('a resource, a module, a balance', () => {
  it('a struct tag in any spelling finds the resource; an unknown one is 404, a non-struct 400 without headers', async () => {
    const spellings = [
      '0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>',
      '0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E',
      `${LONG_1}::coin::CoinStore%3C${LONG_1}::aptos_coin::AptosCoin%3E`,
    ];
    const bodies = await Promise.all(
      spellings.map(async (tag) => (await get(`/v1/accounts/0x1/resource/${tag}?ledger_version=990`)).body.toString()),
    );
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0])).toMatchObject({
      type: '0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>',
      data: { coin: { value: expect.any(String) } },
    });
    expectError(await get('/v1/accounts/0x1/resource/0x1::nope::Nope'), 404, 'resource_not_found', {
      ledgerHeaders: true,
    });
    expectError(await get('/v1/accounts/0x1/resource/u64'), 400, 'web_framework_error', { ledgerHeaders: false });
  });

  it('every module of the list is found by name, with the same bytecode and ABI', async () => {
    const modules = (await get('/v1/accounts/0x1/modules?ledger_version=990')).json() as Array<{
      abi: { name: string };
    }>;
    for (const m of modules)
      expect((await get(`/v1/accounts/0x1/module/${m.abi.name}?ledger_version=990`)).json()).toEqual(m);
    expectError(await get('/v1/accounts/0x1/module/nope'), 404, 'module_not_found', { ledgerHeaders: true });
  });

  it('a balance is a bare JSON number and a u64 in BCS; a missing account has 0', async () => {
    const json = await get('/v1/accounts/0x1/balance/0x1::aptos_coin::AptosCoin?ledger_version=990');
    expect(json.body.toString()).toMatch(/^\d+$/);
    const bcs = await get(
      '/v1/accounts/0x1/balance/0x1::aptos_coin::AptosCoin?ledger_version=990',
      'application/x-bcs',
    );
    expect(bcs.body.readBigUInt64LE(0)).toBe(BigInt(json.body.toString()));
    expect((await get(`/v1/accounts/${missingAccount()}/balance/0xa`)).body.toString()).toBe('0');
  });
});

describe('table items and state values', () => {
  const keyOf = (n: number): Buffer => simBcsTableKey(parseTypeTag('u64')!, String(n))!;
  const present = (): number =>
    Array.from({ length: 64 }, (_, n) => n).find((n) => simTableItem(HANDLE, keyOf(n), 990n) !== null)!;
  const absent = (): number =>
    Array.from({ length: 256 }, (_, n) => n).find((n) => simTableItem(HANDLE, keyOf(n), 990n) === null)!;

  it('an item by its JSON key is the raw_item of its BCS key: JSON per value type, BCS the same bytes', async () => {
    const n = present();
    const value = simTableItem(HANDLE, keyOf(n), 990n)!;
    const item = { key_type: 'u64', value_type: 'u64', key: String(n) };
    expect((await post(`/v1/tables/${HANDLE}/item?ledger_version=990`, item)).json()).toBe(
      String(value.readBigUInt64LE(0)),
    );
    const bcs = await post(`/v1/tables/${HANDLE}/item?ledger_version=990`, item, 'application/x-bcs');
    const raw = await post(
      `/v1/tables/${HANDLE}/raw_item?ledger_version=990`,
      { key: '0x' + keyOf(n).toString('hex') },
      'application/x-bcs',
    );
    expect(bcs.body.equals(value) && raw.body.equals(value)).toBe(true);
  });

  it('absent → 404; a key not of its type → 400 invalid_input with headers; a bad type → 400 without', async () => {
    expectError(
      await post(`/v1/tables/${HANDLE}/item`, { key_type: 'u64', value_type: 'u64', key: String(absent()) }),
      404,
      'table_item_not_found',
      { ledgerHeaders: true },
    );
    expectError(
      await post(`/v1/tables/${HANDLE}/item`, { key_type: 'u64', value_type: 'u64', key: 'not a number' }),
      400,
      'invalid_input',
      { ledgerHeaders: true },
    );
    expectError(
      await post(`/v1/tables/${HANDLE}/item`, { key_type: 'u65', value_type: 'u64', key: '1' }),
      400,
      'web_framework_error',
      { ledgerHeaders: false },
    );
  });

  it('state values: a TableItem key reads the table; JSON Accept 403 without headers; an undecodable key 500; another key 404', async () => {
    const n = present();
    const stateKey = (variant: number, key: Buffer): string =>
      '0x' +
      Buffer.concat([
        Buffer.from([variant]),
        Buffer.from(HANDLE.slice(2), 'hex'),
        Buffer.from([key.length]),
        key,
      ]).toString('hex');
    const raw = '/v1/experimental/state_values/raw?ledger_version=990';
    expect(
      (await post(raw, { key: stateKey(1, keyOf(n)) }, 'application/x-bcs')).body.equals(
        simTableItem(HANDLE, keyOf(n), 990n)!,
      ),
    ).toBe(true);
    expectError(await post(raw, { key: stateKey(1, keyOf(n)) }), 403, 'api_disabled', { ledgerHeaders: false });
    expectError(await post(raw, { key: '0x07' }, 'application/x-bcs'), 500, 'internal_error', { ledgerHeaders: true });
    expectError(await post(raw, { key: stateKey(0, keyOf(n)) }, 'application/x-bcs'), 404, 'state_value_not_found', {
      ledgerHeaders: true,
    });
  });
});

describe('transactions and blocks', () => {
  it('by version: above the latest transaction_not_found, below the oldest version_pruned; by hash the same transaction', async () => {
    expectError(await get('/v1/transactions/by_version/1001'), 404, 'transaction_not_found', { ledgerHeaders: true });
    expectError(await get('/v1/transactions/by_version/499'), 410, 'version_pruned', { ledgerHeaders: true });
    const byVersion = await get('/v1/transactions/by_version/900');
    expect(byVersion.json()).toMatchObject({
      version: '900',
      hash: simTransactionHash(4, 900n),
      type: 'user_transaction',
    });
    expect((await get(`/v1/transactions/by_hash/${simTransactionHash(4, 900n)}`)).body.equals(byVersion.body)).toBe(
      true,
    );
    expectError(await get(`/v1/transactions/by_hash/${simTransactionHash(4, 499n)}`), 404, 'transaction_not_found', {
      ledgerHeaders: true,
    });
    expectError(await get(`/v1/transactions/by_hash/0x${'ee'.repeat(32)}`), 404, 'transaction_not_found', {
      ledgerHeaders: true,
    });
  });

  it('a submitted transaction is pending until the ledger reaches its version, then by hash and by version agree', async () => {
    const hash = node.mempool.submit(1002n);
    expect((await get(`/v1/transactions/by_hash/${hash}`)).json()).toMatchObject({ type: 'pending_transaction', hash });
    node.ledger.advance(2);
    const committed = await get(`/v1/transactions/by_hash/${hash}`);
    expect(committed.json()).toMatchObject({ type: 'user_transaction', hash, version: '1002' });
    expect((await get('/v1/transactions/by_version/1002')).body.equals(committed.body)).toBe(true);
  });

  it('a pending transaction in BCS is TransactionData::Pending (variant 1); one version takes one submitted transaction', async () => {
    const hash = node.mempool.submit(1003n);
    const pending = await get(`/v1/transactions/by_hash/${hash}`, 'application/x-bcs');
    expect([pending.headers['content-type'], pending.body[0]]).toEqual(['application/x-bcs', 1]);
    expect(() => node.mempool.submit(1003n)).toThrow(RangeError);
    node.ledger.advance(3);
    const committed = await get(`/v1/transactions/by_hash/${hash}`, 'application/x-bcs');
    expect([committed.body[0], committed.body.readBigUInt64LE(1)]).toEqual([0, 1003n]);
  });

  it('blocks: below the oldest height block_pruned, above or incomplete block_not_found; by version the block holding it', async () => {
    expectError(await get('/v1/blocks/by_height/124'), 410, 'block_pruned', { ledgerHeaders: true });
    expectError(await get('/v1/blocks/by_height/251'), 404, 'block_not_found', { ledgerHeaders: true });
    // 1000 is the first version of block 250, which ends at 1003: not complete yet.
    expectError(await get('/v1/blocks/by_height/250'), 404, 'block_not_found', { ledgerHeaders: true });
    const block = await get('/v1/blocks/by_height/200?with_transactions=true');
    expect(block.json()).toMatchObject({ block_height: '200', first_version: '800', last_version: '803' });
    expect(block.json().transactions.map((t: { version: string }) => t.version)).toEqual(['800', '801', '802', '803']);
    expect((await get('/v1/blocks/by_height/200')).json().transactions).toBeNull();
    expect((await get('/v1/blocks/by_version/802')).json()).toMatchObject({ block_height: '200' });
    expectError(await get('/v1/blocks/by_version/499'), 410, 'version_pruned', { ledgerHeaders: true });
    expectError(await get('/v1/blocks/by_height/200?with_transactions=yes'), 400, 'web_framework_error', {
      ledgerHeaders: false,
    });
  });

  it('the transaction list and the gas estimate answer with ledger headers; each route is counted under its own name', async () => {
    const list = await get('/v1/transactions?start=900&limit=3');
    expect(list.json().map((t: { version: string }) => t.version)).toEqual(['900', '901', '902']);
    const gas = await get('/v1/estimate_gas_price');
    expect(gas.json()).toEqual({ deprioritized_gas_estimate: 100, gas_estimate: 100, prioritized_gas_estimate: 150 });
    expect(gas.headers['x-node-ledger-version']).toBe('1000');
    expect(node.counters.byRoute.transactions).toBe(1);
    expect(node.counters.byRoute.gas_price).toBe(1);
  });
});
