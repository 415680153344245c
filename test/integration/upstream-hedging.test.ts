// Hedged latest reads (routing.hedgeAfterMs, src/upstream/pool.ts hedged()), beyond
// test/integration/hedging.test.ts: no hedge when the first node is quick, a hung
// first node is raced, the cancelled loser is not a node failure, and the hedge
// obeys the latest-read routing rule (only nodes within maxLagVersions).
import { describe, expect, it } from 'vitest';
import { simTableItem, type SimNode } from '../../src/sim/index.js';
import { HANDLE, proxy, rawItem, sim, viewJson, QUIET_ROUTING } from '../helpers/proxy.js';
import { hex } from '../helpers/cache.js';

const KEYS = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 17])).filter(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
);
const KEY = KEYS[0];
const reads = (node: SimNode): number => node.counters.byRoute.raw_item + node.counters.byRoute.view;

describe('upstream hedging (routing.hedgeAfterMs 50)', () => {
  it('a first node that answers before hedgeAfterMs is the only node asked', async () => {
    const first = await sim();
    const second = await sim();
    first.ledger.advance(1);
    const { url } = await proxy([first, second], { routing: { ...QUIET_ROUTING, hedgeAfterMs: 50 } });
    for (let i = 0; i < 5; i++) {
      const reply = await rawItem(url, hex(KEYS[i]));
      expect(reply.status).toBe(200);
      expect(reply.headers['x-node-ledger-version']).toBe('1001');
    }
    expect(reads(first)).toBe(5);
    expect(reads(second)).toBe(0);
  });

  it('a hung first node is raced: the second answers long before the attempt timeout; the loser is not a failure', async () => {
    const first = await sim();
    const second = await sim();
    first.ledger.advance(1);
    // failureThreshold 1: a single counted failure would open the first node's circuit.
    const { app, url } = await proxy([first, second], {
      routing: {
        ...QUIET_ROUTING,
        hedgeAfterMs: 50,
        attemptTimeoutMs: 1500,
        deadlineMs: 3000,
        breaker: { failureThreshold: 1, openMs: 60_000 },
      },
    });
    first.faults.set({ mode: 'hang', routes: ['raw_item', 'view'], count: 2 });
    for (const read of [() => rawItem(url, hex(KEY)), () => viewJson(url, '0x1::sim::add', ['1', '2'])]) {
      const started = performance.now();
      const reply = await read();
      const elapsed = performance.now() - started;
      expect(reply.status, reply.body.toString()).toBe(200);
      expect(reply.headers['x-node-ledger-version']).toBe('1000');
      expect(elapsed).toBeLessThan(1000);
    }
    expect(reads(first)).toBe(2);
    expect(reads(second)).toBe(2);
    // The cancelled first calls said nothing about the node: its circuit is still closed.
    const state = app.pool.nodes[0];
    expect(state.circuit()).toBe('closed');
    expect(state.inFlight).toBe(0);
    expect(app.pool.health(state)).toBe('healthy');
    // …and it takes the next latest read.
    expect((await rawItem(url, hex(KEYS[1]))).headers['x-node-ledger-version']).toBe('1001');
    expect(reads(first)).toBe(3);
  });

  it('a hedge goes only to a node within maxLagVersions: a slow fresh node is not raced by a lagging one', async () => {
    const fresh = await sim();
    const lagging = await sim({ startVersion: 500n });
    const { url } = await proxy([fresh, lagging], {
      routing: { ...QUIET_ROUTING, hedgeAfterMs: 50, maxLagVersions: 100 },
    });
    fresh.faults.set({ mode: 'slow', delayMs: 300, routes: ['raw_item', 'view'] });
    const reply = await rawItem(url, hex(KEY));
    expect(reply.status).toBe(200);
    // A latest read answered 500 versions back, while the proxy knows of 1000.
    expect(reply.headers['x-node-ledger-version'], 'the latest read was answered by the lagging node').toBe('1000');
    expect(reads(lagging), 'a lagging node took a latest read (as a hedge)').toBe(0);
  });

  it('pinned reads are never hedged, even when the first node hangs (failover after attemptTimeoutMs instead)', async () => {
    const first = await sim();
    const second = await sim();
    first.ledger.advance(1);
    const { url } = await proxy([first, second], {
      routing: { ...QUIET_ROUTING, hedgeAfterMs: 50, attemptTimeoutMs: 300, deadlineMs: 2000 },
    });
    first.faults.set({ mode: 'hang', routes: ['raw_item'], count: 1 });
    const started = performance.now();
    const reply = await rawItem(url, hex(KEY), { version: 990 });
    const elapsed = performance.now() - started;
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(simTableItem(HANDLE, KEY, 990n));
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(reads(first)).toBe(1);
    expect(reads(second)).toBe(1);
  });
});
