// Chain-id integrity (DESIGN config `chainId`, api.md §7 "never cache … anything from
// an upstream whose chain id differs"): a node that reports another chain id is
// quarantined: it gets no reads, nothing it says is cached or reaches a client's
// ledger headers, and the pool and /metrics report it as 'quarantined'. Without a
// configured chainId the majority of the nodes decides.
import { describe, expect, it } from 'vitest';
import { simTableItem, type SimNode } from '../../src/sim/index.js';
import { ManualProbes } from '../helpers/probes.js';
import { parsePrometheus, samples } from '../helpers/prometheus.js';
import { HANDLE, proxy, rawItem, sim, viewJson, type Reply, QUIET_ROUTING } from '../helpers/proxy.js';
import { hex } from '../helpers/cache.js';

const KEYS = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 11])).filter(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
);
const KEY = KEYS[0];
const reads = (node: SimNode): number => node.counters.byRoute.raw_item + node.counters.byRoute.view;

function slow(nodes: SimNode[], ms = 100): void {
  for (const node of nodes) node.faults.set({ mode: 'slow', delayMs: ms, routes: ['raw_item', 'view'] });
}

/** A mixed load: concurrent latest and pinned reads of both endpoints, all expected to succeed. */
async function load(url: string): Promise<Reply[]> {
  const replies = await Promise.all([
    ...KEYS.slice(0, 8).map((k) => rawItem(url, hex(k))),
    ...KEYS.slice(0, 8).map((k, i) => rawItem(url, hex(k), { version: 900 + i })),
    viewJson(url, '0x1::sim::add', ['1', '2']),
    viewJson(url, '0x1::sim::add', ['1', '2'], { version: 950 }),
  ]);
  for (const reply of replies) expect(reply.status, reply.body.toString()).toBe(200);
  return replies;
}

function expectChainHeaders(replies: Reply[], chainId: string, maxVersion: bigint): void {
  for (const reply of replies) {
    expect(reply.headers['x-node-chain-id']).toBe(chainId);
    expect(BigInt(reply.headers['x-node-ledger-version'])).toBeLessThanOrEqual(maxVersion);
  }
}

/** The ledger_proxy_upstream_state gauge of a node, as /metrics renders it. */
async function metricState(app: Awaited<ReturnType<typeof proxy>>['app'], upstream: string): Promise<string[]> {
  const { body } = await app.metrics.render();
  return samples(parsePrometheus(body), 'ledger_proxy_upstream_state', { upstream })
    .filter((s) => s.value === 1)
    .map((s) => s.labels.state!);
}

describe('chain-id integrity: configured chainId 4', () => {
  it('a node on chain 99 (and the most advanced) is quarantined: no reads, reported, its snapshot never sent', async () => {
    const a = await sim();
    const b = await sim();
    const wrong = await sim({ chainId: 99, startVersion: 2000n });
    const { app, url } = await proxy([wrong, a, b], { chainId: 4, routing: QUIET_ROUTING });
    slow([a, b, wrong]);

    const replies = await load(url);
    expectChainHeaders(replies, '4', 1000n);
    // Hits too carry the watermark, which the wrong chain never fed.
    const hit = await rawItem(url, hex(KEYS[0]), { version: 900 });
    expect(hit.headers['x-cache']).toBe('HIT');
    expectChainHeaders([hit], '4', 1000n);
    expect(app.watermark.current()?.chainId).toBe(4);
    expect(app.watermark.current()?.ledgerVersion).toBe(1000n);

    // A version only the wrong chain "has" is not served by it either.
    const beyond = await rawItem(url, hex(KEY), { version: 1500 });
    expect(beyond.status).toBe(404);
    expect(beyond.json().error_code).toBe('version_not_found');

    expect(wrong.counters.byRoute.raw_item).toBe(0);
    expect(wrong.counters.byRoute.view).toBe(0);
    expect(app.pool.health(app.pool.nodes[0])).toBe('quarantined');
    expect(await metricState(app, 'node0')).toEqual(['quarantined']);
    expect(await metricState(app, 'node1')).toEqual(['healthy']);
    expect(app.pool.ready()).toBe(true);
  });

  it('a node that switches to chain 99 mid-test: its answer is dropped (retried elsewhere, not cached) and it gets no more reads', async () => {
    const a = await sim();
    const flips = await sim({ startVersion: 1010n }); // the most advanced: latest reads go to it
    const probes = new ManualProbes();
    const { app, url } = await proxy([a, flips], { chainId: 4, routing: QUIET_ROUTING }, { probeSchedule: probes });
    flips.ledger.advance(10); // at 1020 on the wrong chain; the proxy still thinks 1010 on chain 4
    flips.ledger.setChainId(99);

    const latest = await rawItem(url, hex(KEY));
    expect(latest.status, latest.body.toString()).toBe(200);
    expect(latest.headers['x-node-chain-id']).toBe('4');
    expect(latest.headers['x-node-ledger-version']).toBe('1000');
    expect(latest.body).toEqual(simTableItem(HANDLE, KEY, 1000n));
    expect(flips.counters.byRoute.raw_item, 'it was asked once, before the proxy knew').toBe(1);
    expect(app.pool.health(app.pool.nodes[1])).toBe('quarantined');

    // Its answer (read at 1020) was not stored: a pinned read at 1020 is not a hit and
    // reaches no node on the wrong chain.
    const pinned = await rawItem(url, hex(KEY), { version: 1020 });
    expect(pinned.headers['x-cache']).not.toBe('HIT');
    expect(pinned.status).toBe(404);
    expect(pinned.json().error_code).toBe('version_not_found');
    // Its snapshot never reached the watermark.
    expect(app.watermark.current()?.ledgerVersion).toBeLessThan(1020n);

    const more = await load(url);
    expectChainHeaders(more, '4', 1010n);
    expect(reads(flips)).toBe(1);

    // Back on chain 4: the quarantine is lifted at the next probe.
    flips.ledger.setChainId(4);
    await probes.round();
    expect(app.pool.health(app.pool.nodes[1])).toBe('healthy');
    expect((await rawItem(url, hex(KEYS[1]))).headers['x-node-ledger-version']).toBe('1020');
    expect(flips.counters.byRoute.raw_item).toBe(2);
  });
});

describe('chain-id integrity: no configured chainId, the majority decides', () => {
  it('two nodes on chain 4, one on 99 → the one on 99 is quarantined', async () => {
    const a = await sim();
    const b = await sim();
    const wrong = await sim({ chainId: 99, startVersion: 2000n });
    const { app, url } = await proxy([a, b, wrong], { routing: QUIET_ROUTING });
    slow([a, b, wrong]);
    expect(app.pool.health(app.pool.nodes[2])).toBe('quarantined');
    const replies = await load(url);
    expectChainHeaders(replies, '4', 1000n);
    expect(reads(wrong)).toBe(0);
    expect(await metricState(app, 'node2')).toEqual(['quarantined']);
  });

  it('…even when the node on 99 answers the start-up probe first', async () => {
    const a = await sim();
    const b = await sim();
    const wrong = await sim({ chainId: 99, startVersion: 2000n });
    // The two honest nodes answer the start-up probe 150 ms late.
    a.faults.set({ mode: 'slow', delayMs: 150, routes: ['ledger_info'], count: 1 });
    b.faults.set({ mode: 'slow', delayMs: 150, routes: ['ledger_info'], count: 1 });
    const { app, url } = await proxy([a, b, wrong], { routing: QUIET_ROUTING });

    expect(app.pool.health(app.pool.nodes[2]), 'the minority chain is not quarantined once the majority is known').toBe(
      'quarantined',
    );
    // The watermark (ledger headers of every hit and proxy error) must not hold the other chain's snapshot.
    expect(app.watermark.current()?.chainId).toBe(4);
    slow([a, b, wrong]);
    const replies = await load(url);
    const hit = await rawItem(url, hex(KEYS[0]), { version: 900 });
    expect(hit.headers['x-cache']).toBe('HIT');
    expectChainHeaders([...replies, hit], '4', 1000n);
    expect(reads(wrong), 'the node on the minority chain took reads').toBe(0);
  });
});
