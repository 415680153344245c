// Upstream pool routing (api.md §7, DESIGN "upstream/"): which node takes a read.
// Every assertion counts what reached each simulated node. Several nodes are made
// 'slow' so that concurrent reads really overlap in flight: without the routing
// rule under test, least-in-flight spreading would send some of them to the wrong
// node, so these tests fail when a rule is missing.
import { describe, expect, it } from 'vitest';
import { simTableItem, type SimNode } from '../../src/sim/index.js';
import { ManualProbes } from '../helpers/probes.js';
import {
  HANDLE,
  ledgerHeaders,
  proxy,
  rawItem,
  sim,
  viewJson,
  type Reply,
  QUIET_ROUTING,
  versionOf,
} from '../helpers/proxy.js';
import { hex } from '../helpers/cache.js';
import { expectError } from '../helpers/expect.js';
import { until } from '../helpers/until.js';

/** Keys present in the sim's table (presence does not depend on the version). */
const KEYS = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 3])).filter(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
);
const KEY = KEYS[0];

/** Probes only at start: the tests decide when the proxy learns of a ledger (a round of ManualProbes). */

/** Reads of the two served endpoints that reached a node (probes excluded). */
const reads = (node: SimNode): number => node.counters.byRoute.raw_item + node.counters.byRoute.view;

/** Node calls take `ms`, so concurrent reads overlap in flight. */
function slow(nodes: SimNode[], ms = 150): void {
  for (const node of nodes) node.faults.set({ mode: 'slow', delayMs: ms, routes: ['raw_item', 'view'] });
}

function expectItem(reply: Reply, key: Buffer, version: bigint, label = ''): void {
  expect(reply.status, `${label} ${reply.body.toString()}`).toBe(200);
  expect(reply.body, label).toEqual(simTableItem(HANDLE, key, version));
}

describe('upstream routing: pinned reads go only to a node whose oldest ≤ N ≤ latest', () => {
  it('a lagging node (latest 500) gets no read pinned at 780..795, though it is idle', async () => {
    const lagging = await sim({ startVersion: 500n });
    const ahead = await sim();
    const { url } = await proxy([lagging, ahead], { routing: QUIET_ROUTING });
    slow([lagging, ahead]);

    // Control: where both cover N, concurrent reads do spread over both nodes.
    const control = await Promise.all(KEYS.slice(0, 12).map((k) => rawItem(url, hex(k), { version: 400 })));
    control.forEach((r, i) => expectItem(r, KEYS[i], 400n, `control ${i}`));
    expect(lagging.counters.byRoute.raw_item, 'control: spread by least in-flight').toBeGreaterThan(0);
    expect(ahead.counters.byRoute.raw_item, 'control: spread by least in-flight').toBeGreaterThan(0);
    lagging.counters.reset();
    ahead.counters.reset();

    const versions = Array.from({ length: 16 }, (_, i) => 780n + BigInt(i));
    const replies = await Promise.all(versions.map((v) => rawItem(url, hex(KEY), { version: v })));
    replies.forEach((r, i) => expectItem(r, KEY, versions[i], `v${versions[i]}`));
    const view = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 800 });
    expect(view.status).toBe(200);
    expect(view.json()).toEqual(['3']);

    expect(reads(lagging), 'the lagging node was asked for versions it has not reached').toBe(0);
    expect(ahead.counters.byRoute.raw_item).toBe(16);
    expect(ahead.counters.byRoute.view).toBe(1);
  });

  it('a node with a smaller pruning window (pruneTo 900) gets no read pinned at 850..865', async () => {
    const pruned = await sim();
    const full = await sim();
    const probes = new ManualProbes();
    const { app, url } = await proxy([pruned, full], { routing: QUIET_ROUTING }, { probeSchedule: probes });
    pruned.ledger.pruneTo(900n);
    await probes.round();
    expect(app.pool.nodes[0].ledger?.oldestLedgerVersion).toBe(900n);
    slow([pruned, full]);

    const versions = Array.from({ length: 16 }, (_, i) => 850n + BigInt(i));
    const replies = await Promise.all(versions.map((v) => rawItem(url, hex(KEY), { version: v })));
    replies.forEach((r, i) => expectItem(r, KEY, versions[i], `v${versions[i]}`));
    expect(reads(pruned), 'the node that pruned 850.. was asked for it').toBe(0);
    expect(full.counters.byRoute.raw_item).toBe(16);

    // Above its oldest, the pruned node serves again (control).
    const above = await Promise.all(KEYS.slice(0, 12).map((k) => rawItem(url, hex(k), { version: 950 })));
    above.forEach((r, i) => expectItem(r, KEYS[i], 950n));
    expect(pruned.counters.byRoute.raw_item).toBeGreaterThan(0);
  });

  it('a node that pruned since the proxy last looked answers 410: retried on another, client gets 200', async () => {
    const pruned = await sim();
    const full = await sim();
    pruned.ledger.advance(1); // the more advanced node is preferred while both are idle
    const { app, url } = await proxy([pruned, full], { routing: QUIET_ROUTING });
    pruned.ledger.pruneTo(900n); // the proxy does not know yet

    expectItem(await rawItem(url, hex(KEY), { version: 850 }), KEY, 850n);
    expect(pruned.counters.byRoute.raw_item, 'the stale choice was tried first').toBe(1);
    expect(full.counters.byRoute.raw_item).toBe(1);
    // The 410's ledger headers taught the proxy: the next read at 851 goes straight to the other node.
    expect(app.pool.nodes[0].ledger?.oldestLedgerVersion).toBe(900n);
    expectItem(await rawItem(url, hex(KEY), { version: 851 }), KEY, 851n);
    expect(pruned.counters.byRoute.raw_item).toBe(1);
    expect(full.counters.byRoute.raw_item).toBe(2);
  });

  it('N below every node’s oldest → 410 version_pruned from the proxy, with ledger headers; no node asked', async () => {
    const a = await sim();
    const b = await sim();
    const probes = new ManualProbes();
    const { url } = await proxy([a, b], { routing: QUIET_ROUTING }, { probeSchedule: probes });
    a.ledger.pruneTo(900n);
    b.ledger.pruneTo(700n);
    await probes.round();

    for (const reply of [
      await rawItem(url, hex(KEY), { version: 600 }),
      await rawItem(url, hex(KEY), { version: 699 }),
      await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 600 }),
    ]) {
      const body = expectError(reply, 410, 'version_pruned');
      expect(body.message).toMatch(/^Ledger version\((600|699)\) has been pruned$/);
      expect(ledgerHeaders(reply)['x-node-ledger-version']).toBe('1000');
      expect(reply.headers['x-cache']).not.toBe('HIT');
    }
    expect(reads(a) + reads(b), 'a pruned version reached a node').toBe(0);

    // 700 is still inside b's window: b serves it.
    expectItem(await rawItem(url, hex(KEY), { version: 700 }), KEY, 700n);
    expect(b.counters.byRoute.raw_item).toBe(1);
    expect(a.counters.byRoute.raw_item).toBe(0);
  });

  it('an archive node serves what every normal node pruned, and only that', async () => {
    const a = await sim();
    const b = await sim();
    const archive = await sim();
    const probes = new ManualProbes();
    const { url } = await proxy(
      [a, b, { url: archive.url, name: 'archive', role: 'archive' }],
      { routing: QUIET_ROUTING },
      { probeSchedule: probes },
    );
    a.ledger.pruneTo(900n);
    b.ledger.pruneTo(700n);
    await probes.round();

    expectItem(await rawItem(url, hex(KEY), { version: 600 }), KEY, 600n, 'pruned on every normal node');
    const view = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 600 });
    expect(view.status).toBe(200);
    expect(view.json()).toEqual(['3']);
    expect(archive.counters.byRoute.raw_item).toBe(1);
    expect(archive.counters.byRoute.view).toBe(1);
    expect(reads(a) + reads(b)).toBe(0);

    // Where a normal node covers N, or for latest reads, the archive node is not used.
    slow([a, b, archive]);
    const pinned = await Promise.all(KEYS.slice(0, 8).map((k) => rawItem(url, hex(k), { version: 850 })));
    pinned.forEach((r, i) => expectItem(r, KEYS[i], 850n, `850 #${i}`));
    const latest = await Promise.all(KEYS.slice(0, 8).map((k) => rawItem(url, hex(k))));
    latest.forEach((r, i) => expectItem(r, KEYS[i], 1000n, `latest #${i}`));
    expect(reads(archive), 'the archive node took reads a normal node covers').toBe(2);
    expect(b.counters.byRoute.raw_item).toBeGreaterThanOrEqual(8);
  });
});

describe('upstream routing: N beyond every node’s latest', () => {
  it('the most advanced node answers 404 version_not_found (its answer is the one passed through)', async () => {
    const ahead = await sim();
    const behind = await sim({ startVersion: 900n });
    // The less advanced node is listed first, so list order does not pick the answer.
    const { url } = await proxy([behind, ahead], { routing: QUIET_ROUTING });

    const first = await rawItem(url, hex(KEY), { version: 1500 });
    const body = expectError(first, 404, 'version_not_found');
    // The answer passed through must be the most advanced node's: it says latest is 1000.
    expect(body.message).toBe('Ledger version(1500) not found, latest version is 1000');
    expect(ledgerHeaders(first)['x-node-ledger-version']).toBe('1000');
    expect(first.headers['x-cache']).not.toBe('HIT');
    expect(ahead.counters.byRoute.raw_item, 'the most advanced node was asked').toBe(1);
  });

  it('a 404 version_not_found is not cached: a repeat reaches a node, and once a node reaches N it is a 200', async () => {
    const ahead = await sim();
    const behind = await sim({ startVersion: 900n });
    const { url } = await proxy([behind, ahead], { routing: QUIET_ROUTING });
    const first = await rawItem(url, hex(KEY), { version: 1500 });
    expectError(first, 404, 'version_not_found');
    expect(first.headers['x-cache']).not.toBe('HIT');
    expect(ledgerHeaders(first)['x-node-ledger-version']).toBe('1000');

    const before = reads(ahead) + reads(behind);
    const again = await rawItem(url, hex(KEY), { version: 1500 });
    expectError(again, 404, 'version_not_found');
    expect(again.headers['x-cache']).not.toBe('HIT');
    expect(reads(ahead) + reads(behind)).toBeGreaterThan(before);

    // Once the node reaches 1500 the same read is a 200 (nothing stale was stored).
    ahead.ledger.advance(500);
    expectItem(await rawItem(url, hex(KEY), { version: 1500 }), KEY, 1500n);
  });

  it('a node that advanced since the proxy last looked still serves N (404 from another is retried)', async () => {
    const a = await sim();
    const b = await sim();
    const { url } = await proxy([a, b], { routing: QUIET_ROUTING });
    b.ledger.advance(100); // the proxy still thinks both are at 1000
    expectItem(await rawItem(url, hex(KEY), { version: 1050 }), KEY, 1050n);
    expect(b.counters.byRoute.raw_item).toBe(1);
  });
});

describe('upstream routing: latest reads', () => {
  it('go to the most advanced node (read-your-latest): a node behind it gets none, even within maxLagVersions and idle', async () => {
    const top = await sim();
    const near = await sim({ startVersion: 995n }); // 5 behind: within maxLag 100, "healthy"
    const lagging = await sim({ startVersion: 800n }); // 200 behind
    const { app, url } = await proxy([lagging, near, top], { routing: { ...QUIET_ROUTING, maxLagVersions: 100 } });
    expect(app.pool.health(app.pool.nodes[0])).toBe('lagging');
    expect(app.pool.health(app.pool.nodes[1])).toBe('healthy');
    slow([top, near, lagging]);

    // Four clients at once, in rounds: no client sees the version go back.
    const seen = [-1n, -1n, -1n, -1n];
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(seen.map((_, c) => rawItem(url, hex(KEYS[round * 4 + c]))));
      replies.forEach((r, c) => {
        expect(r.status, r.body.toString()).toBe(200);
        expectItem(r, KEYS[round * 4 + c], versionOf(r), `latest round ${round} client ${c}`);
        expect(versionOf(r)).toBeGreaterThanOrEqual(seen[c]);
        seen[c] = versionOf(r);
        expect(r.headers['x-node-ledger-version']).toBe('1000');
      });
    }
    expect(reads(lagging) + reads(near), 'a node behind the most advanced took latest reads').toBe(0);
    expect(top.counters.byRoute.raw_item).toBe(20);
  });

  it('the most advanced node down: latest reads fail over to the next one, counted as step backs', async () => {
    const top = await sim();
    const near = await sim({ startVersion: 995n });
    const { app, url } = await proxy([near, top], { routing: { ...QUIET_ROUTING, maxLagVersions: 100 } });
    expect(versionOf(await rawItem(url, hex(KEYS[0])))).toBe(1000n);
    await top.stop();
    const after = await rawItem(url, hex(KEYS[1]));
    expect(after.status).toBe(200);
    expect(versionOf(after)).toBe(995n);
    const counted = await app.metrics.registry.getSingleMetricAsString('ledger_proxy_latest_step_backs_total');
    expect(counted).toMatch(/ledger_proxy_latest_step_backs_total 1$/m);
  });

  it('once a lagging node catches up (probe), it takes latest reads again', async () => {
    const top = await sim();
    const lagging = await sim({ startVersion: 800n });
    const probes = new ManualProbes();
    const { app, url } = await proxy(
      [lagging, top],
      { routing: { ...QUIET_ROUTING, maxLagVersions: 100 } },
      { probeSchedule: probes },
    );
    lagging.ledger.advance(200);
    await probes.round();
    expect(app.pool.health(app.pool.nodes[0])).toBe('healthy');
    slow([top, lagging]);
    const replies = await Promise.all(KEYS.slice(0, 10).map((k) => rawItem(url, hex(k))));
    replies.forEach((r, i) => expectItem(r, KEYS[i], 1000n));
    expect(lagging.counters.byRoute.raw_item).toBeGreaterThan(0);
  });
});

describe('upstream routing: the watermark never goes backwards', () => {
  it('hits, pinned misses and proxy errors carry ≥ the highest version any reply showed, while a lagging node answers', async () => {
    const top = await sim();
    const behind = await sim({ startVersion: 900n }); // within the default maxLag: it serves reads too
    const probes = new ManualProbes();
    const { app, url } = await proxy([behind, top], { routing: QUIET_ROUTING }, { probeSchedule: probes });
    let highest = 0n;
    const seen = (reply: Reply, label: string, watermarked: boolean): void => {
      const v = versionOf(reply);
      if (watermarked) expect(v, `${label} stepped back below ${highest}`).toBeGreaterThanOrEqual(highest);
      if (v > highest) highest = v;
    };

    for (let round = 0; round < 12; round++) {
      top.ledger.advance(7);
      if (round % 3 === 0) behind.ledger.advance(2);
      // Latest reads (answering node's snapshot): concurrent, so the lagging node takes some.
      slow([top, behind], 40);
      const latest = await Promise.all(KEYS.slice(0, 6).map((k) => rawItem(url, hex(k))));
      top.faults.clear();
      behind.faults.clear();
      latest.forEach((r, i) => {
        expect(r.status).toBe(200);
        seen(r, `round ${round} latest #${i}`, false);
      });
      // Pinned misses inside the lagging node's window, concurrent: both nodes answer them.
      const v = 500 + round;
      const misses = await Promise.all(KEYS.slice(0, 6).map((k) => rawItem(url, hex(k), { version: v })));
      misses.forEach((r, i) => {
        expect(r.status).toBe(200);
        seen(r, `round ${round} pinned miss #${i}`, true);
      });
      // Hits of every earlier round.
      for (let earlier = 0; earlier <= round; earlier++) {
        const hit = await rawItem(url, hex(KEYS[earlier % 6]), { version: 500 + earlier });
        expect(hit.headers['x-cache']).toBe('HIT');
        seen(hit, `round ${round} hit of ${500 + earlier}`, true);
      }
      // The proxy's own error (pruned) carries the watermark too.
      const pruned = await rawItem(url, hex(KEY), { version: 1 });
      if (round === 0) {
        top.ledger.pruneTo(10n);
        behind.ledger.pruneTo(10n);
        await probes.round();
      } else {
        expect(pruned.status).toBe(410);
        seen(pruned, `round ${round} proxy 410`, true);
      }
    }
    expect(behind.counters.byRoute.raw_item, 'the lagging node answered some reads').toBeGreaterThan(0);
    expect(highest).toBe(1000n + 12n * 7n);
    expect(app.watermark.current()?.ledgerVersion).toBe(highest);
  });

  it('a latest answer that arrives while its node’s circuit is open still feeds the watermark', async () => {
    const fresh = await sim();
    const lagging = await sim({ startVersion: 500n });
    const { url } = await proxy([fresh, lagging], {
      routing: { ...QUIET_ROUTING, maxLagVersions: 100, breaker: { failureThreshold: 2, openMs: 60_000 } },
    });
    expect((await rawItem(url, hex(KEY), { version: 400 })).status).toBe(200); // cached: a HIT later
    fresh.counters.reset();
    fresh.ledger.advance(100); // at 1100; the proxy still thinks 1000
    // One slow latest read is in flight to the fresh node…
    fresh.faults.set({ mode: 'slow', delayMs: 300, routes: ['raw_item'], count: 1 });
    const slowRead = rawItem(url, hex(KEYS[0]));
    await until(() => fresh.counters.byRoute.raw_item > 0, 2000, 'the slow read at the fresh node');
    expect(fresh.counters.byRoute.raw_item).toBe(1);
    // …while two others fail on it and open its circuit (they are answered by failover).
    fresh.faults.set({ mode: 'html', routes: ['raw_item'], count: 2 });
    await rawItem(url, hex(KEYS[1]));
    await rawItem(url, hex(KEYS[2]));
    expect(fresh.counters.byRoute.raw_item).toBe(3);

    const latest = await slowRead;
    expect(latest.status).toBe(200);
    expect(latest.headers['x-node-ledger-version']).toBe('1100');
    // The client has now seen 1100: a hit must not carry an older snapshot.
    const hit = await rawItem(url, hex(KEY), { version: 400 });
    expect(hit.status).toBe(200);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(versionOf(hit), 'a hit carries a snapshot older than one already sent to a client').toBeGreaterThanOrEqual(
      1100n,
    );
  });
});
