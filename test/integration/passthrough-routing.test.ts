// Passthrough is routed like a cached read (api.md §8): a GET
// fails over to another node on connection errors and 5xx, a write is never sent
// twice, ?ledger_version=N goes to a node that covers N, and every call counts in
// the node budgets and the upstream metrics.
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { freePort } from '../helpers/free-port.js';
import { call, proxy, sim, QUIET, QUIET_ROUTING } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

/** Probes only at start: what the pool knows of a node comes from the calls themselves. */
const GAS_PRICE = '/v1/estimate_gas_price';

function gasPriceCalls(node: SimNode): number {
  return node.counters.byRoute.gas_price;
}

describe('passthrough routing', () => {
  it('the first node killed, the second healthy: every passthrough GET answers 200 from the second', async () => {
    const a = await sim();
    const b = await sim();
    const { url } = await proxy([a, b], QUIET);
    await a.stop();
    for (let i = 0; i < 6; i++) {
      const reply = await call(url, GAS_PRICE);
      expect(reply.status, reply.body.toString()).toBe(200);
      expect(reply.headers['x-cache']).toBe('BYPASS');
    }
    expect(gasPriceCalls(b)).toBe(6);
  });

  it('a node answering HTML 502 or a 500 to a GET: the call goes to the other node', async () => {
    const a = await sim();
    const b = await sim();
    const { url } = await proxy([a, b], QUIET);
    for (const mode of ['html', 'status500'] as const) {
      a.faults.set({ mode, routes: ['gas_price'] });
      b.faults.clear();
      const reply = await call(url, GAS_PRICE);
      expect(reply.status, `${mode}: ${reply.body.toString()}`).toBe(200);
      a.faults.clear();
    }
    expect(gasPriceCalls(b)).toBeGreaterThanOrEqual(1);
  });

  it('a write (POST) answered 500 is passed on once, never sent to a second node', async () => {
    const a = await sim();
    const b = await sim();
    const { url } = await proxy([a, b], QUIET);
    a.faults.set({ mode: 'status500', routes: ['other'] });
    b.faults.set({ mode: 'status500', routes: ['other'] });
    const reply = await call(url, '/v1/transactions', {
      headers: { 'content-type': 'application/json' },
      body: '{"sender":"0x1"}',
    });
    expect(reply.status).toBe(500);
    const posts = [a, b].flatMap((n) => n.counters.requests.filter((r) => r.method === 'POST'));
    expect(posts).toHaveLength(1);
  });

  it('a slow write is not hedged to a second node', async () => {
    const a = await sim();
    const b = await sim();
    const { url } = await proxy([a, b], { routing: { ...QUIET_ROUTING, hedgeAfterMs: 20 } });
    for (const n of [a, b]) n.faults.set({ mode: 'slow', delayMs: 200, routes: ['other'] });
    await call(url, '/v1/transactions', { headers: { 'content-type': 'application/json' }, body: '{"sender":"0x1"}' });
    const posts = [a, b].flatMap((n) => n.counters.requests.filter((r) => r.method === 'POST'));
    expect(posts).toHaveLength(1);
  });

  it('?ledger_version=N goes to a node that still holds N, not to one that pruned it', async () => {
    const pruned = await sim({ startVersion: 5000n, pruneWindow: 100n });
    const archive = await sim({ startVersion: 5000n });
    const { url } = await proxy([pruned, archive], QUIET);
    // A leading '+' and leading zeros of any length are the same version (api.md §2).
    for (const version of ['1000', `${'0'.repeat(70)}1000`, '%2B1000']) {
      for (let i = 0; i < 4; i++) {
        const reply = await call(url, `${GAS_PRICE}?ledger_version=${version}`);
        expect(reply.status, reply.body.toString()).toBe(200);
      }
    }
    expect(gasPriceCalls(pruned)).toBe(0);
    expect(gasPriceCalls(archive)).toBe(12);
  });

  it('a node on another chain gets no passthrough (quarantined)', async () => {
    const right = await sim({ chainId: 4 });
    const wrong = await sim({ chainId: 5 });
    const { url } = await proxy([right, wrong], { ...QUIET, chainId: 4 });
    for (let i = 0; i < 6; i++) expect((await call(url, GAS_PRICE)).status).toBe(200);
    expect(gasPriceCalls(wrong)).toBe(0);
  });

  it('passthrough calls count in the upstream metrics and against the node budget', async () => {
    const node = await sim();
    const { app, url } = await proxy([{ url: node.url, name: 'only', maxInFlight: 1 }], {
      ...QUIET,
      admin: { host: '127.0.0.1', port: await freePort() },
      shedding: { budgetWaitMs: 0 },
    });
    expect((await call(url, GAS_PRICE)).status).toBe(200);
    const metrics = (await app.admin!.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/ledger_proxy_upstream_requests_total\{[^}]*upstream="only"[^}]*outcome="ok"[^}]*\} [1-9]/);

    node.faults.set({ mode: 'slow', delayMs: 400, routes: ['gas_price'] });
    const before = gasPriceCalls(node);
    const slow = call(url, GAS_PRICE);
    // The second call comes while the first holds the node's one slot.
    await until(() => gasPriceCalls(node) > before, 2000, 'the first call at the node');
    const [first, second] = await Promise.all([slow, call(url, GAS_PRICE)]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(503);
    expect(second.json().message).toMatch(/budget/);
    expect(gasPriceCalls(node)).toBe(2);
  });
});
