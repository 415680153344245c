// Reloading the upstream list (what SIGHUP does) drops no request and moves
// traffic to the new nodes.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { proxy, sim, viewJson } from '../helpers/proxy.js';

describe('upstream reload', () => {
  it('finishes requests in flight on a removed node, and sends new ones to the new list', async () => {
    const old = await sim();
    const fresh = await sim();
    old.faults.set({ mode: 'slow', delayMs: 500, routes: ['view'] });
    const p = await proxy([old]);
    const inFlight = Array.from({ length: 10 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '1']));
    // All ten reached the old node (it holds them for 500 ms) before the reload.
    for (let i = 0; i < 100 && old.counters.byRoute.view < 10; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(old.counters.byRoute.view).toBe(10);
    const upstreams = parseConfig({ upstreams: [{ url: fresh.url, name: 'fresh' }] }).upstreams;
    const result = await p.app.reloadUpstreams(upstreams);
    expect(result).toEqual({ added: ['fresh'], removed: ['node0'] });
    const replies = await Promise.all(inFlight);
    replies.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(r.json()).toEqual([String(i + 1)]);
    });
    expect(old.counters.byRoute.view).toBe(10);
    const after = await viewJson(p.url, '0x1::sim::add', ['5', '5']);
    expect(after.json()).toEqual(['10']);
    expect(fresh.counters.byRoute.view).toBe(1);
    expect(old.counters.byRoute.view).toBe(10);
  });

  it('keeps the state of nodes that stay', async () => {
    const a = await sim();
    const b = await sim();
    const p = await proxy([a]);
    const before = p.app.pool.nodes[0];
    await p.app.reloadUpstreams(parseConfig({ upstreams: [{ url: a.url, name: 'node0' }, { url: b.url, name: 'b' }] }).upstreams);
    expect(p.app.pool.nodes[0]).toBe(before);
    expect(p.app.pool.nodes.map((n) => n.name)).toEqual(['node0', 'b']);
    expect(p.app.pool.nodes[1].ledger).not.toBeNull();
  });
});
