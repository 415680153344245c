// Passthrough successes are streamed on as they arrive, never held whole: an
// answer far larger than the proxy's budget of answer bytes in flight passes
// through whole, the node's slot is held until its last byte is passed on, and
// a client that leaves mid-answer ends the node's call and gives the slot back.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { proxy, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

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
});
