// The proxy's own process paused (a GC pause, CPU contention) between a node
// call and its write does not blame the node: an attempt's time
// (routing.attemptTimeoutMs) starts when its request is written
// (upstream/transport/call-deadline.ts). A node that does not answer within that
// time after the write still times out, and is blamed.
import { describe, expect, it } from 'vitest';
import { simTableItem } from '../../src/sim/index.js';
import { hex } from '../helpers/cache.js';
import { expectUnavailable } from '../helpers/expect.js';
import { metricValue } from '../helpers/metrics.js';
import { pauseBeforeWrite } from '../helpers/pause.js';
import { HANDLE, proxy, QUIET_ROUTING, rawItem, sim } from '../helpers/proxy.js';

const KEY = Array.from({ length: 64 }, (_, i) => Buffer.from([i, 9])).find(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
)!;
const ATTEMPT_MS = 200;
const PAUSE_MS = 3 * ATTEMPT_MS;
/** One failure opens a node's circuit: a blamed node shows at once. */
const ROUTING = { ...QUIET_ROUTING, attemptTimeoutMs: ATTEMPT_MS, breaker: { failureThreshold: 1, openMs: 60_000 } };

async function pausedRead(hang: boolean) {
  const node = await sim({ startVersion: 1000n });
  const { app, url } = await proxy([node], { routing: ROUTING });
  if (hang) node.faults.set({ mode: 'hang', routes: ['raw_item'] });
  const pause = pauseBeforeWrite(node.url, /\/raw_item/, PAUSE_MS);
  const started = performance.now();
  const reply = await rawItem(url, hex(KEY), { version: 990 });
  const ms = performance.now() - started;
  expect(pause.paused()).toBe(true);
  const state = app.pool.nodes[0]!;
  const failed = await metricValue(app, 'ledger_proxy_upstream_requests_total', { outcome: 'failed' });
  return { node, reply, ms, failed, circuit: state.circuit() };
}

describe(`a pause of the process longer than attemptTimeoutMs (${ATTEMPT_MS} ms) between a node call and its write`, () => {
  it('does not blame the node: the answer is served, no failure is counted, its circuit stays closed', async () => {
    const { node, reply, failed, circuit } = await pausedRead(false);
    expect([reply.status, reply.headers['x-cache']]).toEqual([200, 'MISS']);
    expect(reply.body).toEqual(simTableItem(HANDLE, KEY, 990n));
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(failed).toBe(0);
    expect(circuit).toBe('closed');
  });

  it('a node that then does not answer within attemptTimeoutMs of the write still times out, and is blamed', async () => {
    const { node, reply, ms, failed, circuit } = await pausedRead(true);
    expectUnavailable(reply, [`timed out after ${ATTEMPT_MS} ms`]);
    expect(node.counters.byRoute.raw_item).toBe(1);
    // The pause, then the node's whole time (a timer may fire a millisecond early).
    expect(ms).toBeGreaterThanOrEqual(PAUSE_MS + ATTEMPT_MS - 2);
    expect(failed).toBe(1);
    expect(circuit).toBe('open');
  });
});
