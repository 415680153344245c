// Load shedding for wallets: bounded-staleness latest reads, stale-if-error and
// per-node budgets. All off by default (api.md behaviour), so each test opts in.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { proxy, sim, viewJson, ledgerHeaders } from '../helpers/proxy.js';
import { inFlightGauge } from '../helpers/in-flight-gauge.js';
import { until } from '../helpers/until.js';
import { REFRESH_AT } from '../../src/serve/latest-answers.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Wall-clock time under the test's control; sockets and timers stay real. */
function fakeClock(): { advance(ms: number): void } {
  vi.useFakeTimers({ toFake: ['Date'] });
  return { advance: (ms) => vi.setSystemTime(Date.now() + ms) };
}

const balance = (base: string) => viewJson(base, '0x1::sim::balance', ['0x1']);

describe('bounded-staleness latest reads (latest.maxStalenessMs)', () => {
  it('serves answers within the bound with their own snapshot, refreshes late in it (REFRESH_AT), and forwards older ones', async () => {
    const clock = fakeClock();
    const node = await sim();
    const p = await proxy([node], { latest: { maxStalenessMs: 1000 }, routing: { probeIntervalMs: 20 } });
    const first = await balance(p.url);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(node.counters.byRoute.view).toBe(1);

    node.ledger.advance(25);
    await until(() => p.app.watermark.current()!.ledgerVersion === 1025n, 2000, 'the watermark to advance');
    const stale = await balance(p.url);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.body).toEqual(first.body);
    // Its own snapshot, never the watermark: the client sees how old it is.
    expect(ledgerHeaders(stale)).toEqual(ledgerHeaders(first));
    expect(node.counters.byRoute.view).toBe(1);

    // Past half the bound: still no refresh (a hot key costs its node one call per bound, not two).
    clock.advance(600);
    expect((await balance(p.url)).headers['x-cache']).toBe('STALE');
    await until(() => p.app.pool.nodes.every((n) => n.inFlight === 0), 2000, 'no read in flight');
    expect(node.counters.byRoute.view).toBe(1);

    clock.advance(1000 * REFRESH_AT - 600);
    expect((await balance(p.url)).headers['x-cache']).toBe('STALE');
    await until(() => node.counters.byRoute.view === 2, 2000, 'the background refresh');
    const refreshed = await balance(p.url);
    expect(refreshed.headers['x-cache']).toBe('STALE');
    expect(refreshed.headers['x-node-ledger-version']).toBe('1025');

    clock.advance(1001);
    const forwarded = await balance(p.url);
    expect(forwarded.headers['x-cache']).toBe('MISS');
    expect(node.counters.byRoute.view).toBe(3);
  });

  it('refreshes in the background once per key, however many readers', async () => {
    const clock = fakeClock();
    const node = await sim();
    const p = await proxy([node], { latest: { maxStalenessMs: 1000 } });
    await balance(p.url);
    node.faults.set({ mode: 'slow', delayMs: 200, routes: ['view'] });
    clock.advance(1000 * REFRESH_AT);
    const replies = await Promise.all(Array.from({ length: 30 }, () => balance(p.url)));
    expect(replies.every((r) => r.headers['x-cache'] === 'STALE')).toBe(true);
    await until(() => node.counters.byRoute.view === 2, 2000, 'one refresh');
    // Every refresh these requests could start has started by now (they have all
    // been answered): once no read is in flight, no other refresh can come.
    await until(() => p.app.pool.nodes.every((n) => n.inFlight === 0), 2000, 'no read in flight');
    expect(node.counters.byRoute.view).toBe(2);
  });
});

describe('bounded staleness by versions (latest.maxStalenessVersions)', () => {
  it('serves an answer read within N versions of the watermark, and forwards once it falls further behind', async () => {
    const node = await sim();
    const p = await proxy([node], { latest: { maxStalenessVersions: 10 }, routing: { probeIntervalMs: 20 } });
    await balance(p.url);
    node.ledger.advance(4);
    await until(() => p.app.watermark.current()!.ledgerVersion === 1004n, 2000, 'the watermark');
    const stale = await balance(p.url);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers['x-node-ledger-version']).toBe('1000');
    node.ledger.advance(20);
    await until(() => p.app.watermark.current()!.ledgerVersion === 1024n, 2000, 'the watermark');
    const forwarded = await balance(p.url);
    expect(forwarded.headers['x-cache']).toBe('MISS');
    expect(forwarded.headers['x-node-ledger-version']).toBe('1024');
  });
});

describe('stale-if-error (latest.staleIfErrorMs)', () => {
  it('answers from the newest stored answer when the nodes fail, and 503 only when nothing is stored', async () => {
    const node = await sim();
    const p = await proxy([node], {
      latest: { staleIfErrorMs: 60_000 },
      routing: { attemptTimeoutMs: 300, deadlineMs: 600, maxAttempts: 1 },
    });
    const first = await balance(p.url);
    expect(first.status).toBe(200);
    await node.stop();
    const stale = await balance(p.url);
    expect(stale.status).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.body).toEqual(first.body);
    expect(ledgerHeaders(stale)).toEqual(ledgerHeaders(first));
    const nothingStored = await viewJson(p.url, '0x1::sim::balance', ['0x2']);
    expect(nothingStored.status).toBe(503);
    expect(nothingStored.json().error_code).toBe('internal_error');
  });

  it('does not serve an answer older than the bound', async () => {
    const clock = fakeClock();
    const node = await sim();
    const p = await proxy([node], {
      latest: { staleIfErrorMs: 1000 },
      routing: { attemptTimeoutMs: 300, deadlineMs: 600, maxAttempts: 1 },
    });
    await balance(p.url);
    await node.stop();
    clock.advance(1500);
    expect((await balance(p.url)).status).toBe(503);
  });

  it('is off by default: a failing node gives 503', async () => {
    const node = await sim();
    const p = await proxy([node], { routing: { attemptTimeoutMs: 300, deadlineMs: 600, maxAttempts: 1 } });
    await balance(p.url);
    await node.stop();
    expect((await balance(p.url)).status).toBe(503);
  });
});

describe('node budgets (upstreams[].maxInFlight, maxRps)', () => {
  it('never holds more than maxInFlight at the node; reads past a short wait are shed with 503', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 200, routes: ['view'] });
    const gauge = await inFlightGauge(node.url);
    const p = await proxy([{ url: gauge.url, name: 'budgeted', maxInFlight: 2 }], { shedding: { budgetWaitMs: 20 } });
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '1'])),
    );
    expect(gauge.max).toBeLessThanOrEqual(2);
    const ok = replies.filter((r) => r.status === 200);
    const shed = replies.filter((r) => r.status === 503);
    expect(ok.length).toBe(2);
    expect(ok.length + shed.length).toBe(12);
    for (const r of shed) expect(r.json().message).toContain('node budget exhausted');
  });

  it('lets reads wait for a slot within budgetWaitMs instead of shedding them', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 50, routes: ['view'] });
    const gauge = await inFlightGauge(node.url);
    const p = await proxy([{ url: gauge.url, name: 'budgeted', maxInFlight: 2 }], { shedding: { budgetWaitMs: 3000 } });
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '1'])),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(gauge.max).toBeLessThanOrEqual(2);
  });

  it('answers shed latest reads stale when stale-if-error allows', async () => {
    const node = await sim();
    const p = await proxy([{ url: node.url, maxInFlight: 1 }], {
      latest: { staleIfErrorMs: 60_000 },
      shedding: { budgetWaitMs: 0 },
    });
    const first = await balance(p.url);
    node.faults.set({ mode: 'slow', delayMs: 300, routes: ['view'] });
    const [a, b] = await Promise.all([viewJson(p.url, '0x1::sim::add', ['1', '1']), balance(p.url)]);
    expect(a.status).toBe(200);
    expect(b.headers['x-cache']).toBe('STALE');
    expect(b.body).toEqual(first.body);
  });

  it('sheds the class named by shedding.shedFirst first', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 200, routes: ['view'] });
    const p = await proxy([{ url: node.url, maxInFlight: 5 }], { shedding: { budgetWaitMs: 0, shedFirst: 'latest' } });
    const latest = await Promise.all(
      Array.from({ length: 10 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '7'])),
    );
    expect(latest.filter((r) => r.status === 200)).toHaveLength(4);
    const pinned = await Promise.all(
      Array.from({ length: 10 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '8'], { version: 1000 })),
    );
    expect(pinned.filter((r) => r.status === 200)).toHaveLength(5);
  });

  it('keeps to maxRps', async () => {
    const node = await sim();
    const p = await proxy([{ url: node.url, maxRps: 5 }], { shedding: { budgetWaitMs: 0 } });
    const replies = [];
    for (let i = 0; i < 10; i++) replies.push(await viewJson(p.url, '0x1::sim::add', [String(i), '9']));
    expect(replies.filter((r) => r.status === 200).length).toBeLessThanOrEqual(6);
    expect(replies.filter((r) => r.status === 503).length).toBeGreaterThanOrEqual(4);
  });
});
