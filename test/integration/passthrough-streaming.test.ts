// Passthrough successes are streamed on as they arrive, never held whole: an
// answer far larger than the proxy's budget of answer bytes in flight passes
// through whole, the node's slot is held until its last byte is passed on, and
// a client that leaves mid-answer ends the node's call and gives the slot back.
// A node that never finishes its answer is cut off at routing.deadlineMs; a
// client that is slow to read is not (the time it does not read is not counted).
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { metricValue } from '../helpers/metrics.js';
import { capturedLog, proxy, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { openSocket } from '../helpers/raw-socket.js';
import { until, within } from '../helpers/until.js';

/** Quiet, with 1 MiB of answers in flight at most. */
const ONE_MIB_IN_FLIGHT = { routing: { ...QUIET_ROUTING, maxAnswerBytesInFlight: 1024 * 1024 } };
const BYTES = 32 * 1024 * 1024;

describe('passthrough streaming', () => {
  it('passes on an answer 32 times the answer bytes in flight, whole, with the node own length', async () => {
    const node = await sim();
    node.faults.set({ mode: 'hugeBody', bytes: BYTES, routes: ['gas_price'] });
    const p = await proxy([node], ONE_MIB_IN_FLIGHT);
    const res = await request(`${p.url}/v1/estimate_gas_price`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe(String(BYTES));
    let received = 0;
    for await (const chunk of res.body) received += (chunk as Buffer).length;
    expect(received).toBe(BYTES);
    expect(p.app.pool.answerBytes.peak).toBe(0);
    await until(() => p.app.pool.nodes[0]!.inFlight === 0, 2000, "the node's slot given back");
  });

  it("holds the node's slot while the answer streams, and gives it back when the client leaves mid-answer", async () => {
    const node = await sim();
    node.faults.set({ mode: 'hugeBody', bytes: BYTES, routes: ['gas_price'] });
    const p = await proxy([node], ONE_MIB_IN_FLIGHT);
    const res = await request(`${p.url}/v1/estimate_gas_price`);
    expect(res.statusCode).toBe(200);
    const first = await res.body[Symbol.asyncIterator]().next();
    expect((first.value as Buffer).length).toBeGreaterThan(0);
    expect(p.app.pool.nodes[0]!.inFlight).toBe(1);
    res.body.destroy();
    await until(() => p.app.pool.nodes[0]!.inFlight === 0, 5000, "the node's slot given back after the client left");
  });

  it('a node that never finishes its answer is cut off at routing.deadlineMs: the client connection closes, the slot is given back, the node counted once', async () => {
    const node = await sim();
    node.faults.set({ mode: 'endlessBody', routes: ['gas_price'] });
    const { logger, lines } = capturedLog();
    const p = await proxy(
      [node],
      { routing: { ...QUIET_ROUTING, attemptTimeoutMs: 500, deadlineMs: 1000 } },
      { logger },
    );
    const client = await openSocket(p.url);
    client.socket.write('GET /v1/estimate_gas_price HTTP/1.1\r\nHost: proxy.test\r\n\r\n');
    await until(() => client.received().startsWith('HTTP/1.1 200 '), 3000, 'the answer to start');
    // It streams on until the deadline, then the proxy closes the connection mid-answer (its status is sent).
    await within(client.closed, 5000, 'the proxy to close the connection at the deadline');
    expect(client.received()).not.toMatch(/\r\n0\r\n\r\n$/);
    await until(() => p.app.pool.nodes[0]!.inFlight === 0, 2000, "the node's slot given back");
    await until(
      () => node.counters.total > 0 && lines.some((l) => /did not deliver a passthrough answer/.test(String(l.msg))),
      2000,
      'the log line',
    );
    expect(
      await metricValue(p.app, 'ledger_proxy_upstream_misbehaving_total', { upstream: 'node0', reason: 'unfinished' }),
    ).toBe(1);
    expect(lines.filter((l) => /did not deliver a passthrough answer/.test(String(l.msg)))).toHaveLength(1);
  });

  it('a client slower to read than the deadline still gets the whole answer: only the node delivering counts', async () => {
    const node = await sim();
    node.faults.set({ mode: 'hugeBody', bytes: BYTES, routes: ['gas_price'] });
    const deadlineMs = 4000;
    const p = await proxy([node], { routing: { ...QUIET_ROUTING, attemptTimeoutMs: deadlineMs, deadlineMs } });
    const res = await request(`${p.url}/v1/estimate_gas_price`);
    expect(res.statusCode).toBe(200);
    const chunks = res.body[Symbol.asyncIterator]();
    let received = ((await chunks.next()).value as Buffer).length;
    // The client reads nothing for longer than the whole deadline: the buffers fill,
    // the node waits, and the time passes on the client's account, not the node's.
    await new Promise((resolve) => setTimeout(resolve, deadlineMs + 1000));
    for (let next = await chunks.next(); !next.done; next = await chunks.next())
      received += (next.value as Buffer).length;
    expect(received).toBe(BYTES);
    expect(await metricValue(p.app, 'ledger_proxy_upstream_misbehaving_total', { reason: 'unfinished' })).toBe(0);
  });
});
