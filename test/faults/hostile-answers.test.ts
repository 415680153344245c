// A node whose answers are too big to hold: a gzip bomb (about 1 MiB sent, 1 GiB
// decoded) and huge bodies sent as they are. The proxy holds at most the answer
// cap of one answer, and at most routing.maxAnswerBytesInFlight over all of them;
// beyond either, the read is answered 503 without waiting for the rest.
import { describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES } from '../../src/upstream/transport/node-client.js';
import { hex, itemAt, PRESENT, PRESENT_KEYS } from '../helpers/cache.js';
import { metricValue } from '../helpers/metrics.js';
import { proxy, rawItem, sim } from '../helpers/proxy.js';

const MiB = 1024 * 1024;
/** What the process may gain beyond the one answer it holds: the decoder's and the sockets' buffers. */
const SMALL_BOUND = 64 * MiB;

/** Samples the process's RSS every few ms while `run` runs; resolves with its result and the peak gain. */
async function rssGain<T>(run: () => Promise<T>): Promise<{ result: T; gain: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sample = (): void => {
    peak = Math.max(peak, process.memoryUsage().rss);
  };
  const sampler = setInterval(sample, 5);
  try {
    const result = await run();
    sample();
    return { result, gain: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

describe('a gzip bomb', () => {
  it('is abandoned at the answer cap in decoded bytes: RSS stays within the cap, the 503 comes within the deadline', async () => {
    const node = await sim();
    const deadlineMs = 3000;
    const { url } = await proxy([node], { routing: { attemptTimeoutMs: deadlineMs, deadlineMs } });
    expect((await rawItem(url, hex(PRESENT), { version: 990 })).status).toBe(200);

    node.faults.set({ mode: 'gzipBomb', routes: ['raw_item'] });
    const started = performance.now();
    const { result: reply, gain } = await rssGain(() => rawItem(url, hex(PRESENT_KEYS[1]), { version: 990 }));
    const ms = performance.now() - started;

    expect(reply.status, reply.body.toString()).toBe(503);
    expect(reply.json().error_code).toBe('internal_error');
    expect(ms, 'the 503 came after the deadline').toBeLessThan(deadlineMs);
    expect(gain, `RSS grew by ${Math.round(gain / MiB)} MiB`).toBeLessThan(MAX_ANSWER_BYTES + SMALL_BOUND);
    expect(node.counters.byRoute.raw_item).toBe(2);
  });
});

describe('huge bodies and routing.maxAnswerBytesInFlight', () => {
  it('an answer larger than the bytes in flight allow is shed with 503 before it is buffered', async () => {
    const node = await sim();
    const { app, url } = await proxy([node], { routing: { maxAnswerBytesInFlight: 4 * MiB } });
    node.faults.set({ mode: 'hugeBody', routes: ['raw_item'], bytes: 8 * MiB });

    const reply = await rawItem(url, hex(PRESENT), { version: 990 });
    expect(reply.status, reply.body.toString()).toBe(503);
    expect(await metricValue(app, 'ledger_proxy_shed_total', { reason: 'answer_bytes' })).toBe(1);
    expect(app.pool.answerBytes.peak, 'bytes of the refused answer were held').toBe(0);
    // The proxy's own load says nothing of the node: it stays healthy, and answers once the body fits.
    expect(app.pool.health(app.pool.nodes[0])).toBe('healthy');
    node.faults.clear();
    const after = await rawItem(url, hex(PRESENT), { version: 990 });
    expect(after.status).toBe(200);
    expect(after.body.equals(itemAt(PRESENT, 990n))).toBe(true);
  });

  it('huge answers in parallel never hold more than the cap at once; those that fit are served whole', async () => {
    const node = await sim();
    const cap = 24 * MiB;
    const body = 10 * MiB;
    const { app, url } = await proxy([node], { routing: { maxAnswerBytesInFlight: cap } });
    node.faults.set({ mode: 'hugeBody', routes: ['raw_item'], bytes: body });

    const replies = await Promise.all(PRESENT_KEYS.slice(0, 6).map((key) => rawItem(url, hex(key), { version: 990 })));
    for (const reply of replies) {
      if (reply.status === 200) expect(reply.body.length).toBe(body);
      else expect(reply.status, reply.body.toString()).toBe(503);
    }
    expect(app.pool.answerBytes.peak).toBeGreaterThanOrEqual(body);
    expect(app.pool.answerBytes.peak).toBeLessThanOrEqual(cap);
    expect(app.pool.answerBytes.held, 'every reservation was given back').toBe(0);
    const shed = replies.filter((r) => r.status === 503).length;
    expect(await metricValue(app, 'ledger_proxy_shed_total', { reason: 'answer_bytes' })).toBe(shed);
  });
});
