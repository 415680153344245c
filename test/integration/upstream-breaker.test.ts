// The circuit breaker of each node (routing.breaker, src/upstream/nodes/node-state.ts):
// closed → open after failureThreshold consecutive failures (no traffic for openMs)
// → half-open: one trial call, whose success closes the circuit and whose failure
// opens it again (cockatiel's CircuitBreakerPolicy). Probes never reset the count.
// Real timers, bounded polls on the circuit state.
import { describe, expect, it } from 'vitest';
import { simTableItem, type SimNode } from '../../src/sim/index.js';
import type { NodeState } from '../../src/upstream/nodes/node-state.js';
import { HANDLE, proxy, rawItem, sim, type Reply } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';
import { hex } from '../helpers/cache.js';

const KEYS = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 13])).filter(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
);
const BREAKER = { failureThreshold: 2, openMs: 500 };

let nextKey = 0;
/** A latest read of a key not read before (so never coalesced with another). */
async function read(url: string): Promise<Reply> {
  const key = KEYS[nextKey++ % KEYS.length];
  const reply = await rawItem(url, hex(key));
  expect(reply.status, reply.body.toString()).toBe(200);
  expect(reply.body).toEqual(simTableItem(HANDLE, key, BigInt(reply.headers['x-node-ledger-version'])));
  return reply;
}

/**
 * A failing node and a healthy one. The failing one is a version ahead, so while
 * its circuit lets traffic through, the router picks it first.
 */
async function setup(
  probeIntervalMs = 600_000,
  breaker = BREAKER,
): Promise<{ failing: SimNode; healthy: SimNode; url: string; state: NodeState; health: () => string }> {
  const failing = await sim();
  const healthy = await sim();
  failing.ledger.advance(1);
  const { app, url } = await proxy([failing, healthy], { routing: { probeIntervalMs, breaker } });
  const state = app.pool.nodes[0];
  return { failing, healthy, url, state, health: () => app.pool.health(state) };
}

describe('upstream circuit breaker (failureThreshold 2, openMs 500)', () => {
  it('a failing node stops receiving traffic after 2 failures, gets one trial after openMs, and closes on success', async () => {
    const { failing, healthy, url, state, health } = await setup();
    failing.faults.set({ mode: 'html', routes: ['raw_item'] });
    const calls = (): number => failing.counters.byRoute.raw_item;

    await read(url);
    expect(calls()).toBe(1);
    expect(state.circuit()).toBe('closed');
    await read(url);
    expect(calls()).toBe(2);
    expect(state.circuit()).toBe('open');
    expect(health()).toBe('down');

    // Open: no traffic at all while openMs runs. Reads are made in its first half only:
    // one begun near its end may be routed after it, as the trial, which a look at the
    // state before the read cannot rule out on a busy machine.
    const healthyBefore = healthy.counters.byRoute.raw_item;
    const opened = performance.now();
    let during = 0;
    do {
      await read(url);
      during++;
    } while (performance.now() - opened < BREAKER.openMs / 2 && during < 50);
    expect(calls(), 'an open circuit let reads through').toBe(2);
    expect(healthy.counters.byRoute.raw_item).toBeGreaterThanOrEqual(healthyBefore + during);

    // Half-open after openMs: one trial. It fails → open again, no traffic.
    await until(() => state.circuit() === 'half-open', 3000, 'half-open');
    await read(url);
    expect(calls(), 'the half-open trial').toBe(3);
    expect(state.circuit()).toBe('open');
    await read(url);
    await read(url);
    expect(calls()).toBe(3);

    // The node recovers: the next trial succeeds and closes the circuit.
    failing.faults.clear();
    await until(() => state.circuit() === 'half-open', 3000, 'half-open again');
    const trial = await read(url);
    expect(calls()).toBe(4);
    expect(trial.headers['x-node-ledger-version']).toBe('1001');
    expect(state.circuit()).toBe('closed');
    expect(health()).toBe('healthy');
    await read(url);
    await read(url);
    expect(calls(), 'a closed circuit takes traffic again').toBe(6);
  });

  it('failures must be consecutive: a success in between resets the count', async () => {
    const { failing, url, state } = await setup();
    failing.faults.set({ mode: 'status500', routes: ['raw_item'], count: 1 });
    await read(url);
    await read(url); // success on the failing node
    failing.faults.set({ mode: 'status500', routes: ['raw_item'], count: 1 });
    await read(url);
    expect(failing.counters.byRoute.raw_item).toBe(3);
    expect(state.circuit()).toBe('closed');
    await read(url);
    expect(failing.counters.byRoute.raw_item).toBe(4);
  });

  it('half-open lets exactly one trial call through, even when reads arrive together', async () => {
    const { failing, healthy, url, state } = await setup();
    failing.faults.set({ mode: 'html', routes: ['raw_item'] });
    await read(url);
    await read(url);
    expect(state.circuit()).toBe('open');
    // The node now answers, slowly: every call sent to it stays in flight 300 ms.
    failing.faults.set({ mode: 'slow', delayMs: 300, routes: ['raw_item'] });
    await until(() => state.circuit() === 'half-open', 3000, 'half-open');
    const before = failing.counters.byRoute.raw_item;
    const healthyBefore = healthy.counters.byRoute.raw_item;
    await Promise.all(Array.from({ length: 8 }, () => read(url)));
    expect(failing.counters.byRoute.raw_item - before, 'trial calls sent to a half-open node').toBe(1);
    expect(healthy.counters.byRoute.raw_item - healthyBefore).toBe(7);
  });

  it('an open circuit gets no reads until openMs has passed, even though its GET /v1 probes succeed', async () => {
    // Reads fail, the ledger-info probe (every 50 ms) succeeds: a node with a broken read path.
    const { failing, url, state } = await setup(50, { failureThreshold: 2, openMs: 2000 });
    failing.faults.set({ mode: 'status500', routes: ['raw_item'] });
    await read(url);
    await read(url);
    expect(failing.counters.byRoute.raw_item).toBe(2);
    // Reads and successful probes take turns, well inside openMs.
    for (let i = 1; i <= 3; i++) {
      await read(url);
      const probed = state.probed;
      await until(() => state.probed !== probed, 500, `a probe answered after read ${i} of the open circuit`);
    }
    expect(failing.counters.byRoute.raw_item, 'reads reached a node whose circuit was opened < openMs ago').toBe(2);
    expect(state.circuit()).toBe('open');
  });
});

describe('upstream circuit breaker: probes do not reset it', () => {
  it('a node that fails every read but answers GET /v1 opens after failureThreshold reads, with probes every 10 ms', async () => {
    const breaker = { failureThreshold: 5, openMs: 60_000 };
    const { failing, url, state } = await setup(10, breaker);
    failing.faults.set({ mode: 'status500', routes: ['raw_item'] });
    // Each read fails over to the healthy node; the failing one is asked until its circuit opens.
    for (let i = 0; i < 5; i++) {
      await read(url);
      // A probe answers in between, as probes would in production.
      const probed = state.probed;
      await until(() => state.probed !== probed, 500, `a probe answered after read ${i + 1}`);
    }
    expect(failing.counters.byRoute.raw_item).toBe(5);
    expect(state.circuit()).toBe('open');
    for (let i = 0; i < 5; i++) await read(url);
    expect(failing.counters.byRoute.raw_item).toBe(5);
  });
});
