// Tenants at the edge (api.md §10.2–4): API keys, the anonymous tenant per client
// address, limits in requests and in node units, 429 with Retry-After and the
// RateLimit headers, a client's Authorization kept from every node, keys changed
// by a reload, and metrics and log lines by tenant name.
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { capturedLog, HANDLE, ledgerHeaders, proxy, sim, QUIET } from '../helpers/proxy.js';
import { sha256Hex } from '../helpers/bytes.js';
import { metricValue } from '../helpers/metrics.js';
import {
  bearer,
  DAPP_KEY,
  DAPP_ORIGIN,
  expectTooMany,
  FROZEN,
  pinnedItem,
  send,
  tenantsConfig,
  WALLET_KEY,
} from '../helpers/tenants.js';

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
    const trusting = await proxy(
      [node],
      { ...limit, server: { host: '127.0.0.1', port: 0, trustProxy: true } },
      FROZEN,
    );
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
    expect(
      await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'dapp-web', outcome: 'forbidden' }),
    ).toBe(2);
    expect(
      await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'dapp-web', outcome: 'rate_limited' }),
    ).toBe(1);
  });
});

describe('node units', () => {
  it("a key's hits cost 0 units and its misses the route's cost; once spent, passthrough is refused and hits are still served", async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, FROZEN);
    const units = () => metricValue(p.app, 'ledger_proxy_tenant_node_units_total', { tenant: 'wallet-backend' });
    const item = { ...pinnedItem('0x01'), headers: { ...pinnedItem('0x01').headers, ...bearer(WALLET_KEY) } };
    const view = {
      body: '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}',
      headers: bearer(WALLET_KEY),
    };
    expect((await send(p.url, item.path, item)).headers['x-cache']).toBe('MISS');
    expect(await units()).toBe(1);
    for (let i = 0; i < 3; i++) expect((await send(p.url, item.path, item)).headers['x-cache']).toBe('HIT');
    expect(await units()).toBe(1);
    expect((await send(p.url, '/v1/view?ledger_version=1000', view)).headers['x-cache']).toBe('MISS');
    expect(await units()).toBe(6);
    for (let i = 0; i < 6; i++)
      expect((await send(p.url, '/v1/estimate_gas_price', { headers: bearer(WALLET_KEY) })).status).toBe(200);
    expect(await units()).toBe(12);
    // Spent: what needs a node is refused, with no node call (passthrough, a pinned miss, a latest read); a hit is not.
    const calls = node.counters.total;
    const miss = pinnedItem('0x02');
    for (const refused of [
      await send(p.url, '/v1/estimate_gas_price', { headers: bearer(WALLET_KEY) }),
      await send(p.url, miss.path, { ...miss, headers: { ...miss.headers, ...bearer(WALLET_KEY) } }),
      await send(p.url, `/v1/tables/${HANDLE}/raw_item`, {
        ...miss,
        headers: { ...miss.headers, ...bearer(WALLET_KEY) },
      }),
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
    const next = structuredClone(p.app.config) as unknown as {
      tenants: { list: Array<{ keys: Array<{ sha256: string }> }> };
    };
    next.tenants.list[0]!.keys = [{ sha256: sha256Hex(NEW_KEY) }];
    const outcome = await p.app.reload(next as unknown as App['config']);
    expect(outcome.applied).toEqual(['tenants']);
    expect((await send(p.url, '/v1', { headers: bearer(NEW_KEY) })).status).toBe(200);
    expect((await send(p.url, '/v1', { headers: bearer(WALLET_KEY) })).status).toBe(401);
  });
});

describe('operators see tenants by name', () => {
  it('every tenant is exported from the start at zero, and each log line names its tenant, never its key', async () => {
    const node = await sim();
    const log = capturedLog();
    const p = await proxy([node], { ...QUIET, ...tenantsConfig() }, { ...FROZEN, logger: log.logger });
    for (const tenant of ['anonymous', 'wallet-backend', 'dapp-web']) {
      expect(
        await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant, outcome: 'served' }),
        tenant,
      ).toBe(0);
    }
    await send(p.url, '/v1', { headers: bearer(WALLET_KEY) });
    await send(p.url, '/v1');
    const lines = log.lines.filter((l) => l.msg === 'request');
    expect(lines.map((l) => l.tenant)).toEqual(['wallet-backend', 'anonymous']);
    expect(JSON.stringify(log.lines)).not.toContain(WALLET_KEY);
  });
});
