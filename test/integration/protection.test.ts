// Protection for the nodes: overload shedding answers with the node error body,
// and what it refuses never reaches a node. (Limits per client are the tenants':
// tenants.test.ts.)
import { describe, expect, it } from 'vitest';
import { ledgerHeaders, proxy, sim, viewJson } from '../helpers/proxy.js';

describe('overload shedding (shedding.maxInFlight)', () => {
  it('never holds more than the cap in flight to the nodes, and sheds the rest with 503 at once', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 400, routes: ['view'] });
    const p = await proxy([node], { shedding: { maxInFlight: 2 } });
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '1'])),
    );
    const ok = replies.filter((r) => r.status === 200);
    const shed = replies.filter((r) => r.status === 503);
    expect(ok).toHaveLength(2);
    expect(shed).toHaveLength(8);
    for (const r of shed) {
      expect(r.json()).toMatchObject({ error_code: 'internal_error', vm_error_code: null });
      expect(r.json().message).toContain('overloaded');
      expect(Object.keys(ledgerHeaders(r))).toHaveLength(7);
    }
    expect(node.counters.byRoute.view).toBe(2);
  });
});
