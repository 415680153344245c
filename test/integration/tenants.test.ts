// Tenants at the edge (SPEC-edge §2–4): API keys, the anonymous tenant per client
// address, limits in requests and in node units, 429 with Retry-After and the
// RateLimit headers, a client's Authorization kept from every node, keys changed
// by a reload, one budget shared by instances through Redis, a tenant named by a
// trusted layer in front, and metrics and log lines by tenant name.
import { request as httpRequest } from 'node:http';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { freePort } from '../helpers/free-port.js';
import { capturedLog, HANDLE, ledgerHeaders, proxy, type Reply, sim, QUIET } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { sha256Hex } from '../helpers/bytes.js';
import { metricValue } from '../helpers/metrics.js';

/** A clock that stands still: no second or minute ends mid-test. */
const FROZEN = { now: () => 1_800_000_000_500 };

const WALLET_KEY = 'wallet-secret-key-1';
const DAPP_KEY = 'dapp-public-key';
const DAPP_ORIGIN = 'https://dapp.example';

/** Sends a request from a chosen loopback source address (another client), with headers. */
function send(base: string, path: string, init: { from?: string; headers?: Record<string, string>; body?: string; method?: string } = {}): Promise<Reply> {
  const body = init.body;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      base + path,
      {
        method: init.method ?? (body === undefined ? 'GET' : 'POST'),
        localAddress: init.from ?? '127.0.0.1',
        agent: false,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve({ status: res.statusCode ?? 0, headers, body: raw, json: () => JSON.parse(raw.toString('utf8')) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const pinnedItem = (key: string, version = 1000) => ({
  path: `/v1/tables/${HANDLE}/raw_item?ledger_version=${version}`,
  body: JSON.stringify({ key }),
  headers: { accept: 'application/x-bcs' },
});
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

function tenantsConfig(extra: Record<string, unknown> = {}) {
  return {
    tenants: {
      anonymous: { requestsPerSecond: 3 },
      list: [
        { name: 'wallet-backend', keys: [{ sha256: sha256Hex(WALLET_KEY) }], priority: 'high', nodeUnitsPerMinute: 12 },
        { name: 'dapp-web', keys: [{ sha256: sha256Hex(DAPP_KEY) }], origins: [DAPP_ORIGIN], perAddress: { requestsPerSecond: 2 } },
      ],
      ...extra,
    },
  };
}

function expectTooMany(reply: Reply, limit: string): void {
  expect(reply.status).toBe(429);
  expect(reply.json()).toMatchObject({ error_code: 'rate_limited', vm_error_code: null });
  expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(reply.headers['ratelimit-limit']).toBe(limit);
  expect(reply.headers['ratelimit-remaining']).toBe('0');
  expect(reply.headers['ratelimit-reset']).toBe(reply.headers['retry-after']);
  expect(Object.keys(ledgerHeaders(reply))).toHaveLength(7);
}

describe('who is calling', () => {
  it('the anonymous tenant is limited per client address: 429 with Retry-After and the RateLimit headers, no node call', async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, FROZEN);
    const item = pinnedItem('0x01');
    for (let i = 0; i < 3; i++) expect((await send(p.url, item.path, item)).status).toBe(200);
    const calls = node.counters.total;
    const limited = await send(p.url, item.path, item);
    expectTooMany(limited, '3');
    expect(limited.json().message).toContain('requestsPerSecond (3)');
    expect((await send(p.url, '/v1/estimate_gas_price')).status).toBe(429);
    expect(node.counters.total).toBe(calls);
    // Another client address is not limited by the first one's traffic.
    expect((await send(p.url, item.path, { ...item, from: '127.0.0.2' })).status).toBe(200);
  });

  it('reads X-Forwarded-For for the client address only when server.trustProxy says so', async () => {
    const node = await sim();
    const limit = { ...QUIET, tenants: { anonymous: { requestsPerSecond: 1 } } };
    const trusting = await proxy([node], { ...limit, server: { host: '127.0.0.1', port: 0, trustProxy: true } }, FROZEN);
    const xff = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    expect((await send(trusting.url, '/v1', xff('203.0.113.1'))).status).toBe(200);
    expect((await send(trusting.url, '/v1', xff('203.0.113.2'))).status).toBe(200);
    expect((await send(trusting.url, '/v1', xff('203.0.113.1'))).status).toBe(429);
    const plain = await proxy([node], limit, FROZEN);
    expect((await send(plain.url, '/v1', xff('203.0.113.1'))).status).toBe(200);
    expect((await send(plain.url, '/v1', xff('203.0.113.2'))).status).toBe(429);
  });

  it('an unknown key or a malformed Authorization gets 401 with WWW-Authenticate; no key at all, with anonymous: false, too', async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, FROZEN);
    const closed = await proxy([node], { ...QUIET, ...tenantsConfig({ anonymous: false }) }, FROZEN);
    const calls = node.counters.total;
    for (const [base, headers] of [
      [p.url, bearer('not-a-key')],
      [p.url, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      [p.url, { authorization: 'Bearer' }],
      [closed.url, {}],
    ] as const) {
      const reply = await send(base, '/v1', { headers });
      expect(reply.status, JSON.stringify(headers)).toBe(401);
      expect(reply.json().error_code).toBe('unauthorized');
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(reply.body.toString()).not.toContain('not-a-key');
    }
    expect(node.counters.total).toBe(calls);
    expect((await send(closed.url, '/v1', { headers: bearer(WALLET_KEY) })).status).toBe(200);
  });

  it('a client-side key is accepted only from its origins (else 403), and its perAddress limit counts each address', async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, FROZEN);
    for (const origin of [undefined, 'https://evil.example']) {
      const reply = await send(p.url, '/v1', { headers: { ...bearer(DAPP_KEY), ...(origin ? { origin } : {}) } });
      expect(reply.status, String(origin)).toBe(403);
      expect(reply.json().error_code).toBe('forbidden');
      expect(Object.keys(ledgerHeaders(reply))).toHaveLength(7);
    }
    const from = (address: string) => ({ from: address, headers: { ...bearer(DAPP_KEY), origin: DAPP_ORIGIN } });
    expect((await send(p.url, '/v1', from('127.0.0.1'))).status).toBe(200);
    expect((await send(p.url, '/v1', from('127.0.0.1'))).status).toBe(200);
    expectTooMany(await send(p.url, '/v1', from('127.0.0.1')), '2');
    expect((await send(p.url, '/v1', from('127.0.0.3'))).status).toBe(200);
    expect(await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'dapp-web', outcome: 'forbidden' })).toBe(2);
    expect(await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'dapp-web', outcome: 'rate_limited' })).toBe(1);
  });
});

describe('node units', () => {
  it("a key's hits cost 0 units and its misses the route's cost; once spent, passthrough is refused and hits are still served", async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, FROZEN);
    const units = () => metricValue(p.app, 'ledger_proxy_tenant_node_units_total', { tenant: 'wallet-backend' });
    const item = { ...pinnedItem('0x01'), headers: { ...pinnedItem('0x01').headers, ...bearer(WALLET_KEY) } };
    const view = { body: '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}', headers: bearer(WALLET_KEY) };
    expect((await send(p.url, item.path, item)).headers['x-cache']).toBe('MISS');
    expect(await units()).toBe(1);
    for (let i = 0; i < 3; i++) expect((await send(p.url, item.path, item)).headers['x-cache']).toBe('HIT');
    expect(await units()).toBe(1);
    expect((await send(p.url, '/v1/view?ledger_version=1000', view)).headers['x-cache']).toBe('MISS');
    expect(await units()).toBe(6);
    for (let i = 0; i < 6; i++) expect((await send(p.url, '/v1/estimate_gas_price', { headers: bearer(WALLET_KEY) })).status).toBe(200);
    expect(await units()).toBe(12);
    // Spent: what needs a node is refused, with no node call (passthrough, a pinned miss, a latest read); a hit is not.
    const calls = node.counters.total;
    const miss = pinnedItem('0x02');
    for (const refused of [
      await send(p.url, '/v1/estimate_gas_price', { headers: bearer(WALLET_KEY) }),
      await send(p.url, miss.path, { ...miss, headers: { ...miss.headers, ...bearer(WALLET_KEY) } }),
      await send(p.url, `/v1/tables/${HANDLE}/raw_item`, { ...miss, headers: { ...miss.headers, ...bearer(WALLET_KEY) } }),
    ]) {
      expectTooMany(refused, '12');
      expect(refused.json().message).toContain('nodeUnitsPerMinute (12)');
    }
    expect(node.counters.total).toBe(calls);
    expect((await send(p.url, item.path, item)).headers['x-cache']).toBe('HIT');
    expect(await metricValue(p.app, 'ledger_proxy_tenant_hits_total', { tenant: 'wallet-backend' })).toBe(4);
    // Another tenant's miss of the same key is not refused for this one's units.
    expect((await send(p.url, miss.path, miss)).headers['x-cache']).toBe('MISS');
  });
});

describe("a client's Authorization", () => {
  it('never reaches a node, on any path, with or without tenants', async () => {
    for (const overrides of [{}, tenantsConfig()]) {
      const node = await sim();
      const p = await proxy([node], { ...QUIET, ...overrides }, FROZEN);
      const headers = bearer(WALLET_KEY);
      const item = pinnedItem('0x05');
      await send(p.url, item.path, { ...item, headers: { ...item.headers, ...headers } });
      await send(p.url, `/v1/tables/${HANDLE}/raw_item`, { ...item, headers: { ...item.headers, ...headers } });
      await send(p.url, '/v1/accounts/0x1/resources?ledger_version=1000', { headers });
      await send(p.url, '/v1/estimate_gas_price', { headers });
      await send(p.url, '/v1/transactions', { headers, body: '{"sender":"0x1"}' });
      const seen = node.counters.requests.filter((r) => r.url !== '/v1');
      expect(seen.length).toBeGreaterThanOrEqual(5);
      for (const r of seen) expect(r.headers.authorization, `${r.method} ${r.url}`).toBeUndefined();
    }
  });
});

describe('keys change on reload', () => {
  it('a reload adds a key and removes another, without a restart', async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, FROZEN);
    const NEW_KEY = 'rotated-wallet-key';
    expect((await send(p.url, '/v1', { headers: bearer(NEW_KEY) })).status).toBe(401);
    const next = structuredClone(p.app.config) as unknown as { tenants: { list: Array<{ keys: Array<{ sha256: string }> }> } };
    next.tenants.list[0]!.keys = [{ sha256: sha256Hex(NEW_KEY) }];
    const outcome = await p.app.reload(next as unknown as App['config']);
    expect(outcome.applied).toEqual(['tenants']);
    expect((await send(p.url, '/v1', { headers: bearer(NEW_KEY) })).status).toBe(200);
    expect((await send(p.url, '/v1', { headers: bearer(WALLET_KEY) })).status).toBe(401);
  });
});

describe('shedding by priority', () => {
  it('when a node budget runs short, low is shed before normal, and normal before high', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 1500, routes: ['view'] });
    const HIGH = 'high-key';
    const NORMAL = 'normal-key';
    const p = await proxy(
      [{ url: node.url, name: 'node0', maxInFlight: 10 }],
      {
        ...QUIET,
        shedding: { budgetWaitMs: 0 },
        tenants: {
          anonymous: { priority: 'low' },
          list: [
            { name: 'backend', keys: [{ sha256: sha256Hex(HIGH) }], priority: 'high' },
            { name: 'dapp', keys: [{ sha256: sha256Hex(NORMAL) }], priority: 'normal' },
          ],
        },
      },
      FROZEN,
    );
    const who = { low: {}, normal: bearer(NORMAL), high: bearer(HIGH) } as const;
    const outcomes: Record<string, number[]> = { low: [], normal: [], high: [] };
    const pending: Array<Promise<void>> = [];
    // One request at a time, in turns low, normal, high: each is admitted to the node or shed before the next is sent.
    for (let i = 0; i < 10; i++) {
      for (const priority of ['low', 'normal', 'high'] as const) {
        const before = node.counters.total;
        let shed = false;
        const body = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: [String(i), priority.length.toString()] });
        const reply = send(p.url, '/v1/view', { headers: who[priority], body }).then((r) => {
          if (r.status === 503) shed = true;
          outcomes[priority]!.push(r.status);
          if (r.status === 503) expect(r.headers['retry-after']).toBe('1');
        });
        pending.push(reply);
        await until(() => shed || node.counters.total > before, 5000, `${priority} request ${i} admitted or shed`);
      }
    }
    await Promise.all(pending);
    const shedOf = (priority: string): number => outcomes[priority]!.filter((s) => s === 503).length;
    // Of 10 slots, low may use 6, normal 8, high all 10.
    expect([shedOf('low'), shedOf('normal'), shedOf('high')]).toEqual([8, 7, 5]);
    expect(await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'anonymous', outcome: 'shed' })).toBe(8);
    expect(await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'backend', outcome: 'shed' })).toBe(5);
  });
});

describe('behind a load-shedding layer', () => {
  it('a trusted tenant header is honoured from a trusted address and ignored from any other', async () => {
    const node = await sim();
    const named = { headers: { 'x-tenant': 'wallet-backend' } };
    const trusting = await proxy([node], { ...QUIET, ...tenantsConfig({ trustedHeader: 'X-Tenant', anonymous: false }), server: { host: '127.0.0.1', port: 0, trustProxy: '127.0.0.1' } }, FROZEN);
    expect((await send(trusting.url, '/v1', named)).status).toBe(200);
    expect((await send(trusting.url, '/v1', { ...named, from: '127.0.0.2' })).status).toBe(401);
    const plain = await proxy([node], { ...QUIET, ...tenantsConfig({ trustedHeader: 'X-Tenant', anonymous: false }) }, FROZEN);
    expect((await send(plain.url, '/v1', named)).status).toBe(401);
  });

  it('replies to a trusted address carry X-Proxy-Headroom, which falls as a node budget fills; others never see it', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 1500, routes: ['view'] });
    const p = await proxy([{ url: node.url, name: 'node0', maxInFlight: 4 }], { ...QUIET, server: { host: '127.0.0.1', port: 0, trustProxy: '127.0.0.1' } }, FROZEN);
    const headroom = async (): Promise<number> => Number((await send(p.url, '/v1/estimate_gas_price')).headers['x-proxy-headroom']);
    expect(await headroom()).toBe(1);
    expect((await send(p.url, '/v1/estimate_gas_price', { from: '127.0.0.2' })).headers['x-proxy-headroom']).toBeUndefined();
    const views = [0, 1].map((i) => send(p.url, '/v1/view', { body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: [String(i), '1'] }) }));
    await until(() => node.counters.byRoute.view === 2, 5000, 'two slow views in flight');
    expect(await headroom()).toBe(0.5);
    const gauge = await metricValue(p.app, 'ledger_proxy_node_headroom', { upstream: 'node0' });
    expect(gauge).toBe(0.5);
    await Promise.all(views);
    expect(await headroom()).toBe(1);
  });
});

describe('operators see tenants by name', () => {
  it('every tenant is exported from the start at zero, and each log line names its tenant, never its key', async () => {
    const node = await sim();
    const log = capturedLog();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, { ...FROZEN, logger: log.logger });
    for (const tenant of ['anonymous', 'wallet-backend', 'dapp-web']) {
      expect(await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant, outcome: 'served' }), tenant).toBe(0);
    }
    await send(p.url, '/v1', { headers: bearer(WALLET_KEY) });
    await send(p.url, '/v1');
    const lines = log.lines.filter((l) => l.msg === 'request');
    expect(lines.map((l) => l.tenant)).toEqual(['wallet-backend', 'anonymous']);
    expect(JSON.stringify(log.lines)).not.toContain(WALLET_KEY);
  });
});

describe('shared through Redis', () => {
  const redis = useRedisServer();

  it("two instances on one Redis share a tenant's budget", async () => {
    const node = await sim();
    const cache = { redis: { url: redis.url, keyPrefix: 'tenants-test:' } };
    const overrides = { ...QUIET, cache, tenants: { list: [{ name: 'wallet-backend', keys: [{ sha256: sha256Hex(WALLET_KEY) }], requestsPerSecond: 4 }] } };
    const a = await proxy([node], overrides, FROZEN);
    const b = await proxy([node], overrides, FROZEN);
    const headers = bearer(WALLET_KEY);
    const client = new Redis(redis.url);
    const shared = async (): Promise<number> => {
      const keys = await client.keys('tenants-test:limits:requests:*');
      return (await Promise.all(keys.map((k) => client.get(k)))).reduce((n, v) => n + Number(v), 0);
    };
    try {
      for (let i = 0; i < 4; i++) expect((await send(a.url, '/v1', { headers })).status).toBe(200);
      await until(async () => (await shared()) === 4, 3000, "a's four requests in the shared counter");
      // b has counted nothing of this tenant: its first request passes, and its count brings back the shared total.
      expect((await send(b.url, '/v1', { headers })).status).toBe(200);
      await until(async () => (await shared()) === 5, 3000, "b's request in the shared counter");
      // By its own count b would allow two more; by the shared one the tenant is over.
      expectTooMany(await send(b.url, '/v1', { headers }), '4');
    } finally {
      client.disconnect();
    }
  });

  it("a tenant's requests are added to the shared counter together, not one command each", async () => {
    const node = await sim();
    const cache = { redis: { url: redis.url, keyPrefix: 'tenants-batch:' } };
    const p = await proxy([node], { ...QUIET, cache, tenants: { anonymous: { requestsPerSecond: 1000 } } }, FROZEN);
    const client = new Redis(redis.url);
    try {
      await client.config('RESETSTAT');
      const item = pinnedItem('0x01');
      await send(p.url, item.path, item);
      await Promise.all(Array.from({ length: 40 }, () => send(p.url, item.path, item)));
      const counted = async (): Promise<number> => {
        const keys = await client.keys('tenants-batch:limits:requests:*');
        return (await Promise.all(keys.map((k) => client.get(k)))).reduce((n, v) => n + Number(v), 0);
      };
      await until(async () => (await counted()) === 41, 2000, 'the shared counter to reach 41');
      const calls = (await client.info('commandstats')).match(/^cmdstat_incrby:calls=(\d+)/m);
      expect(Number(calls?.[1])).toBeGreaterThan(0);
      expect(Number(calls?.[1])).toBeLessThanOrEqual(5);
      expect((await client.info('commandstats')).match(/^cmdstat_incr:/m)).toBeNull();
    } finally {
      client.disconnect();
    }
  });
});

describe('limits shared through a Redis that is unreachable', () => {
  it('count in this process; the counters client writes nothing to stderr, and its failure is counted', async () => {
    const port = await freePort();
    const stderr = vi.spyOn(console, 'error');
    try {
      const node = await sim();
      const cache = { redis: { url: `redis://127.0.0.1:${port}`, keyPrefix: 'tenants-down:' } };
      const p = await proxy([node], { ...QUIET, cache, tenants: { anonymous: { requestsPerSecond: 2 } } }, FROZEN);
      const item = pinnedItem('0x01');
      expect((await send(p.url, item.path, item)).status).toBe(200);
      expect((await send(p.url, item.path, item)).status).toBe(200);
      expect((await send(p.url, item.path, item)).status).toBe(429);
      const counted = async (): Promise<boolean> => /^ledger_proxy_redis_errors_total\{client="limits",op="connection"\} [1-9]/m.test((await p.app.metrics.render()).body);
      await until(counted, 5000, 'the counters client failure in ledger_proxy_redis_errors_total');
      const fromIoredis = stderr.mock.calls.filter((args) => args.some((a) => String(a).includes('[ioredis]')));
      expect(fromIoredis).toEqual([]);
    } finally {
      stderr.mockRestore();
    }
  });
});
