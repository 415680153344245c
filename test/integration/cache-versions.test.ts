// The memory tier as the ledger moves (api.md §7): latest answers stored at their
// version, the ledger headers of hits, pruned entries and future versions, with
// what reaches the node counted on the sim. The proxy probes its node when the
// test runs a round, so it learns of each ledger change when the test says.
import { describe, expect, it } from 'vitest';
import { VM_OUT_OF_GAS } from '../../src/sim/index.js';
import {
  ABSENT,
  BALANCE,
  balanceAt,
  cacheOf,
  errorBodyOf,
  expectHitMemory,
  expectStatus,
  hex,
  itemAt,
  OWNER,
  PRESENT,
  PRESENT_KEYS,
  served,
  simHeaders,
} from '../helpers/cache.js';
import { ManualProbes } from '../helpers/probes.js';
import {
  ledgerHeaders,
  proxy,
  rawItem,
  sim,
  simBehindProxy,
  viewJson,
  type Reply,
  QUIET_ROUTING,
} from '../helpers/proxy.js';

/** A sim, and a proxy in front of it that probes it when it starts and then at each `probes.round()`. */
async function simBehindProbedProxy() {
  const node = await sim();
  const probes = new ManualProbes();
  const { app, url } = await proxy([node], { routing: QUIET_ROUTING }, { probeSchedule: probes });
  return { node, app, url, probes };
}

describe('latest answers feed the pinned entries', () => {
  it('a latest read is stored at the version of its ledger header: the pinned read there is a HIT', async () => {
    const { node, url } = await simBehindProbedProxy();
    node.ledger.advance(7);
    const cases: Array<{
      label: string;
      latest: () => Promise<Reply>;
      pinned: (v: bigint) => Promise<Reply>;
      expected: (v: bigint) => Buffer;
    }> = [
      {
        label: 'raw_item',
        latest: () => rawItem(url, hex(PRESENT)),
        pinned: (v) => rawItem(url, hex(PRESENT), { version: v }),
        expected: (v) => itemAt(PRESENT, v),
      },
      {
        label: 'view',
        latest: () => viewJson(url, BALANCE, [OWNER]),
        pinned: (v) => viewJson(url, BALANCE, [OWNER], { version: v }),
        expected: (v) => balanceAt(OWNER, v),
      },
      {
        label: 'absent item (404 table_item_not_found)',
        latest: () => rawItem(url, hex(ABSENT)),
        pinned: (v) => rawItem(url, hex(ABSENT), { version: v }),
        expected: () => Buffer.from(''),
      },
    ];
    for (const c of cases) {
      const latest = await c.latest();
      expect(cacheOf(latest), c.label).toBe('MISS');
      const v = BigInt(latest.headers['x-node-ledger-version']);
      expect(v, c.label).toBe(1007n);
      if (latest.status === 200) expect(latest.body.equals(c.expected(v)), c.label).toBe(true);
      else expect(errorBodyOf(latest).error_code, c.label).toBe('table_item_not_found');

      const before = served(node);
      const pinned = await c.pinned(v);
      expectHitMemory(pinned, c.label);
      expect(pinned.status, c.label).toBe(latest.status);
      expect(pinned.body.equals(latest.body), c.label).toBe(true);
      expect(pinned.headers['x-node-gas-used'], c.label).toBe(latest.headers['x-node-gas-used']);
      expect(served(node), `${c.label}: no node call`).toBe(before);
    }
  });

  it('an out-of-gas latest answer is not stored as the pinned answer', async () => {
    const { node, url } = await simBehindProbedProxy();
    const latest = await viewJson(url, '0x1::sim::burn', ['2000000']);
    expectStatus(latest, 400);
    expect(errorBodyOf(latest).vm_error_code).toBe(VM_OUT_OF_GAS);
    const before = node.counters.byRoute.view;
    const pinned = await viewJson(url, '0x1::sim::burn', ['2000000'], {
      version: BigInt(latest.headers['x-node-ledger-version']),
    });
    expectStatus(pinned, 400);
    expect(cacheOf(pinned)).toBe('MISS');
    expect(node.counters.byRoute.view).toBe(before + 1);
  });
});

describe('ledger headers of hits', () => {
  it('follow the advancing ledger, and never go backwards across hits', async () => {
    const { node, app, url, probes } = await simBehindProbedProxy();
    const first = await rawItem(url, hex(PRESENT), { version: 1000 });
    expectStatus(first, 200);
    expect(ledgerHeaders(first)).toEqual(simHeaders(1000n, 0n));
    expectStatus(await viewJson(url, BALANCE, [OWNER], { version: 1000 }), 200);

    node.ledger.advance(50);
    await probes.round();
    expect(app.watermark.current()?.ledgerVersion, 'the probe saw 1050').toBe(1050n);
    const hit = await rawItem(url, hex(PRESENT), { version: 1000 });
    expectHitMemory(hit, 'after advance');
    expect(hit.body.equals(first.body)).toBe(true);
    expect(ledgerHeaders(hit), 'a hit carries the freshest snapshot, all seven headers from it').toEqual(
      simHeaders(1050n, 0n),
    );
    expect(node.counters.byRoute.raw_item).toBe(1);

    // Advance in steps while hits keep coming; a probe round lands between the hits of every other step.
    let last = 1050n;
    for (let step = 0; step < 20; step++) {
      node.ledger.advance(step % 3);
      for (let i = 0; i < 3; i++) {
        const r = await (i % 2 === 0
          ? rawItem(url, hex(PRESENT), { version: 1000 })
          : viewJson(url, BALANCE, [OWNER], { version: 1000 }));
        expectHitMemory(r, `step ${step}`);
        const v = BigInt(r.headers['x-node-ledger-version']);
        expect(v >= last, `step ${step}: header version ${v} after ${last}`).toBe(true);
        expect(ledgerHeaders(r), `step ${step}: one snapshot`).toEqual(simHeaders(v, 0n));
        last = v;
      }
      if (step % 2 === 1) await probes.round();
    }
    const top = 1050n + 19n; // sum of step % 3 over 20 steps
    await probes.round();
    expect(app.watermark.current()?.ledgerVersion, `the probe saw ${top}`).toBe(top);
    const end = await rawItem(url, hex(PRESENT), { version: 1000 });
    expect(end.headers['x-node-ledger-version']).toBe(String(top));
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(node.counters.byRoute.view).toBe(1);
  });
});

describe('pruning', () => {
  it('turns a cached entry into 410 version_pruned with ledger headers, without a node call', async () => {
    const { node, app, url, probes } = await simBehindProbedProxy();
    const n = 990n;
    const cached = await rawItem(url, hex(PRESENT), { version: n });
    expectStatus(cached, 200);
    expectHitMemory(await rawItem(url, hex(PRESENT), { version: n }), 'before pruning');
    const viewCached = await viewJson(url, BALANCE, [OWNER], { version: n });
    expectStatus(viewCached, 200);

    node.ledger.pruneTo(n + 1n);
    await probes.round();
    expect(app.pool.isPruned(n), 'the probe saw the pruning').toBe(true);
    const before = served(node);
    for (const [label, send] of [
      ['raw_item cached', () => rawItem(url, hex(PRESENT), { version: n })],
      ['view cached', () => viewJson(url, BALANCE, [OWNER], { version: n })],
      ['raw_item never cached', () => rawItem(url, hex(PRESENT_KEYS[1]), { version: n - 5n })],
    ] as const) {
      const r = await send();
      expectStatus(r, 410, label);
      expect(errorBodyOf(r), label).toEqual({
        message: `Ledger version(${label.endsWith('never cached') ? n - 5n : n}) has been pruned`,
        error_code: 'version_pruned',
        vm_error_code: null,
      });
      expect(Object.keys(ledgerHeaders(r)), `${label}: all seven ledger headers`).toHaveLength(7);
      expect(r.headers['x-node-chain-id'], label).toBe('4');
      expect(r.headers['x-node-gas-used'], label).toBeUndefined();
    }
    expect(served(node), 'no read reached the node').toBe(before);

    // The oldest version itself is still served, from the node.
    const edge = await rawItem(url, hex(PRESENT), { version: n + 1n });
    expectStatus(edge, 200);
    expect(edge.body.equals(itemAt(PRESENT, n + 1n))).toBe(true);
  });

  it("a 410's ledger headers show the pruning it reports (oldest version above N)", async () => {
    // Pruning without the ledger advancing: the probe learns oldest = N+1 at the
    // same latest version. The 410 says N is pruned; its headers must not say
    // that the oldest version is still 0 (api.md §7: the freshest snapshot known).
    const { node, app, url, probes } = await simBehindProbedProxy();
    const n = 990n;
    expectStatus(await rawItem(url, hex(PRESENT), { version: n }), 200);
    node.ledger.pruneTo(n + 1n);
    await probes.round();
    expect(app.pool.isPruned(n), 'the probe saw the pruning').toBe(true);
    const r = await rawItem(url, hex(PRESENT), { version: n });
    expectStatus(r, 410);
    expect(ledgerHeaders(r)).toEqual(simHeaders(1000n, n + 1n));
    // And a hit of a version still served says the same.
    const hit = await rawItem(url, hex(PRESENT), { version: 1000 });
    expectStatus(hit, 200);
    expect(ledgerHeaders(hit)).toEqual(simHeaders(1000n, n + 1n));
  });
});

describe('future versions', () => {
  it('are never cached: 404 version_not_found until the node reaches N, then 200 from the node', async () => {
    const { node, app, url, probes } = await simBehindProbedProxy();
    const n = 1010n;
    for (let i = 1; i <= 3; i++) {
      const r = await rawItem(url, hex(PRESENT), { version: n });
      expectStatus(r, 404, `attempt ${i}`);
      expect(errorBodyOf(r).error_code).toBe('version_not_found');
      expect(cacheOf(r)).toBe('MISS');
      expect(node.counters.byRoute.raw_item, `attempt ${i} reached the node`).toBe(i);
    }
    const v = await viewJson(url, BALANCE, [OWNER], { version: n });
    expectStatus(v, 404);
    expect(node.counters.byRoute.view).toBe(1);

    node.ledger.advance(20);
    await probes.round();
    expect(app.watermark.current()?.ledgerVersion, 'the probe saw 1020').toBe(1020n);
    const now = await rawItem(url, hex(PRESENT), { version: n });
    expectStatus(now, 200);
    expect(cacheOf(now)).toBe('MISS');
    expect(now.body.equals(itemAt(PRESENT, n))).toBe(true);
    expect(node.counters.byRoute.raw_item).toBe(4);
    const view = await viewJson(url, BALANCE, [OWNER], { version: n });
    expectStatus(view, 200);
    expect(view.body.equals(balanceAt(OWNER, n))).toBe(true);
    expect(node.counters.byRoute.view).toBe(2);
    // From now on it is immutable, so cached.
    expectHitMemory(await rawItem(url, hex(PRESENT), { version: n }), 'after the node reached N');
    expect(node.counters.byRoute.raw_item).toBe(4);
  });

  it('a future version is not cached even when the node is reached before the probe saw it advance', async () => {
    const { node, url } = await simBehindProxy({ routing: QUIET_ROUTING });
    const n = 1005n;
    expectStatus(await rawItem(url, hex(PRESENT), { version: n }), 404);
    node.ledger.advance(10);
    const r = await rawItem(url, hex(PRESENT), { version: n });
    expectStatus(r, 200);
    expect(r.body.equals(itemAt(PRESENT, n))).toBe(true);
    expect(node.counters.byRoute.raw_item).toBe(2);
  });
});
