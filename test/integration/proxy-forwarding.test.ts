// What the proxy forwards: answers byte-identical to the node's own, and the
// request that reaches the node (Content-Length, identity encoding, canonical
// path, the client's body, nothing of the client's headers but the name of its
// SDK).
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { addressBytes } from '../../src/wire/address.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import {
  simBalance,
  simLedgerInfo,
  simTableItem,
  SIM_MODULE_ADDRESS,
  type SimNode,
  type SimRecordedRequest,
} from '../../src/sim/index.js';
import { call, HANDLE, ledgerHeaders, proxy, rawItem, sim, viewJson, type Reply, QUIET } from '../helpers/proxy.js';
import { ABSENT, hex, OWNER, PRESENT, presentKeyOf, u64le } from '../helpers/cache.js';
import { until } from '../helpers/until.js';

const ONE = '0x' + '1'.padStart(64, '0');
const PRESENT_AT_ONE = presentKeyOf(ONE);

function bcsView(fn: string, args: Uint8Array[], typeArgs: [] = []): Buffer {
  return Buffer.from(encodeViewRequest({ address: SIM_MODULE_ADDRESS, module: 'sim', function: fn, typeArgs, args }));
}

interface Exchange {
  path: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** The node's own answer to the same request, asked directly, uncompressed. */
function direct(node: SimNode, ex: Exchange): Promise<Reply> {
  return call(node.url, ex.path, {
    method: 'POST',
    headers: { ...ex.headers, 'accept-encoding': 'identity' },
    body: ex.body,
  });
}

/** Same status, body bytes, content type, gas used and seven ledger headers. */
function expectIdentical(viaProxy: Reply, fromNode: Reply, prefix = 'x-node-'): void {
  expect(viaProxy.status).toBe(fromNode.status);
  expect(viaProxy.body.toString('hex')).toBe(fromNode.body.toString('hex'));
  expect(viaProxy.headers['content-type']).toBe(fromNode.headers['content-type']);
  expect(viaProxy.headers[`${prefix}gas-used`]).toBe(fromNode.headers[`${prefix}gas-used`]);
  expect(Object.keys(ledgerHeaders(fromNode, prefix))).toHaveLength(7);
  expect(ledgerHeaders(viaProxy, prefix)).toEqual(ledgerHeaders(fromNode, prefix));
  expect(viaProxy.headers['content-encoding']).toBeUndefined();
  // Nodes send none of these, and neither does the proxy; its Vary names only Origin, as CORS is on (api.md §10.1).
  for (const name of ['cache-control', 'etag']) expect(viaProxy.headers[name], name).toBeUndefined();
  expect(fromNode.headers.vary).toBeUndefined();
  expect(viaProxy.headers.vary).toBe('Origin');
}

/** The requests to a served endpoint that reached the node (probes left out). */
function reads(node: SimNode): SimRecordedRequest[] {
  return node.counters.requests.filter((r) => r.method === 'POST');
}

function lastRead(node: SimNode): SimRecordedRequest {
  const all = reads(node);
  expect(all.length).toBeGreaterThan(0);
  return all[all.length - 1];
}

describe('proxy forwarding: byte-identical answers', () => {
  const exchanges = (version: string): Array<[string, Exchange]> => [
    [
      'raw_item',
      {
        path: `/v1/tables/${HANDLE}/raw_item${version}`,
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: JSON.stringify({ key: hex(PRESENT) }),
      },
    ],
    [
      'view JSON→JSON balance',
      {
        path: `/v1/view${version}`,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [OWNER] }),
      },
    ],
    [
      'view JSON→JSON pair',
      {
        path: `/v1/view${version}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ function: '0x1::sim::pair', type_arguments: [], arguments: ['41'] }),
      },
    ],
    [
      'view JSON→JSON type_name<T>',
      {
        path: `/v1/view${version}`,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          function: '0x1::sim::type_name',
          type_arguments: ['vector<0x1::string::String>'],
          arguments: [],
        }),
      },
    ],
    [
      'view JSON→BCS',
      {
        path: `/v1/view${version}`,
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: JSON.stringify({
          function: '0x1::sim::add',
          type_arguments: [],
          arguments: ['18446744073709551615', '7'],
        }),
      },
    ],
    [
      'view BCS→JSON',
      {
        path: `/v1/view${version}`,
        headers: { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/json' },
        body: bcsView('balance', [addressBytes(OWNER)]),
      },
    ],
    [
      'view BCS→BCS',
      {
        path: `/v1/view${version}`,
        headers: { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/x-bcs' },
        body: bcsView('pair', [u64le(10n)]),
      },
    ],
    [
      'view 400 invalid_input',
      {
        path: `/v1/view${version}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ function: '0x1::sim::always_abort', type_arguments: [], arguments: [] }),
      },
    ],
    [
      'raw_item 404',
      {
        path: `/v1/tables/${HANDLE}/raw_item${version}`,
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: JSON.stringify({ key: hex(ABSENT) }),
      },
    ],
  ];

  for (const [label, version] of [
    ['latest', ''],
    ['pinned', '?ledger_version=995'],
  ] as const) {
    it(`${label}: every endpoint and format answers exactly as the node does`, async () => {
      const node = await sim();
      const { url } = await proxy([node], QUIET);
      for (const [name, ex] of exchanges(version)) {
        const before = reads(node).length;
        const viaProxy = await call(url, ex.path, { method: 'POST', headers: ex.headers, body: ex.body });
        expect(reads(node).length, `${name}: one node call`).toBe(before + 1);
        expect(viaProxy.headers['x-cache'], name).toBe('MISS');
        const fromNode = await direct(node, ex);
        expect([200, 400, 404], name).toContain(fromNode.status);
        expectIdentical(viaProxy, fromNode);
      }
      // Spot checks against the model, so "identical" is not identical nonsense.
      const v = version === '' ? 1000n : 995n;
      const raw = await rawItem(url, hex(PRESENT), version === '' ? {} : { version: 995 });
      expect(raw.body).toEqual(simTableItem(HANDLE, PRESENT, v));
      const balance = await viewJson(url, '0x1::sim::balance', [OWNER], version === '' ? {} : { version: 995 });
      expect(balance.json()).toEqual([String(simBalance(OWNER, v))]);
      expect(balance.headers['x-node-gas-used']).toBe('7');
    });
  }

  it('a pinned HIT replays the stored bytes and gas used with the freshest ledger headers', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const ex: Exchange = {
      path: '/v1/view?ledger_version=990',
      headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
      body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['1', '2'] }),
    };
    const miss = await call(url, ex.path, { headers: ex.headers, body: ex.body });
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.headers['x-cache-tier']).toBeUndefined();
    node.ledger.advance(25);
    // A latest read teaches the proxy the new ledger.
    const latest = await viewJson(url, '0x1::sim::add', ['5', '5']);
    expect(latest.headers['x-node-ledger-version']).toBe('1025');
    const hit = await call(url, ex.path, { headers: ex.headers, body: ex.body });
    expect(hit.status).toBe(200);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers['x-cache-tier']).toBe('memory');
    expect(hit.body).toEqual(miss.body);
    expect(hit.headers['content-type']).toBe('application/x-bcs');
    expect(hit.headers['x-node-gas-used']).toBe('3');
    const info = simLedgerInfo(4, 1025n, 0n);
    expect(ledgerHeaders(hit)).toEqual({
      'x-node-chain-id': '4',
      'x-node-ledger-version': '1025',
      'x-node-ledger-oldest-version': '0',
      'x-node-ledger-timestampusec': String(info.ledgerTimestampUsec),
      'x-node-epoch': String(info.epoch),
      'x-node-block-height': String(info.blockHeight),
      'x-node-oldest-block-height': '0',
    });
    expect(reads(node)).toHaveLength(2);
  });
});

describe('proxy forwarding: the request that reaches the node', () => {
  it('POST with Content-Length, identity encoding, the canonical handle, the client body bytes and a canonical ledger_version', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const body = `{ "key" : "${hex(PRESENT_AT_ONE).toUpperCase().replace('0X', '0x')}" }`;
    const reply = await call(url, '/v1/tables/0x1/raw_item?ledger_version=007', {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        accept: 'application/x-bcs',
        'accept-encoding': 'gzip, br',
      },
      body,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(simTableItem(ONE, PRESENT_AT_ONE, 7n));
    const reached = lastRead(node);
    expect(reached.method).toBe('POST');
    expect(reached.url).toBe(`/v1/tables/${ONE}/raw_item?ledger_version=7`);
    expect(reached.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(reached.headers['transfer-encoding']).toBeUndefined();
    expect(reached.headers['accept-encoding']).toBe('identity');
    expect(reached.headers['content-type']).toBe('application/json');
    expect(reached.headers.accept).toBe('application/x-bcs');
    expect(reached.body.toString('utf8')).toBe(body);
    expect(reads(node)).toHaveLength(1);

    // A view with an odd-looking version and a BCS body: bytes unchanged.
    const bcs = bcsView('add', [u64le(2n), u64le(3n)]);
    const v = await call(url, '/v1/view?ledger_version=000990', {
      method: 'POST',
      headers: { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/json' },
      body: bcs,
    });
    expect(v.json()).toEqual(['5']);
    const viewReached = lastRead(node);
    expect(viewReached.url).toBe('/v1/view?ledger_version=990');
    expect(viewReached.headers['content-type']).toBe('application/x.node.view_function+bcs');
    expect(viewReached.headers.accept).toBe('application/json');
    expect(viewReached.headers['content-length']).toBe(String(bcs.length));
    expect(viewReached.body.equals(bcs)).toBe(true);
  });

  it('a chunked client body reaches the node with Content-Length', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const json = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['40', '2'] });
    const reply = await call(url, '/v1/view', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.from([Buffer.from(json.slice(0, 7)), Buffer.from(json.slice(7))]) as unknown as Buffer,
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual(['42']);
    const reached = lastRead(node);
    expect(reached.headers['transfer-encoding']).toBeUndefined();
    expect(reached.headers['content-length']).toBe(String(json.length));
    expect(reached.body.toString()).toBe(json);
  });

  it("the client's Host, X-Forwarded-* and other headers neither pick the upstream nor reach it", async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const hostile = {
      host: 'evil.example:9',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '6.6.6.6',
      forwarded: 'host=evil.example;proto=https',
      'x-real-ip': '6.6.6.6',
      authorization: 'Bearer secret',
      cookie: 'session=secret',
      'x-client-thing': 'mine',
    };
    const reply = await call(url, `/v1/tables/${HANDLE}/raw_item`, {
      method: 'POST',
      headers: { ...hostile, 'content-type': 'application/json', accept: 'application/x-bcs' },
      body: JSON.stringify({ key: hex(PRESENT) }),
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(simTableItem(HANDLE, PRESENT, 1000n));
    const view = await call(url, '/v1/view', {
      method: 'POST',
      headers: { ...hostile, 'content-type': 'application/json' },
      body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['1', '1'] }),
    });
    expect(view.json()).toEqual(['2']);
    expect(reads(node)).toHaveLength(2);
    for (const reached of reads(node)) {
      expect(reached.headers.host).toBe(`127.0.0.1:${node.port}`);
      for (const name of Object.keys(hostile).filter((n) => n !== 'host'))
        expect(reached.headers[name], name).toBeUndefined();
      // x-request-id: the proxy's own (api.md §10.5), on every node call made for a request.
      const allowed = [
        'host',
        'connection',
        'content-type',
        'accept',
        'accept-encoding',
        'content-length',
        'user-agent',
        'x-request-id',
      ];
      expect(Object.keys(reached.headers).filter((n) => !allowed.includes(n))).toEqual([]);
    }
  });
});

describe("proxy forwarding: vendor 'aptos'", () => {
  it('x-aptos- headers, the aptos BCS media type accepted, the x.node one refused', async () => {
    const node = await sim({ vendor: 'aptos' });
    const { url } = await proxy([node], { ...QUIET, vendor: 'aptos' });
    const ex: Exchange = {
      path: '/v1/view?ledger_version=999',
      headers: { 'content-type': 'application/x.aptos.view_function+bcs', accept: 'application/json' },
      body: bcsView('add', [u64le(20n), u64le(22n)]),
    };
    const viaProxy = await call(url, ex.path, { headers: ex.headers, body: ex.body });
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.json()).toEqual(['42']);
    expect(viaProxy.headers['x-aptos-gas-used']).toBe('3');
    expectIdentical(viaProxy, await direct(node, ex), 'x-aptos-');
    expect(Object.keys(viaProxy.headers).filter((h) => h.startsWith('x-node-'))).toEqual([]);

    const raw = await rawItem(url, hex(PRESENT));
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual(simTableItem(HANDLE, PRESENT, 1000n));
    expect(raw.headers['x-aptos-ledger-version']).toBe('1000');
    expect(Object.keys(ledgerHeaders(raw, 'x-aptos-'))).toHaveLength(7);
    expect(ledgerHeaders(raw)).toEqual({});

    const served = node.counters.byRoute.view;
    const refused = await call(url, '/v1/view', {
      headers: { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/json' },
      body: bcsView('add', [u64le(1n), u64le(2n)]),
    });
    expect(refused.status).toBe(400);
    const body = refused.json();
    expect(body.error_code).toBe('web_framework_error');
    expect(body.vm_error_code).toBeNull();
    expect(body.message).toContain('application/x.aptos.view_function+bcs');
    expect(ledgerHeaders(refused, 'x-aptos-')).toEqual({});
    expect(node.counters.byRoute.view).toBe(served);

    // Errors carry the aptos prefix too.
    const future = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 5000 });
    expect(future.status).toBe(404);
    expect(future.json()).toEqual({
      message: 'Ledger version(5000) not found, latest version is 1000',
      error_code: 'version_not_found',
      vm_error_code: null,
    });
    expect(future.headers['x-aptos-ledger-version']).toBe('1000');
  });
});

describe('proxy forwarding: which SDK called', () => {
  const SDK = 'aptos-typescript-sdk/1.39.0';
  const sdkOf = (r: SimRecordedRequest): string | string[] | undefined => r.headers['x-aptos-client'];
  const viewBody = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['1', '1'] });

  it("the client's x-<vendor>-client goes on with every node call made for it: a pinned miss, a latest read, passthrough", async () => {
    const node = await sim({ vendor: 'aptos' });
    const { url } = await proxy([node], { ...QUIET, vendor: 'aptos' });
    const headers = { 'x-aptos-client': SDK };
    expect(
      (
        await call(url, `/v1/tables/${HANDLE}/raw_item?ledger_version=990`, {
          headers: { ...headers, 'content-type': 'application/json', accept: 'application/x-bcs' },
          body: JSON.stringify({ key: hex(PRESENT) }),
        })
      ).status,
    ).toBe(200);
    expect(
      (await call(url, '/v1/view', { headers: { ...headers, 'content-type': 'application/json' }, body: viewBody }))
        .status,
    ).toBe(200);
    expect((await call(url, '/v1/estimate_gas_price', { headers })).status).toBe(200);
    const calls = node.counters.requests.filter((r) => r.url !== '/v1');
    expect(calls.map((r) => [r.url.split('?')[0], sdkOf(r)])).toEqual([
      [`/v1/tables/${HANDLE}/raw_item`, SDK],
      ['/v1/view', SDK],
      ['/v1/estimate_gas_price', SDK],
    ]);
    // Another vendor's name is a header like any other: not passed on with a read.
    const other = await call(url, '/v1/view?ledger_version=991', {
      headers: { 'x-node-client': SDK, 'content-type': 'application/json' },
      body: viewBody,
    });
    expect(other.status).toBe(200);
    expect(node.counters.requests.at(-1)!.headers['x-node-client']).toBeUndefined();
  });

  it('only a well-formed one goes on (1 to 128 visible ASCII characters), on reads and passthrough alike', async () => {
    const node = await sim({ vendor: 'aptos' });
    const { url } = await proxy([node], { ...QUIET, vendor: 'aptos' });
    const bad = ['x'.repeat(129), 'sdk/\u00e9', 'a\tb'];
    let version = 900;
    for (const value of bad) {
      const label = JSON.stringify(value.slice(0, 20));
      const read = await call(url, `/v1/view?ledger_version=${version++}`, {
        headers: { 'x-aptos-client': value, 'content-type': 'application/json' },
        body: viewBody,
      });
      expect(read.status, label).toBe(200);
      expect(sdkOf(node.counters.requests.at(-1)!), `${label} read`).toBeUndefined();
      expect((await call(url, '/v1/estimate_gas_price', { headers: { 'x-aptos-client': value } })).status, label).toBe(
        200,
      );
      expect(sdkOf(node.counters.requests.at(-1)!), `${label} passthrough`).toBeUndefined();
    }
    const longest = `sdk/${'9'.repeat(124)}`;
    expect((await call(url, '/v1/estimate_gas_price', { headers: { 'x-aptos-client': longest } })).status).toBe(200);
    expect(sdkOf(node.counters.requests.at(-1)!)).toBe(longest);
  });

  it("a call shared by several clients carries the first one's", async () => {
    const node = await sim({ vendor: 'aptos' });
    const { url } = await proxy([node], { ...QUIET, vendor: 'aptos' });
    node.faults.set({ mode: 'slow', delayMs: 300, routes: ['view'], count: 1 });
    const send = (sdk: string): Promise<Reply> =>
      call(url, '/v1/view', { headers: { 'x-aptos-client': sdk, 'content-type': 'application/json' }, body: viewBody });
    const first = send('first-sdk/1');
    await until(() => node.counters.byRoute.view === 1, 2000, 'the first call at the node');
    const [a, b] = await Promise.all([first, send('second-sdk/2')]);
    expect([a.status, b.status, b.headers['x-cache']]).toEqual([200, 200, 'COALESCED']);
    expect(node.counters.byRoute.view).toBe(1);
    expect(sdkOf(node.counters.requests.find((r) => r.url.startsWith('/v1/view'))!)).toBe('first-sdk/1');
  });
});
