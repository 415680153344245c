// A node shedding load (aptos-core's memory admission gate; the sim's 'overloaded'
// fault): reads and GET passthrough go to another node, the shedding node is left
// alone for a moment without blame (its circuit and health stay as they were, its
// probes included), every node shedding is answered 503 overloaded with a
// Retry-After and the ledger headers, and a node that recovers takes reads again
// within about a second.
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { simTableItem, type SimNode } from '../../src/sim/index.js';
import { hex } from '../helpers/cache.js';
import { expectNodeErrorBody } from '../helpers/expect.js';
import { metricValue } from '../helpers/metrics.js';
import { call, HANDLE, ledgerHeaders, proxy, QUIET_ROUTING, rawItem, type Reply, sim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const KEYS = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 21])).filter(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
);
const GAS_PRICE = '/v1/estimate_gas_price';

let nextKey = 0;
/** A latest read of a key not read before (never coalesced, never a hit). */
const freshRead = (url: string): Promise<Reply> => rawItem(url, hex(KEYS[nextKey++ % KEYS.length]));

/** Two nodes; the first is a version ahead, so the router asks it first while it takes calls. */
async function pair(
  routing: Record<string, unknown> = {},
): Promise<{ first: SimNode; second: SimNode; url: string; app: App }> {
  const first = await sim();
  const second = await sim();
  first.ledger.advance(1);
  const { app, url } = await proxy([first, second], { routing: { ...QUIET_ROUTING, ...routing } });
  return { first, second, url, app };
}

/** The proxy's own 503 overloaded: node-shaped, Retry-After ≥ 1 s, the ledger headers, no node address. */
function expectShedding(reply: Reply, label: string): number {
  const body = expectNodeErrorBody(reply, 503, 'overloaded', label);
  expect(body.message, label).toContain('shedding load');
  expect(body.message, label).not.toMatch(/127\.0\.0\.1|http:/);
  const retryAfter = Number(reply.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, `${label}: Retry-After ${reply.headers['retry-after']}`).toBe(
    true,
  );
  expect(ledgerHeaders(reply)['x-node-ledger-version'], `${label}: the ledger headers`).toBeDefined();
  expect(reply.headers['x-cache'], label).toBe('BYPASS');
  return retryAfter;
}

const calls = (node: SimNode): number => node.counters.byRoute.raw_item;

describe('a node shedding load (503 overloaded)', () => {
  it('one node sheds: reads and GET passthrough go to the other; the shedding node is not blamed', async () => {
    const { first, second, url, app } = await pair();
    const state = app.pool.nodes[0];
    first.faults.set({ mode: 'overloaded' });
    for (let i = 0; i < 8; i++) {
      const reply = await freshRead(url);
      expect(reply.status, reply.body.toString()).toBe(200);
      expect(reply.headers['x-node-ledger-version']).toBe('1000');
    }
    expect(calls(first), 'the shedding node was asked, then left alone').toBeGreaterThanOrEqual(1);
    expect(calls(second)).toBe(8);
    expect(state.circuit(), 'load shedding is no failure').toBe('closed');
    expect(app.pool.health(state)).toBe('healthy');
    expect(
      await metricValue(app, 'ledger_proxy_upstream_requests_total', { upstream: 'node0', outcome: 'overloaded' }),
    ).toBe(calls(first));
    expect(
      await metricValue(app, 'ledger_proxy_upstream_requests_total', { upstream: 'node0', outcome: 'failed' }),
    ).toBe(0);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'shedding' }),
    ).toBe(1);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'breaker_open' }),
    ).toBe(0);

    // A GET passthrough the shedding node answers `overloaded` goes on to the other node.
    const { first: a, second: b, url: url2 } = await pair();
    a.faults.set({ mode: 'overloaded', routes: ['gas_price'] });
    const passed = await call(url2, GAS_PRICE);
    expect(passed.status, passed.body.toString()).toBe(200);
    expect([a.counters.byRoute.gas_price, b.counters.byRoute.gas_price]).toEqual([1, 1]);
  });

  it('every node sheds: 503 overloaded with Retry-After and the ledger headers, for reads and passthrough; nodes left alone meanwhile', async () => {
    const { first, second, url, app } = await pair();
    first.faults.set({ mode: 'overloaded' });
    second.faults.set({ mode: 'overloaded' });
    expectShedding(await freshRead(url), 'latest read');
    expect([calls(first), calls(second)], 'each node asked once').toEqual([1, 1]);
    // Both are backing off now: the next reads ask no node, and say the same.
    expectShedding(await rawItem(url, hex(KEYS[0]), { version: 990 }), 'pinned read');
    expectShedding(await call(url, GAS_PRICE), 'GET passthrough');
    expect([calls(first), calls(second), first.counters.byRoute.gas_price + second.counters.byRoute.gas_price]).toEqual(
      [1, 1, 0],
    );
    expect(await metricValue(app, 'ledger_proxy_errors_total', { reason: 'node_shedding' })).toBe(3);
    for (const state of app.pool.nodes) {
      expect(state.circuit()).toBe('closed');
      expect(app.pool.health(state)).toBe('healthy');
    }
  });

  it("a write is sent once: its node's overloaded is the proxy's 503 overloaded", async () => {
    const { first, second, url } = await pair();
    first.faults.set({ mode: 'overloaded' });
    second.faults.set({ mode: 'overloaded' });
    const write = await call(url, '/v1/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expectShedding(write, 'POST passthrough');
    expect(first.counters.total + second.counters.total - 2, 'one node asked (beyond the start probes)').toBe(1);
  });

  it("the node's own Retry-After: it is left alone that long, and the client is told so", async () => {
    const node = await sim();
    const { url, app } = await proxy([node], { routing: QUIET_ROUTING });
    node.faults.set({ mode: 'overloaded', retryAfterSeconds: 3 });
    const first = await freshRead(url);
    const told = expectShedding(first, 'first read');
    expect(told).toBeGreaterThanOrEqual(2);
    expect(told).toBeLessThanOrEqual(3);
    node.faults.clear();
    // Well within its 3 s: not asked again, whatever it would answer now.
    expectShedding(await freshRead(url), 'within its Retry-After');
    expect(calls(node)).toBe(1);
    expect(app.pool.nodes[0].shedding).toBe(true);
  });

  it('a node that stops shedding takes reads again within about a second (no breaker open time)', async () => {
    // A breaker that opens on one failure: load shedding must not count as one.
    const { first, url, app } = await pair({ breaker: { failureThreshold: 1, openMs: 10_000 } });
    first.faults.set({ mode: 'overloaded', routes: ['raw_item'] });
    expect((await freshRead(url)).status).toBe(200);
    expect(calls(first)).toBe(1);
    first.faults.clear();
    const before = calls(first);
    await until(
      async () => {
        expect((await freshRead(url)).status).toBe(200);
        return calls(first) > before;
      },
      2500,
      'the recovered node taking reads again',
    );
    expect(app.pool.nodes[0].circuit()).toBe('closed');
  });

  it('load shedding counts neither against the circuit nor for it: failures around it still add up', async () => {
    const { first, url, app } = await pair({ breaker: { failureThreshold: 2, openMs: 10_000 } });
    const state = app.pool.nodes[0];
    first.faults.set({ mode: 'status500', routes: ['raw_item'], count: 1 });
    expect((await freshRead(url)).status).toBe(200);
    first.faults.set({ mode: 'overloaded', routes: ['raw_item'], count: 1 });
    expect((await freshRead(url)).status).toBe(200);
    expect(state.circuit()).toBe('closed');
    await until(() => !state.shedding, 3000, 'the back-off over');
    first.faults.set({ mode: 'status500', routes: ['raw_item'], count: 1 });
    expect((await freshRead(url)).status).toBe(200);
    expect(calls(first), 'the node was asked each time').toBe(3);
    expect(state.circuit(), 'two failures in a row, the shed answer between them not counted').toBe('open');
  });

  it('a probe that gets overloaded marks nothing down: no failure, no down transition, the last snapshot kept', async () => {
    const { first, app } = await pair({ probeIntervalMs: 50 });
    const state = app.pool.nodes[0];
    first.faults.set({ mode: 'overloaded', routes: ['ledger_info'] });
    const probes = first.counters.byRoute.ledger_info;
    await until(() => first.counters.byRoute.ledger_info >= probes + 8, 5000, 'eight probes of the shedding node');
    expect(state.circuit()).toBe('closed');
    expect(app.pool.health(state)).toBe('healthy');
    expect(state.ledger?.ledgerVersion).toBe(1001n);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'down' }),
    ).toBe(0);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'shedding' }),
    ).toBe(1);
    // A probe that passes again ends the back-off, and says so once.
    first.faults.clear();
    await until(
      async () =>
        (await metricValue(app, 'ledger_proxy_upstream_transitions_total', {
          upstream: 'node0',
          state: 'admitting',
        })) === 1,
      5000,
      'admitting again',
    );
    expect(state.shedding).toBe(false);
  });
});
