// Every other /v1 route passes through to a node unchanged (status, body bytes,
// ledger headers), marked X-Cache: BYPASS. Nothing in a request (path tricks,
// absolute-form request lines, Host, X-Forwarded-Host) makes the proxy call anything
// but a configured node's /v1. passthrough: false turns those routes into 404s.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { call, ledgerHeaders, proxy, sim, type Reply, QUIET, QUIET_ROUTING } from '../helpers/proxy.js';
import { decoy, rawHttp, type RawReply } from '../helpers/raw-socket.js';
import { until } from '../helpers/until.js';
import { expectNodeErrorBody } from '../helpers/expect.js';

/** Same status, body bytes, content type and ledger headers as the node's own answer. */
function expectSameAsNode(viaProxy: Reply, fromNode: Reply): void {
  expect(viaProxy.status).toBe(fromNode.status);
  expect(viaProxy.headers['content-type']).toBe(fromNode.headers['content-type']);
  expect(viaProxy.body.toString('hex')).toBe(fromNode.body.toString('hex'));
  expect(ledgerHeaders(viaProxy)).toEqual(ledgerHeaders(fromNode));
  expect(viaProxy.headers['x-cache']).toBe('BYPASS');
}

function decoded(reply: RawReply): Buffer {
  return reply.headers['content-encoding'] === 'gzip' ? gunzipSync(reply.body) : reply.body;
}

/** Every request that reached the node stayed on its /v1 with a clean path. */
function expectOnlyCleanV1(node: SimNode): void {
  for (const r of node.counters.requests) {
    const path = r.url.split('?')[0];
    expect(path, r.url).toMatch(/^\/v1(?:\/|$)/);
    expect(path, r.url).not.toMatch(/\/\/|%2f|%5c|%2e|\\|(?:^|\/)\.\.?(?:\/|$)/i);
  }
}

describe('passthrough: other /v1 routes reach the node unchanged', () => {
  it('GET /v1 (ledger info): same status, bytes and ledger headers as the node', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const via = await call(url, '/v1');
    const direct = await call(node.url, '/v1', { headers: { 'accept-encoding': 'identity' } });
    expect(via.status).toBe(200);
    expect(Object.keys(ledgerHeaders(direct))).toHaveLength(7);
    expectSameAsNode(via, direct);
    expect(via.json()).toMatchObject({ chain_id: 4, ledger_version: '1000' });
  });

  it('GET /v1/transactions (a list, not cached), JSON and BCS, with a query string', async () => {
    // The sparse write model: the period model has no write sets to give and refuses the BCS list.
    const node = await sim({ writes: { model: 'sparse' } });
    const { url } = await proxy([node], QUIET);
    for (const [path, accept] of [
      ['/v1/transactions?limit=2', 'application/json'],
      ['/v1/transactions?limit=2', 'application/x-bcs'],
      ['/v1/transactions?start=900&limit=2', 'application/json'],
    ] as const) {
      const before = node.counters.requests.length;
      const via = await call(url, path, { headers: { accept } });
      const direct = await call(node.url, path, { headers: { accept, 'accept-encoding': 'identity' } });
      expect(via.status).toBe(200);
      expectSameAsNode(via, direct);
      // one call through the proxy and one direct (never cached), with the client's path, query and Accept
      const seen = node.counters.requests.slice(before);
      expect(seen.map((r) => r.url)).toEqual([path, path]);
      expect(seen[0].headers.accept).toBe(accept);
    }
  });

  it('a node 404 passes through: unknown route (no ledger headers)', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    for (const path of ['/v1/no/such/route', '/v1/accounts/0x2/events/0', '/v1/transactions/by_hash']) {
      const via = await call(url, path);
      const direct = await call(node.url, path, { headers: { 'accept-encoding': 'identity' } });
      expect(via.status).toBe(404);
      expectNodeErrorBody(via, 404);
      expectSameAsNode(via, direct);
      expect(node.counters.requests.some((r) => r.url === path)).toBe(true);
    }
  });

  it('POST /v1/transactions with a JSON body: the node gets the body with Content-Length, the client gets its answer', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const body = JSON.stringify({
      sender: '0x1',
      sequence_number: '0',
      payload: { type: 'entry_function_payload', function: '0x1::sim::poke', type_arguments: [], arguments: [] },
    });
    const via = await call(url, '/v1/transactions', { headers: { 'content-type': 'application/json' }, body });
    const direct = await call(node.url, '/v1/transactions', {
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body,
    });
    expectSameAsNode(via, direct);
    const forwarded = node.counters.requests.filter((r) => r.method === 'POST' && r.url === '/v1/transactions');
    expect(forwarded).toHaveLength(2);
    const fromProxy = forwarded[0];
    expect(fromProxy.body.toString('utf8')).toBe(body);
    expect(fromProxy.headers['content-type']).toBe('application/json');
    expect(fromProxy.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(fromProxy.headers['transfer-encoding']).toBeUndefined();
  });

  it('POST with a binary (BCS) body: the node gets the exact bytes', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const body = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) & 0xff));
    const via = await call(url, '/v1/transactions/simulate?estimate_gas_unit_price=true', {
      headers: { 'content-type': 'application/x.node.signed_transaction+bcs' },
      body,
    });
    const direct = await call(node.url, '/v1/transactions/simulate?estimate_gas_unit_price=true', {
      headers: { 'content-type': 'application/x.node.signed_transaction+bcs', 'accept-encoding': 'identity' },
      body,
    });
    expectSameAsNode(via, direct);
    const fromProxy = node.counters.requests.find((r) => r.method === 'POST')!;
    expect(fromProxy.url).toBe('/v1/transactions/simulate?estimate_gas_unit_price=true');
    expect(fromProxy.body.equals(body)).toBe(true);
    expect(fromProxy.headers['content-type']).toBe('application/x.node.signed_transaction+bcs');
    expect(fromProxy.headers['content-length']).toBe('300');
  });

  it('a gzip-accepting client gets the same bytes once decoded', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const host = new URL(url).host;
    const via = await rawHttp(
      url,
      `GET /v1/estimate_gas_price HTTP/1.1\r\nHost: ${host}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n`,
    );
    const direct = await call(node.url, '/v1/estimate_gas_price', { headers: { 'accept-encoding': 'identity' } });
    expect(via.status).toBe(200);
    expect(decoded(via).toString('hex')).toBe(direct.body.toString('hex'));
    // The node's per-connection headers (keep-alive: timeout=5) describe its connection, not ours.
    expect(direct.headers['keep-alive']).toBe('timeout=5');
    expect(via.headers['keep-alive']).not.toBe('timeout=5');
  });

  it('passthrough: false → 404 error bodies, and the node is not called', async () => {
    const node = await sim();
    const { url } = await proxy([node], { ...QUIET, passthrough: false });
    const before = node.counters.total;
    const requests: Array<Promise<Reply>> = [
      call(url, '/v1'),
      call(url, '/v1/estimate_gas_price'),
      call(url, '/v1/no/such/route'),
      call(url, '/v1/transactions', { headers: { 'content-type': 'application/json' }, body: '{}' }),
    ];
    for (const reply of await Promise.all(requests)) {
      expectNodeErrorBody(reply, 404);
    }
    expect(node.counters.total).toBe(before);
  });
});

describe('passthrough: nothing in a request picks another host or leaves /v1', () => {
  const unsafePaths = [
    '/v1//x',
    '/v1//127.0.0.1/v1',
    '/v1/a%2Fb',
    '/v1/a%2fb',
    '/v1/a%5Cb',
    '/v1/a\\b',
    '/v1/%2e%2e/admin',
    '/v1/%2E%2E/%2E%2E/metrics',
    '/v1/../admin',
    '/v1/./accounts/0x1/module/sim',
    '/v1/accounts/..%2f..%2fmetrics',
  ];

  for (const path of unsafePaths) {
    it(`raw path ${JSON.stringify(path)}: an error body or a /v1 answer, never a call outside /v1`, async () => {
      const node = await sim();
      const { url } = await proxy([node], QUIET);
      const host = new URL(url).host;
      const before = node.counters.total;
      const reply = await rawHttp(url, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect([200, 400, 404]).toContain(reply.status);
      if (reply.status === 400) {
        // refused by the proxy: the node never saw it
        expectNodeErrorBody(reply, 400);
        expect(node.counters.total).toBe(before);
      } else if (reply.status === 404) {
        expectNodeErrorBody(reply, 404);
      }
      expectOnlyCleanV1(node);
    });
  }

  it('absolute-form request lines do not pick the host', async () => {
    const node = await sim();
    const evil = await decoy();
    const { url } = await proxy([node], QUIET);
    const host = new URL(url).host;
    for (const target of [
      `http://${evil.host}/v1`,
      `http://${evil.host}/v1/estimate_gas_price`,
      'http://evil.example/v1',
      `http://${evil.host}/admin`,
    ]) {
      const reply = await rawHttp(url, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect([200, 400, 404], target).toContain(reply.status);
      if (reply.status !== 200) expectNodeErrorBody(reply, reply.status);
      else expect(JSON.parse(decoded(reply).toString('utf8'))).not.toHaveProperty('decoy');
    }
    expect(evil.hits).toEqual([]);
    expectOnlyCleanV1(node);
  });

  it('Host, X-Forwarded-Host and Forwarded headers do not pick the host, and are not forwarded as such', async () => {
    const node = await sim();
    const evil = await decoy();
    const { url } = await proxy([node], QUIET);
    const before = node.counters.requests.length;
    const headerSets: Array<Record<string, string>> = [
      { host: evil.host },
      { host: 'evil.example' },
      { 'x-forwarded-host': evil.host },
      { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      { forwarded: `host=${evil.host};proto=http` },
    ];
    for (const headers of headerSets) {
      const lines = Object.entries({ host: new URL(url).host, ...headers })
        .map(([k, v]) => `${k}: ${v}`)
        .join('\r\n');
      const reply = await rawHttp(url, `GET /v1/estimate_gas_price HTTP/1.1\r\n${lines}\r\nConnection: close\r\n\r\n`);
      expect(reply.status, JSON.stringify(headers)).toBe(200);
      expect(JSON.parse(decoded(reply).toString('utf8'))).toMatchObject({ gas_estimate: 100 });
    }
    expect(evil.hits).toEqual([]);
    const forwarded = node.counters.requests.slice(before).filter((r) => r.url === '/v1/estimate_gas_price');
    expect(forwarded).toHaveLength(headerSets.length);
    for (const r of forwarded) {
      expect(r.headers.host).toBe(new URL(node.url).host);
      expect(r.headers['x-forwarded-host']).toBeUndefined();
      expect(r.headers.forwarded).toBeUndefined();
    }
    expectOnlyCleanV1(node);
  });

  it('the served endpoints ignore Host and absolute-form targets too', async () => {
    const node = await sim();
    const evil = await decoy();
    const { url } = await proxy([node], QUIET);
    const body = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['2', '40'] });
    const reply = await rawHttp(
      url,
      `POST http://${evil.host}/v1/view HTTP/1.1\r\nHost: ${evil.host}\r\nX-Forwarded-Host: ${evil.host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(evil.hits).toEqual([]);
    if (reply.status === 200) expect(JSON.parse(decoded(reply).toString('utf8'))).toEqual(['42']);
    else expectNodeErrorBody(reply, reply.status);
    expectOnlyCleanV1(node);
  });
});

describe('passthrough: a node that is down', () => {
  it('→ 503 internal_error node body, not the framework error JSON', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    await node.stop();
    for (const req of [
      call(url, '/v1'),
      call(url, '/v1/estimate_gas_price'),
      call(url, '/v1/transactions', { headers: { 'content-type': 'application/json' }, body: '{}' }),
    ]) {
      const reply = await req;
      expectNodeErrorBody(reply, 503, 'internal_error');
      expect(reply.json().message).toMatch(/passthrough|node|upstream/i);
      expect(reply.json().vm_error_code).toBeNull();
    }
  });

  // api.md §7 / the failure modes of docs/operations/troubleshooting.md: a node that hangs, resets, answers HTML, 429 or
  // an empty body → 503 internal_error; the proxy never returns HTML or an empty error.
  for (const mode of ['html', 'status429', 'empty', 'reset'] as const) {
    it(`a node fault "${mode}" on a passthrough route → 503 internal_error node body`, async () => {
      const node = await sim();
      const { url } = await proxy([node], QUIET);
      node.faults.set({ mode, routes: ['gas_price'] });
      const reply = await call(url, '/v1/estimate_gas_price');
      expectNodeErrorBody(reply, 503, 'internal_error');
      expect(reply.body.toString('utf8')).not.toMatch(/<html/i);
    });
  }

  it('a node answering 503 to a passthrough GET is not hammered with retries (at most routing.maxAttempts calls)', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    node.faults.set({ mode: 'empty', routes: ['gas_price'] });
    const started = Date.now();
    const reply = await call(url, '/v1/estimate_gas_price');
    expectNodeErrorBody(reply, 503, 'internal_error');
    // docs/operations/upstreams.md: a failed attempt goes to another eligible node within maxAttempts (3);
    // with one node, one call. The same node must not get a burst of retries.
    expect(node.counters.byRoute.gas_price).toBeLessThanOrEqual(3);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('a node that hangs on a passthrough route → 503 internal_error within the deadline', async () => {
    const node = await sim();
    const { url } = await proxy([node], { routing: { ...QUIET_ROUTING, attemptTimeoutMs: 300, deadlineMs: 400 } });
    node.faults.set({ mode: 'hang', routes: ['gas_price'] });
    const started = Date.now();
    const reply = await call(url, '/v1/estimate_gas_price');
    expectNodeErrorBody(reply, 503, 'internal_error');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("a node's own JSON 500 on a passthrough route is passed through", async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    node.faults.set({ mode: 'status500', routes: ['gas_price'] });
    const reply = await call(url, '/v1/estimate_gas_price');
    expectNodeErrorBody(reply, 500, 'internal_error');
  });

  it('with two nodes, passthrough goes to the healthy one once probes see the other down', async () => {
    const a = await sim();
    const b = await sim();
    const { url } = await proxy([a, b], {
      routing: { probeIntervalMs: 50, breaker: { failureThreshold: 1, openMs: 60_000 } },
    });
    await a.stop();
    // The probes notice within a few intervals.
    await until(
      async () => (await call(url, '/v1/estimate_gas_price')).status === 200,
      3000,
      'a passthrough call answered by the healthy node',
    );
    const before = b.counters.byRoute.gas_price;
    for (let i = 0; i < 5; i++) expect((await call(url, '/v1/estimate_gas_price')).status).toBe(200);
    expect(b.counters.byRoute.gas_price).toBe(before + 5);
  });

  it('→ the node answers again once it is back', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    await node.stop();
    expectNodeErrorBody(await call(url, '/v1/estimate_gas_price'), 503, 'internal_error');
    await node.restart();
    const reply = await call(url, '/v1/estimate_gas_price');
    expect(reply.status).toBe(200);
  });
});
