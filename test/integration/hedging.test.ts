// Hedged latest reads: a slow first node does not make the client wait when a
// second node can answer.
import { describe, expect, it } from 'vitest';
import { proxy, sim, viewJson } from '../helpers/proxy.js';

const SLOW_MS = 600;

async function slowFirstNode(hedgeAfterMs: number) {
  const slow = await sim();
  const fast = await sim();
  slow.faults.set({ mode: 'slow', delayMs: SLOW_MS, routes: ['view'] });
  const p = await proxy([slow, fast], { routing: { hedgeAfterMs, attemptTimeoutMs: 2000, deadlineMs: 3000 } });
  return { slow, fast, p };
}

describe('hedging (routing.hedgeAfterMs)', () => {
  it('asks a second node when the first has not answered in time, and takes the first answer', async () => {
    const { slow, fast, p } = await slowFirstNode(50);
    const started = performance.now();
    const reply = await viewJson(p.url, '0x1::sim::add', ['2', '40']);
    const elapsed = performance.now() - started;
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual(['42']);
    expect(elapsed).toBeLessThan(SLOW_MS);
    expect(slow.counters.byRoute.view).toBe(1);
    expect(fast.counters.byRoute.view).toBe(1);
  });

  it('is off by default: the client waits for the slow node and no second node is asked', async () => {
    const { slow, fast, p } = await slowFirstNode(0);
    const started = performance.now();
    const reply = await viewJson(p.url, '0x1::sim::add', ['2', '40']);
    expect(reply.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_MS - 50);
    expect(slow.counters.byRoute.view).toBe(1);
    expect(fast.counters.byRoute.view).toBe(0);
  });

  it('never hedges pinned reads (they are cached; one node call is enough)', async () => {
    const { slow, fast, p } = await slowFirstNode(50);
    const reply = await viewJson(p.url, '0x1::sim::add', ['2', '40'], { version: 1000 });
    expect(reply.status).toBe(200);
    expect(slow.counters.byRoute.view + fast.counters.byRoute.view).toBe(1);
  });
});
