// Tenants when the nodes are short of budget (api.md §10.2–3): requests are shed by
// tenant priority, and a tenant named by a trusted load-shedding layer in front is
// shed as that tenant.
import { describe, expect, it } from 'vitest';
import { proxy, sim, QUIET } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';
import { sha256Hex } from '../helpers/bytes.js';
import { metricValue } from '../helpers/metrics.js';
import { bearer, FROZEN, send, tenantsConfig } from '../helpers/tenants.js';

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
        const body = JSON.stringify({
          function: '0x1::sim::add',
          type_arguments: [],
          arguments: [String(i), priority.length.toString()],
        });
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
    expect(
      await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'anonymous', outcome: 'shed' }),
    ).toBe(8);
    expect(await metricValue(p.app, 'ledger_proxy_tenant_requests_total', { tenant: 'backend', outcome: 'shed' })).toBe(
      5,
    );
  });
});

describe('behind a load-shedding layer', () => {
  it('a trusted tenant header is honoured from a trusted address and ignored from any other', async () => {
    const node = await sim();
    const named = { headers: { 'x-tenant': 'wallet-backend' } };
    const trusting = await proxy(
      [node],
      {
        ...QUIET,
        ...tenantsConfig({ trustedHeader: 'X-Tenant', anonymous: false }),
        server: { host: '127.0.0.1', port: 0, trustProxy: '127.0.0.1' },
      },
      FROZEN,
    );
    expect((await send(trusting.url, '/v1', named)).status).toBe(200);
    expect((await send(trusting.url, '/v1', { ...named, from: '127.0.0.2' })).status).toBe(401);
    const plain = await proxy(
      [node],
      { ...QUIET, ...tenantsConfig({ trustedHeader: 'X-Tenant', anonymous: false }) },
      FROZEN,
    );
    expect((await send(plain.url, '/v1', named)).status).toBe(401);
  });

  it('replies to a trusted address carry X-Proxy-Headroom, which falls as a node budget fills; others never see it', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 1500, routes: ['view'] });
    const p = await proxy(
      [{ url: node.url, name: 'node0', maxInFlight: 4 }],
      { ...QUIET, server: { host: '127.0.0.1', port: 0, trustProxy: '127.0.0.1' } },
      FROZEN,
    );
    const headroom = async (): Promise<number> =>
      Number((await send(p.url, '/v1/estimate_gas_price')).headers['x-proxy-headroom']);
    expect(await headroom()).toBe(1);
    expect(
      (await send(p.url, '/v1/estimate_gas_price', { from: '127.0.0.2' })).headers['x-proxy-headroom'],
    ).toBeUndefined();
    const views = [0, 1].map((i) =>
      send(p.url, '/v1/view', {
        body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: [String(i), '1'] }),
      }),
    );
    await until(() => node.counters.byRoute.view === 2, 5000, 'two slow views in flight');
    expect(await headroom()).toBe(0.5);
    const gauge = await metricValue(p.app, 'ledger_proxy_node_headroom', { upstream: 'node0' });
    expect(gauge).toBe(0.5);
    await Promise.all(views);
    expect(await headroom()).toBe(1);
  });

  it('a hop count or true in server.trustProxy names no trusted address: no peer hears X-Proxy-Headroom', async () => {
    const node = await sim();
    for (const trustProxy of [1, true]) {
      const p = await proxy([node], { ...QUIET, server: { host: '127.0.0.1', port: 0, trustProxy } }, FROZEN);
      for (const from of ['127.0.0.1', '127.0.0.2']) {
        const reply = await send(p.url, '/v1/estimate_gas_price', { from, headers: { 'x-forwarded-for': '10.0.0.1' } });
        expect(reply.status, `${String(trustProxy)} from ${from}`).toBe(200);
        expect(reply.headers['x-proxy-headroom'], `${String(trustProxy)} from ${from}`).toBeUndefined();
      }
    }
  });
});
