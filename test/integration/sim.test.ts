// The simulated node over HTTP: every api.md rule it implements, with exact statuses,
// bodies and headers. Expected values come from the sim's model functions.
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerInfoJson } from '../helpers/ledger-info.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { simBalance, simLedgerInfo, simModuleJson, simTableItem, startSim, type SimNode } from '../../src/sim/index.js';
import { u64le } from '../helpers/cache.js';
import { expectError } from '../helpers/expect.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json(): unknown;
}

async function call(
  sim: SimNode,
  method: 'GET' | 'POST',
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer | Readable } = {},
): Promise<Answer> {
  const res = await request(sim.url + path, { method, headers: options.headers, body: options.body });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, json: () => JSON.parse(body.toString()) };
}

const HANDLE = '0x' + 'cd'.repeat(32);
const SIM_ADDR = '0x' + '1'.padStart(64, '0');
const OWNER = '0x' + '42'.repeat(32);
const JSON_CT = { 'content-type': 'application/json' };
const BCS_ACCEPT = { ...JSON_CT, accept: 'application/x-bcs' };
const LEDGER_HEADERS = [
  'x-node-chain-id',
  'x-node-ledger-version',
  'x-node-ledger-oldest-version',
  'x-node-ledger-timestampusec',
  'x-node-epoch',
  'x-node-block-height',
  'x-node-oldest-block-height',
];
const keys = Array.from({ length: 64 }, (_, i) => Buffer.from([i, 1]));
const PRESENT = keys.find((k) => simTableItem(HANDLE, k, 0n) !== null)!;
const ABSENT = keys.find((k) => simTableItem(HANDLE, k, 0n) === null)!;

function expectLedgerHeaders(answer: Answer, latest: bigint, oldest: bigint, chainId = 4, prefix = 'x-node-'): void {
  const info = simLedgerInfo(chainId, latest, oldest);
  expect({
    chain: answer.headers[`${prefix}chain-id`],
    version: answer.headers[`${prefix}ledger-version`],
    oldest: answer.headers[`${prefix}ledger-oldest-version`],
    ts: answer.headers[`${prefix}ledger-timestampusec`],
    epoch: answer.headers[`${prefix}epoch`],
    block: answer.headers[`${prefix}block-height`],
    oldestBlock: answer.headers[`${prefix}oldest-block-height`],
  }).toEqual({
    chain: String(chainId),
    version: String(latest),
    oldest: String(oldest),
    ts: String(info.ledgerTimestampUsec),
    epoch: String(info.epoch),
    block: String(info.blockHeight),
    oldestBlock: String(info.oldestBlockHeight),
  });
}

function expectNoLedgerHeaders(answer: Answer): void {
  for (const name of LEDGER_HEADERS) expect(answer.headers[name]).toBeUndefined();
}

const rawItem = (
  sim: SimNode,
  key: Buffer | string,
  query = '',
  headers: Record<string, string> = BCS_ACCEPT,
  handle = HANDLE,
): Promise<Answer> =>
  call(sim, 'POST', `/v1/tables/${handle}/raw_item${query}`, {
    headers,
    body: JSON.stringify({ key: typeof key === 'string' ? key : '0x' + key.toString('hex') }),
  });

const viewJson = (
  sim: SimNode,
  body: unknown,
  query = '',
  headers: Record<string, string> = JSON_CT,
): Promise<Answer> => call(sim, 'POST', `/v1/view${query}`, { headers, body: JSON.stringify(body) });

describe('simulated node over HTTP (vendor node)', () => {
  let sim: SimNode;
  beforeAll(async () => {
    sim = await startSim({ startVersion: 1000n, pruneWindow: 500n });
  });
  afterAll(async () => {
    await sim.close();
  });

  describe('GET /v1', () => {
    it('answers the ledger info JSON with the same seven values in headers', async () => {
      const answer = await call(sim, 'GET', '/v1');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/json');
      expect(answer.json()).toEqual(ledgerInfoJson(simLedgerInfo(4, 1000n, 500n), 'simulated'));
      expectLedgerHeaders(answer, 1000n, 500n);
      for (const name of ['cache-control', 'etag', 'vary', 'content-encoding'])
        expect(answer.headers[name]).toBeUndefined();
      expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
    });

    it('gzips when Accept-Encoding allows it', async () => {
      const answer = await call(sim, 'GET', '/v1', { headers: { 'accept-encoding': 'br, gzip;q=0.5' } });
      expect(answer.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(answer.body).toString())).toEqual(ledgerInfoJson(sim.ledger.info(), 'simulated'));
      const refused = await call(sim, 'GET', '/v1', { headers: { 'accept-encoding': 'gzip;q=0' } });
      expect(refused.headers['content-encoding']).toBeUndefined();
    });
  });

  describe('POST /v1/tables/{handle}/raw_item', () => {
    it('answers a present item as raw BCS bytes at latest, with ledger headers', async () => {
      const answer = await rawItem(sim, PRESENT);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/x-bcs');
      expect(answer.body).toEqual(simTableItem(HANDLE, PRESENT, 1000n));
      expectLedgerHeaders(answer, 1000n, 500n);
    });

    it('reads at a pinned version; the headers still describe the latest ledger', async () => {
      const answer = await rawItem(sim, PRESENT, '?ledger_version=0987');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(simTableItem(HANDLE, PRESENT, 987n));
      expect(answer.body).not.toEqual(simTableItem(HANDLE, PRESENT, 1000n));
      expectLedgerHeaders(answer, 1000n, 500n);
    });

    it('accepts short and upper-case handles and keys without 0x', async () => {
      const shortKey = keys.find((k) => simTableItem(SIM_ADDR, k, 0n) !== null)!;
      const short = await rawItem(sim, shortKey, '', BCS_ACCEPT, '0x1');
      expect(short.status).toBe(200);
      expect(short.body).toEqual(simTableItem(SIM_ADDR, shortKey, 1000n));
      const upper = await rawItem(
        sim,
        PRESENT.toString('hex').toUpperCase(),
        '',
        BCS_ACCEPT,
        HANDLE.slice(2).toUpperCase(),
      );
      expect(upper.status).toBe(200);
      expect(upper.body).toEqual(simTableItem(HANDLE, PRESENT, 1000n));
    });

    it('answers an absent item 404 table_item_not_found with ledger headers', async () => {
      const answer = await rawItem(sim, ABSENT, '?ledger_version=999');
      expectError(answer, 404, 'table_item_not_found');
      expect((answer.json() as { message: string }).message).toBe(
        `Table Item not found by Table handle(${HANDLE}), Table key(0x${ABSENT.toString('hex')}) and Ledger version(999)`,
      );
      expectLedgerHeaders(answer, 1000n, 500n);
    });

    it('refuses anything but a BCS Accept with 403 api_disabled, without ledger headers', async () => {
      for (const accept of [undefined, 'application/json', 'application/json, application/x-bcs', 'text/html']) {
        const headers: Record<string, string> = accept === undefined ? JSON_CT : { ...JSON_CT, accept };
        const answer = await rawItem(sim, PRESENT, '', headers);
        expectError(answer, 403, 'api_disabled');
        expect((answer.json() as { message: string }).message).toBe('Only BCS is supported as an AcceptType.');
        expectNoLedgerHeaders(answer);
      }
      // The contract (api.md §3): the first of application/json and application/x-bcs that appears wins,
      // parameters (weights too) ignored.
      const formats: Array<[string, number]> = [
        ['application/x-bcs;q=0.9, application/json', 200],
        ['application/json;q=0.5, application/x-bcs', 403],
        ['application/x-bcs;q=0.9, text/html', 200],
        ['application/x-bcs; charset=utf-8', 200],
        ['application/x-bcs;', 200],
        ['APPLICATION/X-BCS', 200],
        ['not a type, application/x-bcs', 200],
        ['text/html, application/json;q=0, application/x-bcs', 403],
      ];
      for (const [accept, status] of formats) {
        const answer = await rawItem(sim, PRESENT, '', { ...JSON_CT, accept });
        expect([accept, answer.status]).toEqual([accept, status]);
      }
    });

    it('answers 404 version_not_found above latest and 410 version_pruned below oldest, with ledger headers', async () => {
      const ahead = await rawItem(sim, PRESENT, '?ledger_version=1001');
      expectError(ahead, 404, 'version_not_found');
      expectLedgerHeaders(ahead, 1000n, 500n);
      const pruned = await rawItem(sim, PRESENT, '?ledger_version=499');
      expectError(pruned, 410, 'version_pruned');
      expect((pruned.json() as { message: string }).message).toBe('Ledger version(499) has been pruned');
      expectLedgerHeaders(pruned, 1000n, 500n);
      expect((await rawItem(sim, PRESENT, '?ledger_version=500')).status).toBe(200);
      // A leading '+' (sent as %2B) and zeros: the same version, as Rust's u64::from_str reads it.
      expect((await rawItem(sim, PRESENT, '?ledger_version=%2B0500')).status).toBe(200);
    });

    it('answers malformed input 400 web_framework_error without ledger headers', async () => {
      const cases: Array<Promise<Answer>> = [
        // The contract (api.md §2): a u64 is digits after an optional '+' (sent as %2B), so a bare '+' (a
        // space in a query string), '%2B' alone or twice are none; '0x' is no handle.
        ...['-1', '+5', '%2B', '%2B%2B5', '1.0', 'abc', '18446744073709551616', ''].map((v) =>
          rawItem(sim, PRESENT, `?ledger_version=${v}`),
        ),
        rawItem(sim, PRESENT, '', BCS_ACCEPT, '0xzz'),
        rawItem(sim, PRESENT, '', BCS_ACCEPT, '0x'),
        rawItem(sim, PRESENT, '', BCS_ACCEPT, 'cd'.repeat(31)),
        rawItem(sim, PRESENT, '', BCS_ACCEPT, '0x' + '1'.repeat(65)),
        rawItem(sim, PRESENT, '', BCS_ACCEPT, '%zz'),
        rawItem(sim, '0xabc'),
        rawItem(sim, 'zz'),
        call(sim, 'POST', `/v1/tables/${HANDLE}/raw_item`, { headers: BCS_ACCEPT, body: '{"key":' }),
        call(sim, 'POST', `/v1/tables/${HANDLE}/raw_item`, { headers: BCS_ACCEPT, body: '{}' }),
        call(sim, 'POST', `/v1/tables/${HANDLE}/raw_item`, { headers: BCS_ACCEPT, body: '{"key":1}' }),
        call(sim, 'POST', `/v1/tables/${HANDLE}/raw_item`, {
          headers: { accept: 'application/x-bcs', 'content-type': 'text/plain' },
          body: '{"key":"0x01"}',
        }),
        call(sim, 'POST', `/v1/tables/${HANDLE}/raw_item`, {
          headers: { accept: 'application/x-bcs' },
          body: '{"key":"0x01"}',
        }),
      ];
      for (const answer of await Promise.all(cases)) {
        expectError(answer, 400, 'web_framework_error');
        expectNoLedgerHeaders(answer);
      }
    });
  });

  describe('POST /v1/view', () => {
    it('answers JSON: one element per return value, numbers as strings, with gas used', async () => {
      const balance = await viewJson(sim, { function: '0x1::sim::balance', type_arguments: [], arguments: [OWNER] });
      expect(balance.status).toBe(200);
      expect(balance.headers['content-type']).toBe('application/json');
      expect(balance.json()).toEqual([String(simBalance(OWNER, 1000n))]);
      expect(balance.headers['x-node-gas-used']).toBe('7');
      expectLedgerHeaders(balance, 1000n, 500n);

      const add = await viewJson(sim, {
        function: '0x1::sim::add',
        type_arguments: [],
        arguments: ['18446744073709551615', 1],
      });
      expect(add.json()).toEqual(['18446744073709551616']);
      expect(add.headers['x-node-gas-used']).toBe('3');

      const pair = await viewJson(sim, { function: `${SIM_ADDR}::sim::pair`, type_arguments: [], arguments: ['10'] });
      expect(pair.json()).toEqual(['5', true]);
      expect(pair.headers['x-node-gas-used']).toBe('4');

      const name = await viewJson(sim, {
        function: '0x1::sim::type_name',
        type_arguments: ['0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>'],
        arguments: [],
      });
      expect(name.json()).toEqual([`${SIM_ADDR}::coin::CoinStore<${SIM_ADDR}::aptos_coin::AptosCoin>`]);
      expect(name.headers['x-node-gas-used']).toBe('5');

      const burn = await viewJson(sim, { function: '0x1::sim::burn', type_arguments: [], arguments: ['1000000'] });
      expect(burn.json()).toEqual(['1000000']);
      expect(burn.headers['x-node-gas-used']).toBe('11');
    });

    it('reads at a pinned version', async () => {
      const answer = await viewJson(
        sim,
        { function: '0x1::sim::balance', type_arguments: [], arguments: [OWNER] },
        '?ledger_version=600',
      );
      expect(answer.json()).toEqual([String(simBalance(OWNER, 600n))]);
      expectLedgerHeaders(answer, 1000n, 500n);
    });

    it('answers BCS when Accept selects it: uleb128(count) ‖ each value', async () => {
      const pair = await viewJson(
        sim,
        { function: '0x1::sim::pair', type_arguments: [], arguments: ['7'] },
        '',
        BCS_ACCEPT,
      );
      expect(pair.status).toBe(200);
      expect(pair.headers['content-type']).toBe('application/x-bcs');
      expect(pair.body).toEqual(Buffer.concat([Buffer.from([2]), u64le(3n), Buffer.from([0])]));
      expect(pair.headers['x-node-gas-used']).toBe('4');
      const name = await viewJson(
        sim,
        { function: '0x1::sim::type_name', type_arguments: ['u8'], arguments: [] },
        '',
        BCS_ACCEPT,
      );
      expect(name.body).toEqual(Buffer.from([1, 2, 0x75, 0x38]));
    });

    it('takes a BCS request body (the configured vendor media type), answering JSON or BCS', async () => {
      const body = Buffer.from(
        encodeViewRequest({
          address: SIM_ADDR,
          module: 'sim',
          function: 'balance',
          typeArgs: [],
          args: [Buffer.from(OWNER.slice(2), 'hex')],
        }),
      );
      const headers = { 'content-type': 'application/x.node.view_function+bcs' };
      const json = await call(sim, 'POST', '/v1/view', { headers: { ...headers, accept: 'application/json' }, body });
      expect(json.status).toBe(200);
      expect(json.json()).toEqual([String(simBalance(OWNER, 1000n))]);
      const bcs = await call(sim, 'POST', '/v1/view', { headers: { ...headers, accept: 'application/x-bcs' }, body });
      expect(bcs.body).toEqual(Buffer.concat([Buffer.from([1]), u64le(simBalance(OWNER, 1000n))]));
      expect(bcs.headers['x-node-gas-used']).toBe('7');

      const shortArg = Buffer.from(
        encodeViewRequest({
          address: SIM_ADDR,
          module: 'sim',
          function: 'burn',
          typeArgs: [],
          args: [Buffer.alloc(4)],
        }),
      );
      const bad = await call(sim, 'POST', '/v1/view', { headers, body: shortArg });
      expectError(bad, 400, 'invalid_input');
      expectLedgerHeaders(bad, 1000n, 500n);
    });

    it('answers a Move abort 400 invalid_input with vm_error_code 4016 and ledger headers, no gas', async () => {
      const answer = await viewJson(sim, { function: '0x1::sim::always_abort', type_arguments: [], arguments: [] });
      expectError(answer, 400, 'invalid_input', { vmErrorCode: 4016 });
      expectLedgerHeaders(answer, 1000n, 500n);
      expect(answer.headers['x-node-gas-used']).toBeUndefined();
    });

    it('answers out of gas 400 invalid_input with vm_error_code 4002', async () => {
      const answer = await viewJson(sim, { function: '0x1::sim::burn', type_arguments: [], arguments: ['1000001'] });
      expectError(answer, 400, 'invalid_input', { vmErrorCode: 4002 });
      expectLedgerHeaders(answer, 1000n, 500n);
    });

    it('answers unknown functions, modules and wrong arguments 400 invalid_input (vm code null) with ledger headers', async () => {
      const bodies = [
        { function: '0x1::sim::nope', type_arguments: [], arguments: [] },
        { function: '0x1::nope::add', type_arguments: [], arguments: ['1', '2'] },
        { function: '0x2::sim::add', type_arguments: [], arguments: ['1', '2'] },
        { function: '0x1::sim::poke', type_arguments: [], arguments: [] },
        { function: '0x1::sim::add', type_arguments: [], arguments: ['1'] },
        { function: '0x1::sim::add', type_arguments: [], arguments: ['1', 'x'] },
        { function: '0x1::sim::add', type_arguments: [], arguments: ['1', '18446744073709551616'] },
        { function: '0x1::sim::balance', type_arguments: [], arguments: [5] },
        { function: '0x1::sim::type_name', type_arguments: [], arguments: [] },
        { function: '0x1::sim::add', type_arguments: ['u8'], arguments: ['1', '2'] },
      ];
      for (const body of bodies) {
        const answer = await viewJson(sim, body);
        expectError(answer, 400, 'invalid_input');
        expectLedgerHeaders(answer, 1000n, 500n);
      }
    });

    it('checks ledger_version like raw_item: 404 ahead, 410 pruned, 400 not a u64', async () => {
      const body = { function: '0x1::sim::add', type_arguments: [], arguments: ['1', '2'] };
      expectError(await viewJson(sim, body, '?ledger_version=2000'), 404, 'version_not_found');
      expectError(await viewJson(sim, body, '?ledger_version=1'), 410, 'version_pruned');
      const bad = await viewJson(sim, body, '?ledger_version=x');
      expectError(bad, 400, 'web_framework_error');
      expectNoLedgerHeaders(bad);
    });

    it('answers malformed requests 400 web_framework_error without ledger headers', async () => {
      const cases = [
        viewJson(sim, { type_arguments: [], arguments: [] }),
        viewJson(sim, { function: '0x1::sim::add', arguments: [] }),
        viewJson(sim, { function: '0x1::sim::add', type_arguments: [] }),
        viewJson(sim, { function: '0x1::sim', type_arguments: [], arguments: [] }),
        viewJson(sim, { function: 'sim::add::x', type_arguments: [], arguments: [] }),
        viewJson(sim, { function: '0x1::sim::type_name', type_arguments: ['vector<'], arguments: [] }),
        viewJson(sim, { function: '0x1::sim::type_name', type_arguments: [1], arguments: [] }),
        viewJson(sim, [1, 2]),
        call(sim, 'POST', '/v1/view', { headers: JSON_CT, body: 'not json' }),
        call(sim, 'POST', '/v1/view', { headers: { 'content-type': 'text/plain' }, body: '{}' }),
        call(sim, 'POST', '/v1/view', {
          headers: { 'content-type': 'application/x.aptos.view_function+bcs' },
          body: Buffer.from([0]),
        }),
      ];
      for (const answer of await Promise.all(cases)) {
        expectError(answer, 400, 'web_framework_error');
        expectNoLedgerHeaders(answer);
      }
    });

    it('a BCS body that does not decode: 400 invalid_input with the ledger headers, after the version checks (view_function.rs)', async () => {
      const headers = { 'content-type': 'application/x.node.view_function+bcs' };
      const body = Buffer.from([1, 2, 3]);
      const bad = await call(sim, 'POST', '/v1/view', { headers, body });
      expectError(bad, 400, 'invalid_input');
      expect((bad.json() as { message: string }).message).toBe(
        'Failed to deserialize input into ViewRequest: unexpected end of input',
      );
      expectLedgerHeaders(bad, 1000n, 500n);
      expectError(await call(sim, 'POST', '/v1/view?ledger_version=1001', { headers, body }), 404, 'version_not_found');
      expectError(await call(sim, 'POST', '/v1/view?ledger_version=499', { headers, body }), 410, 'version_pruned');
      const notU64 = await call(sim, 'POST', '/v1/view?ledger_version=x', { headers, body });
      expectError(notU64, 400, 'web_framework_error');
      expectNoLedgerHeaders(notU64);
    });
  });

  describe('GET /v1/accounts/{addr}/module/{name}', () => {
    it('answers the 0x1::sim module ABI with ledger headers, for any address form', async () => {
      for (const addr of ['0x1', SIM_ADDR, SIM_ADDR.slice(2)]) {
        const answer = await call(sim, 'GET', `/v1/accounts/${addr}/module/sim`);
        expect(answer.status).toBe(200);
        expect(answer.headers['content-type']).toBe('application/json');
        expect(answer.json()).toEqual(simModuleJson());
        expectLedgerHeaders(answer, 1000n, 500n);
      }
    });

    it('answers 404 module_not_found for other modules, 404/410 for versions out of range', async () => {
      const missing = await call(sim, 'GET', '/v1/accounts/0x1/module/nope');
      expectError(missing, 404, 'module_not_found');
      expectLedgerHeaders(missing, 1000n, 500n);
      expectError(await call(sim, 'GET', '/v1/accounts/0x2/module/sim?ledger_version=600'), 404, 'module_not_found');
      expectError(await call(sim, 'GET', '/v1/accounts/0x1/module/sim?ledger_version=1001'), 404, 'version_not_found');
      expectError(await call(sim, 'GET', '/v1/accounts/0x1/module/sim?ledger_version=1'), 410, 'version_pruned');
      const bad = await call(sim, 'GET', '/v1/accounts/0xzz/module/sim');
      expectError(bad, 400, 'web_framework_error');
      expectNoLedgerHeaders(bad);
    });
  });

  describe('framing and unknown routes', () => {
    it('answers unknown paths and methods with a 404 error body', async () => {
      for (const [method, path] of [
        ['GET', '/v1/nope'],
        ['GET', '/'],
        ['GET', '/v1/view'],
        ['POST', '/v1'],
      ] as const) {
        const answer = await call(sim, method, path);
        expectError(answer, 404, 'web_framework_error');
        expectNoLedgerHeaders(answer);
      }
    });

    it('sends every header name lower-case on the wire', async () => {
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(sim.port, '127.0.0.1', () =>
          socket.end('GET /v1 HTTP/1.1\r\nHost: sim\r\nConnection: close\r\n\r\n'),
        );
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      const [head] = raw.split('\r\n\r\n');
      const names = head
        .split('\r\n')
        .slice(1)
        .map((line) => line.slice(0, line.indexOf(':')));
      expect(names).toContain('x-node-ledger-version');
      expect(names).toContain('connection');
      expect(names).toContain('date');
      expect(names.filter((n) => n !== n.toLowerCase())).toEqual([]);
    });

    it('refuses chunked request bodies with 411', async () => {
      const answer = await call(sim, 'POST', '/v1/view', {
        headers: JSON_CT,
        body: Readable.from([
          Buffer.from('{"function":"0x1::sim::add",'),
          Buffer.from('"type_arguments":[],"arguments":["1","2"]}'),
        ]),
      });
      expect(answer.status).toBe(411);
      const sent = sim.counters.requests.at(-1)!;
      expect([sent.headers['transfer-encoding'], sent.headers['content-length']]).toEqual(['chunked', undefined]);
      expect((answer.json() as { error_code: string }).error_code).toBe('web_framework_error');
      expectNoLedgerHeaders(answer);
    });

    it('refuses bodies over 8 MiB with 400', async () => {
      const answer = await call(sim, 'POST', `/v1/tables/${HANDLE}/raw_item`, {
        headers: BCS_ACCEPT,
        body: JSON.stringify({ key: '0x' + '00'.repeat(4 * 1024 * 1024 + 1) }),
      });
      expectError(answer, 400, 'web_framework_error');
      expectNoLedgerHeaders(answer);
    });
  });

  it('follows the ledger as it advances and prunes', async () => {
    sim.ledger.advance(20);
    const answer = await rawItem(sim, PRESENT);
    expect(answer.body).toEqual(simTableItem(HANDLE, PRESENT, 1020n));
    expectLedgerHeaders(answer, 1020n, 520n);
    expectError(await rawItem(sim, PRESENT, '?ledger_version=510'), 410, 'version_pruned');
  });
});

describe('simulated node with vendor aptos', () => {
  let sim: SimNode;
  beforeAll(async () => {
    sim = await startSim({ vendor: 'aptos', chainId: 2, gitHash: 'abc123', gzip: false });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('uses the x-aptos- header prefix and chain id', async () => {
    const answer = await call(sim, 'GET', '/v1', { headers: { 'accept-encoding': 'gzip' } });
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect((answer.json() as { git_hash: string; chain_id: number }).git_hash).toBe('abc123');
    expectLedgerHeaders(answer, 1000n, 0n, 2, 'x-aptos-');
    expect(answer.headers['x-node-ledger-version']).toBeUndefined();
  });

  it('takes application/x.aptos.view_function+bcs and sets x-aptos-gas-used', async () => {
    const body = Buffer.from(
      encodeViewRequest({
        address: SIM_ADDR,
        module: 'sim',
        function: 'add',
        typeArgs: [],
        args: [u64le(2n), u64le(3n)],
      }),
    );
    const answer = await call(sim, 'POST', '/v1/view', {
      headers: { 'content-type': 'application/x.aptos.view_function+bcs' },
      body,
    });
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual(['5']);
    expect(answer.headers['x-aptos-gas-used']).toBe('3');
    const other = await call(sim, 'POST', '/v1/view', {
      headers: { 'content-type': 'application/x.node.view_function+bcs' },
      body,
    });
    expectError(other, 400, 'web_framework_error');
  });
});
