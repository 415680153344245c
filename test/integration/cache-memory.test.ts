// The memory tier through the whole proxy (SPEC §7, DESIGN "Cache keys and entries"):
// what is served from cache and what reaches the node, counted on the sim.
import { describe, expect, it } from 'vitest';
import { VM_ABORTED, VM_OUT_OF_GAS, type SimRoute } from '../../src/sim/index.js';
import {
  ABSENT,
  BALANCE,
  balanceAt,
  cacheOf,
  errorBodyOf,
  expectStatus,
  hex,
  itemAt,
  OWNER,
  OWNER2,
  PRESENT,
  PRESENT_KEYS,
  served,
  simHeaders,
  tally,
  u64le,
  viewBcsRequest,
  warmConnections,
} from '../helpers/cache.js';
import { until } from '../helpers/until.js';
import { ManualProbes } from '../helpers/probes.js';
import { call, HANDLE, ledgerHeaders, proxy, rawItem, sim, viewJson, type Reply, QUIET_ROUTING } from '../helpers/proxy.js';

/**
 * How long the sim holds a read in the single-flight tests: every request of a
 * burst must reach the proxy before the one node call returns, also on a busy machine.
 */
const SLOW_MS = 300;

/** Probes often, so the watermark follows the sim within a few tens of ms. */
const FAST_PROBES = { routing: { probeIntervalMs: 50 } };

async function setup(overrides: Record<string, unknown> = FAST_PROBES, simOptions: Parameters<typeof sim>[0] = {}) {
  const node = await sim(simOptions);
  const { app, url } = await proxy([node], overrides);
  return { node, app, url };
}

function expectHitMemory(reply: Reply, label: string): void {
  expect(cacheOf(reply), label).toBe('HIT memory');
}

describe('repeat of a pinned read', () => {
  it('is a memory HIT that does not reach the node, byte-identical, with the stored gas used', async () => {
    const { node, url } = await setup();
    const v = 990n;
    const cases: Array<{ label: string; route: SimRoute; send: () => Promise<Reply>; body: Buffer; type: string; gas?: string }> = [
      { label: 'raw_item', route: 'raw_item', send: () => rawItem(url, hex(PRESENT), { version: v }), body: itemAt(PRESENT, v), type: 'application/x-bcs' },
      { label: 'view json', route: 'view', send: () => viewJson(url, BALANCE, [OWNER], { version: v }), body: balanceAt(OWNER, v), type: 'application/json', gas: '7' },
      {
        label: 'view, BCS answer',
        route: 'view',
        send: () => viewJson(url, BALANCE, [OWNER], { version: v, accept: 'application/x-bcs' }),
        body: balanceAt(OWNER, v, 'bcs'),
        type: 'application/x-bcs',
        gas: '7',
      },
      {
        label: 'view, BCS request',
        route: 'view',
        send: () => viewBcsRequest(url, 'add', [u64le(40n), u64le(2n)], { version: v }),
        body: Buffer.from('["42"]'),
        type: 'application/json',
        gas: '3',
      },
    ];
    for (const c of cases) {
      const first = await c.send();
      expectStatus(first, 200, c.label);
      expect(cacheOf(first), c.label).toBe('MISS');
      expect(first.body.equals(c.body), `${c.label}: first body ${first.body.toString('hex')}`).toBe(true);
      expect(first.headers['content-type'], c.label).toBe(c.type);
      expect(first.headers['x-node-gas-used'], c.label).toBe(c.gas);

      const calls = served(node);
      for (let i = 0; i < 3; i++) {
        const again = await c.send();
        expectStatus(again, 200, c.label);
        expectHitMemory(again, c.label);
        expect(again.body.equals(first.body), `${c.label}: hit body ${again.body.toString('hex')}`).toBe(true);
        expect(again.headers['content-type'], c.label).toBe(first.headers['content-type']);
        expect(again.headers['x-node-gas-used'], `${c.label}: stored gas used`).toBe(c.gas);
        expect(ledgerHeaders(again), `${c.label}: ledger headers`).toEqual(simHeaders(1000n, 0n));
      }
      expect(served(node), `${c.label}: the node was not called again`).toBe(calls);
      expect(node.counters.byRoute[c.route]).toBeGreaterThan(0);
    }
  });
});

describe('single-flight', () => {
  for (const route of ['raw_item', 'view'] as const) {
    it(`50 concurrent identical pinned misses (${route}) reach the node once: one MISS, the rest COALESCED`, async () => {
      const { node, url } = await setup();
      await warmConnections(url, 50);
      node.counters.reset();
      node.faults.set({ mode: 'slow', delayMs: SLOW_MS, routes: [route] });
      const send = route === 'raw_item' ? () => rawItem(url, hex(PRESENT), { version: 995 }) : () => viewJson(url, BALANCE, [OWNER], { version: 995 });
      const replies = await Promise.all(Array.from({ length: 50 }, send));
      expect(node.counters.byRoute[route]).toBe(1);
      expect(served(node)).toBe(1);
      expect(tally(replies)).toEqual({ MISS: 1, COALESCED: 49 });
      const expected = route === 'raw_item' ? itemAt(PRESENT, 995n) : balanceAt(OWNER, 995n);
      for (const r of replies) {
        expectStatus(r, 200);
        expect(r.body.equals(expected)).toBe(true);
        expect(ledgerHeaders(r)).toEqual(ledgerHeaders(replies[0]));
        expect(r.headers['x-node-gas-used']).toBe(replies[0].headers['x-node-gas-used']);
      }
    });
  }

  it('50 concurrent identical latest reads reach the node once; a later latest read reaches it again', async () => {
    const { node, url } = await setup();
    await warmConnections(url, 50);
    node.counters.reset();
    node.faults.set({ mode: 'slow', delayMs: SLOW_MS, routes: ['raw_item'] });
    const replies = await Promise.all(Array.from({ length: 50 }, () => rawItem(url, hex(PRESENT))));
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(tally(replies)).toEqual({ MISS: 1, COALESCED: 49 });
    for (const r of replies) {
      expectStatus(r, 200);
      expect(r.body.equals(itemAt(PRESENT, 1000n))).toBe(true);
      expect(ledgerHeaders(r)).toEqual(simHeaders(1000n, 0n));
    }
    node.faults.clear();

    // Latest is never served from cache, even with an entry stored at the same version.
    for (let i = 1; i <= 3; i++) {
      const later = await rawItem(url, hex(PRESENT));
      expectStatus(later, 200);
      expect(cacheOf(later)).toBe('MISS');
      expect(node.counters.byRoute.raw_item).toBe(1 + i);
    }
    node.ledger.advance(10);
    const moved = await rawItem(url, hex(PRESENT));
    expect(moved.headers['x-node-ledger-version']).toBe('1010');
    expect(moved.body.equals(itemAt(PRESENT, 1010n))).toBe(true);
    expect(node.counters.byRoute.raw_item).toBe(5);
  });
});

describe('latest answers feed the pinned entries', () => {
  it('a latest read is stored at the version of its ledger header: the pinned read there is a HIT', async () => {
    const { node, url } = await setup();
    node.ledger.advance(7);
    const cases: Array<{ label: string; latest: () => Promise<Reply>; pinned: (v: bigint) => Promise<Reply>; expected: (v: bigint) => Buffer }> = [
      { label: 'raw_item', latest: () => rawItem(url, hex(PRESENT)), pinned: (v) => rawItem(url, hex(PRESENT), { version: v }), expected: (v) => itemAt(PRESENT, v) },
      { label: 'view', latest: () => viewJson(url, BALANCE, [OWNER]), pinned: (v) => viewJson(url, BALANCE, [OWNER], { version: v }), expected: (v) => balanceAt(OWNER, v) },
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
    const { node, url } = await setup();
    const latest = await viewJson(url, '0x1::sim::burn', ['2000000']);
    expectStatus(latest, 400);
    expect(errorBodyOf(latest).vm_error_code).toBe(VM_OUT_OF_GAS);
    const before = node.counters.byRoute.view;
    const pinned = await viewJson(url, '0x1::sim::burn', ['2000000'], { version: BigInt(latest.headers['x-node-ledger-version']) });
    expectStatus(pinned, 400);
    expect(cacheOf(pinned)).toBe('MISS');
    expect(node.counters.byRoute.view).toBe(before + 1);
  });
});

describe('ledger headers of hits', () => {
  it('follow the advancing ledger, and never go backwards across hits', async () => {
    const { node, app, url } = await setup();
    const first = await rawItem(url, hex(PRESENT), { version: 1000 });
    expectStatus(first, 200);
    expect(ledgerHeaders(first)).toEqual(simHeaders(1000n, 0n));
    expectStatus(await viewJson(url, BALANCE, [OWNER], { version: 1000 }), 200);

    node.ledger.advance(50);
    await until(() => app.watermark.current()?.ledgerVersion === 1050n, 5000, 'the watermark to reach 1050');
    const hit = await rawItem(url, hex(PRESENT), { version: 1000 });
    expectHitMemory(hit, 'after advance');
    expect(hit.body.equals(first.body)).toBe(true);
    expect(ledgerHeaders(hit), 'a hit carries the freshest snapshot, all seven headers from it').toEqual(simHeaders(1050n, 0n));
    expect(node.counters.byRoute.raw_item).toBe(1);

    // Advance in steps while hits keep coming, without waiting for the probes.
    let last = 1050n;
    for (let step = 0; step < 20; step++) {
      node.ledger.advance(step % 3);
      for (let i = 0; i < 3; i++) {
        const r = await (i % 2 === 0 ? rawItem(url, hex(PRESENT), { version: 1000 }) : viewJson(url, BALANCE, [OWNER], { version: 1000 }));
        expectHitMemory(r, `step ${step}`);
        const v = BigInt(r.headers['x-node-ledger-version']);
        expect(v >= last, `step ${step}: header version ${v} after ${last}`).toBe(true);
        expect(ledgerHeaders(r), `step ${step}: one snapshot`).toEqual(simHeaders(v, 0n));
        last = v;
      }
      // Steps spread over a few probe intervals (50 ms), so probes land between hits.
      await new Promise((r) => setTimeout(r, 5));
    }
    const top = 1050n + 19n; // sum of step % 3 over 20 steps
    await until(() => app.watermark.current()?.ledgerVersion === top, 5000, `the watermark to reach ${top}`);
    const end = await rawItem(url, hex(PRESENT), { version: 1000 });
    expect(end.headers['x-node-ledger-version']).toBe(String(top));
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(node.counters.byRoute.view).toBe(1);
  });
});

describe('pruning', () => {
  it('turns a cached entry into 410 version_pruned with ledger headers, without a node call', async () => {
    const { node, app, url } = await setup();
    const n = 990n;
    const cached = await rawItem(url, hex(PRESENT), { version: n });
    expectStatus(cached, 200);
    expectHitMemory(await rawItem(url, hex(PRESENT), { version: n }), 'before pruning');
    const viewCached = await viewJson(url, BALANCE, [OWNER], { version: n });
    expectStatus(viewCached, 200);

    node.ledger.pruneTo(n + 1n);
    await until(() => app.pool.isPruned(n), 5000, 'the probe to see the pruning');
    const before = served(node);
    for (const [label, send] of [
      ['raw_item cached', () => rawItem(url, hex(PRESENT), { version: n })],
      ['view cached', () => viewJson(url, BALANCE, [OWNER], { version: n })],
      ['raw_item never cached', () => rawItem(url, hex(PRESENT_KEYS[1]), { version: n - 5n })],
    ] as const) {
      const r = await send();
      expectStatus(r, 410, label);
      expect(errorBodyOf(r), label).toEqual({ message: `Ledger version(${label.endsWith('never cached') ? n - 5n : n}) has been pruned`, error_code: 'version_pruned', vm_error_code: null });
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
    // that the oldest version is still 0 (SPEC §7: the freshest snapshot known).
    const { node, app, url } = await setup();
    const n = 990n;
    expectStatus(await rawItem(url, hex(PRESENT), { version: n }), 200);
    node.ledger.pruneTo(n + 1n);
    await until(() => app.pool.isPruned(n), 5000, 'the probe to see the pruning');
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
    const { node, app, url } = await setup();
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
    await until(() => app.watermark.current()?.ledgerVersion === 1020n, 5000, 'the watermark to reach 1020');
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
    const { node, url } = await setup({ routing: QUIET_ROUTING });
    const n = 1005n;
    expectStatus(await rawItem(url, hex(PRESENT), { version: n }), 404);
    node.ledger.advance(10);
    const r = await rawItem(url, hex(PRESENT), { version: n });
    expectStatus(r, 200);
    expect(r.body.equals(itemAt(PRESENT, n))).toBe(true);
    expect(node.counters.byRoute.raw_item).toBe(2);
  });
});

describe('what is cached', () => {
  it('deterministic errors are cached: 404 table_item_not_found and a view Move abort (4016)', async () => {
    const { node, url } = await setup();
    const cases: Array<{ label: string; route: SimRoute; send: () => Promise<Reply>; status: number; code: string; vm: number | null }> = [
      { label: 'absent item', route: 'raw_item', send: () => rawItem(url, hex(ABSENT), { version: 990 }), status: 404, code: 'table_item_not_found', vm: null },
      { label: 'always_abort', route: 'view', send: () => viewJson(url, '0x1::sim::always_abort', [], { version: 990 }), status: 400, code: 'invalid_input', vm: VM_ABORTED },
      { label: 'unknown function', route: 'view', send: () => viewJson(url, '0x1::sim::nope', [], { version: 990 }), status: 400, code: 'invalid_input', vm: null },
    ];
    for (const c of cases) {
      const first = await c.send();
      expectStatus(first, c.status, c.label);
      const body = errorBodyOf(first);
      expect(body.error_code, c.label).toBe(c.code);
      expect(body.vm_error_code, c.label).toBe(c.vm);
      expect(cacheOf(first), c.label).toBe('MISS');
      const calls = node.counters.byRoute[c.route];
      for (let i = 0; i < 3; i++) {
        const again = await c.send();
        expectStatus(again, c.status, c.label);
        expectHitMemory(again, c.label);
        expect(again.body.equals(first.body), c.label).toBe(true);
        expect(Object.keys(ledgerHeaders(again)), `${c.label}: ledger headers`).toHaveLength(7);
      }
      expect(node.counters.byRoute[c.route], `${c.label}: no further node call`).toBe(calls);
    }
  });

  it('out of gas (burn(2000000), vm 4002) is not cached: every repeat reaches the node', async () => {
    const { node, url } = await setup();
    for (let i = 1; i <= 4; i++) {
      const r = await viewJson(url, '0x1::sim::burn', ['2000000'], { version: 990 });
      expectStatus(r, 400, `attempt ${i}`);
      const body = errorBodyOf(r);
      expect(body.error_code).toBe('invalid_input');
      expect(body.vm_error_code).toBe(VM_OUT_OF_GAS);
      expect(cacheOf(r)).toBe('MISS');
      expect(node.counters.byRoute.view, `attempt ${i}`).toBe(i);
    }
    // A burn within the limit is an ordinary cacheable answer.
    expectStatus(await viewJson(url, '0x1::sim::burn', ['5'], { version: 990 }), 200);
    expectHitMemory(await viewJson(url, '0x1::sim::burn', ['5'], { version: 990 }), 'burn(5)');
    expect(node.counters.byRoute.view).toBe(5);
  });

  it('failures are never cached: a node 500, unparseable answers, 429, a timeout; the next read reaches the node', async () => {
    const { node, url } = await setup({ routing: { ...QUIET_ROUTING, attemptTimeoutMs: 200, deadlineMs: 1000 } });
    const faults = [
      { mode: 'status500', status: 500 },
      { mode: 'html', status: 503 },
      { mode: 'empty', status: 503 },
      { mode: 'status429', status: 503 },
      { mode: 'hang', status: 503 },
    ] as const;
    let calls = 0;
    for (const [i, f] of faults.entries()) {
      const version = 900 + i;
      node.faults.set({ mode: f.mode, routes: ['raw_item'], count: 1 });
      const failed = await rawItem(url, hex(PRESENT), { version });
      expectStatus(failed, f.status, f.mode);
      expect(errorBodyOf(failed).error_code, f.mode).toBe('internal_error');
      expect(node.counters.byRoute.raw_item, f.mode).toBe(++calls);
      const next = await rawItem(url, hex(PRESENT), { version });
      expectStatus(next, 200, `${f.mode}, then`);
      expect(cacheOf(next), `${f.mode}, then`).toBe('MISS');
      expect(next.body.equals(itemAt(PRESENT, BigInt(version))), f.mode).toBe(true);
      expect(node.counters.byRoute.raw_item, `${f.mode}, then`).toBe(++calls);
    }
  });

  it('an answer from a node that now reports another chain id is not cached', async () => {
    const node = await sim();
    const probes = new ManualProbes();
    const { url } = await proxy([node], { chainId: 4, routing: QUIET_ROUTING }, { probeSchedule: probes });
    node.ledger.setChainId(5);
    const r = await rawItem(url, hex(PRESENT), { version: 990 });
    expect(r.status, 'refused: the only node is on another chain').toBe(503);
    expect(node.counters.byRoute.raw_item).toBe(1);
    node.ledger.setChainId(4);
    await probes.round();
    const again = await rawItem(url, hex(PRESENT), { version: 990 });
    expectStatus(again, 200);
    expect(cacheOf(again)).toBe('MISS');
    expect(again.headers['x-node-chain-id']).toBe('4');
    expect(node.counters.byRoute.raw_item).toBe(2);
  });
});

describe('canonical keys', () => {
  it('raw_item: handle forms, key hex case and prefix, JSON whitespace, leading zeros of the version → one node call', async () => {
    const { node, url } = await setup();
    const keyHex = PRESENT.toString('hex');
    const expected = itemAt(PRESENT, 7n);
    const variants: Array<[string, () => Promise<Reply>]> = [
      ['canonical', () => rawItem(url, '0x' + keyHex, { version: 7 })],
      ['ledger_version=007', () => rawItem(url, '0x' + keyHex, { version: '007' })],
      ['handle upper case', () => rawItem(url, '0x' + keyHex, { version: 7, handle: HANDLE.toUpperCase().replace('0X', '0x') })],
      ['handle without 0x', () => rawItem(url, '0x' + keyHex, { version: 7, handle: HANDLE.slice(2) })],
      ['key upper case', () => rawItem(url, '0x' + keyHex.toUpperCase(), { version: 7 })],
      ['key without 0x', () => rawItem(url, keyHex, { version: 7 })],
      [
        'JSON whitespace',
        () =>
          call(url, `/v1/tables/${HANDLE}/raw_item?ledger_version=7`, {
            headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
            body: `\n{ "key" :\t"0x${keyHex}" }\n`,
          }),
      ],
      ['accept with parameters', () => rawItem(url, '0x' + keyHex, { version: 7, accept: 'application/x-bcs; q=1, application/json' })],
    ];
    for (const [label, send] of variants) {
      const r = await send();
      expectStatus(r, 200, label);
      expect(r.body.equals(expected), label).toBe(true);
      expect(cacheOf(r), label).toBe(label === 'canonical' ? 'MISS' : 'HIT memory');
    }
    expect(node.counters.byRoute.raw_item).toBe(1);
  });

  it('raw_item: 0x1 and its 64-digit form are one table', async () => {
    const { node, url } = await setup();
    const short = '0x1';
    const long = '0x' + '1'.padStart(64, '0');
    const key = PRESENT_KEYS.find((k) => itemOrNull(k, long) !== null)!;
    const first = await rawItem(url, hex(key), { version: 12, handle: short });
    expectStatus(first, 200);
    expect(first.body.equals(itemAt(key, 12n, long))).toBe(true);
    for (const handle of [long, '0x01', '0x' + '0'.repeat(63) + '1', '0'.repeat(63) + '1']) {
      const r = await rawItem(url, hex(key), { version: 12, handle });
      expectHitMemory(r, handle);
      expect(r.body.equals(first.body), handle).toBe(true);
    }
    expect(node.counters.byRoute.raw_item).toBe(1);
  });

  it('view JSON: function address form, member order, whitespace, leading zeros of the version → one node call', async () => {
    const { node, url } = await setup();
    const expected = balanceAt(OWNER, 7n);
    const post = (body: string, q = '?ledger_version=7') => call(url, `/v1/view${q}`, { headers: { 'content-type': 'application/json', accept: 'application/json' }, body });
    const variants: Array<[string, () => Promise<Reply>]> = [
      ['canonical', () => viewJson(url, BALANCE, [OWNER], { version: 7 })],
      ['long function address', () => viewJson(url, '0x' + '1'.padStart(64, '0') + '::sim::balance', [OWNER], { version: 7 })],
      ['member order', () => post(JSON.stringify({ arguments: [OWNER], type_arguments: [], function: BALANCE }))],
      ['whitespace', () => post(JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }, null, 2))],
      ['ledger_version=007', () => post(JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }), '?ledger_version=007')],
      [
        'no Accept means JSON',
        () => call(url, '/v1/view?ledger_version=7', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }) }),
      ],
    ];
    for (const [label, send] of variants) {
      const r = await send();
      expectStatus(r, 200, label);
      expect(r.body.equals(expected), `${label}: ${r.body.toString()}`).toBe(true);
      expect(cacheOf(r), label).toBe(label === 'canonical' ? 'MISS' : 'HIT memory');
      expect(r.headers['x-node-gas-used'], label).toBe('7');
    }
    expect(node.counters.byRoute.view).toBe(1);
  });

  it('different arguments, answer formats, versions or keys are separate entries with their own answers', async () => {
    const { node, url } = await setup();
    const cases: Array<[string, () => Promise<Reply>, Buffer]> = [
      ['balance(OWNER)@7 json', () => viewJson(url, BALANCE, [OWNER], { version: 7 }), balanceAt(OWNER, 7n)],
      ['balance(OWNER2)@7 json', () => viewJson(url, BALANCE, [OWNER2], { version: 7 }), balanceAt(OWNER2, 7n)],
      ['balance(OWNER)@7 bcs', () => viewJson(url, BALANCE, [OWNER], { version: 7, accept: 'application/x-bcs' }), balanceAt(OWNER, 7n, 'bcs')],
      ['balance(OWNER)@17 json', () => viewJson(url, BALANCE, [OWNER], { version: 17 }), balanceAt(OWNER, 17n)],
      ['add(1,2)@7', () => viewJson(url, '0x1::sim::add', ['1', '2'], { version: 7 }), Buffer.from('["3"]')],
      ['add(1,3)@7', () => viewJson(url, '0x1::sim::add', ['1', '3'], { version: 7 }), Buffer.from('["4"]')],
      ['add(1,2)@7 bcs request', () => viewBcsRequest(url, 'add', [u64le(1n), u64le(2n)], { version: 7 }), Buffer.from('["3"]')],
      ['add(1,2)@7 bcs request, bcs answer', () => viewBcsRequest(url, 'add', [u64le(1n), u64le(2n)], { version: 7, accept: 'application/x-bcs' }), u128Answer(3n)],
      ['item key1@7', () => rawItem(url, hex(PRESENT_KEYS[1]), { version: 7 }), itemAt(PRESENT_KEYS[1], 7n)],
      ['item key2@7', () => rawItem(url, hex(PRESENT_KEYS[2]), { version: 7 }), itemAt(PRESENT_KEYS[2], 7n)],
    ];
    for (const [label, send, expected] of cases) {
      const before = served(node);
      const r = await send();
      expectStatus(r, 200, label);
      expect(cacheOf(r), label).toBe('MISS');
      expect(r.body.equals(expected), `${label}: ${r.body.toString('hex')}`).toBe(true);
      expect(served(node), `${label}: its own node call`).toBe(before + 1);
    }
    // Each is now a hit with its own answer.
    for (const [label, send, expected] of cases) {
      const r = await send();
      expectHitMemory(r, label);
      expect(r.body.equals(expected), `${label} (hit): ${r.body.toString('hex')}`).toBe(true);
    }
    expect(served(node)).toBe(cases.length);
  });
});

describe('memory bound', () => {
  it('stays within cache.memory.maxBytes after many distinct pinned reads', async () => {
    const maxBytes = 4000;
    const { node, app, url } = await setup({ ...FAST_PROBES, cache: { memory: { maxBytes } } });
    const reads = 80;
    for (let i = 0; i < reads; i++) {
      const key = PRESENT_KEYS[i % PRESENT_KEYS.length];
      const version = 500n + BigInt(i);
      const r = i % 2 === 0 ? await rawItem(url, hex(key), { version }) : await viewJson(url, BALANCE, [OWNER], { version });
      expectStatus(r, 200, `read ${i}`);
      const stats = app.memory.stats();
      expect(stats.bytes, `after read ${i}`).toBeLessThanOrEqual(maxBytes);
    }
    const stats = app.memory.stats();
    expect(stats.entries).toBeGreaterThan(0);
    expect(stats.entries, 'older entries were evicted').toBeLessThan(reads);
    // The newest entry is still served from memory; the oldest one was evicted.
    expectHitMemory(await viewJson(url, BALANCE, [OWNER], { version: 500n + BigInt(reads - 1) }), 'newest');
    const before = served(node);
    const oldest = await rawItem(url, hex(PRESENT_KEYS[0]), { version: 500 });
    expect(cacheOf(oldest)).toBe('MISS');
    expect(oldest.body.equals(itemAt(PRESENT_KEYS[0], 500n))).toBe(true);
    expect(served(node)).toBe(before + 1);
    expect(app.memory.stats().bytes).toBeLessThanOrEqual(maxBytes);
  });
});

function itemOrNull(key: Buffer, handle: string): Buffer | null {
  try {
    return itemAt(key, 0n, handle);
  } catch {
    return null;
  }
}

/** A one-value BCS answer of a u128. */
function u128Answer(n: bigint): Buffer {
  const b = Buffer.alloc(17);
  b[0] = 1;
  b.writeBigUInt64LE(n & 0xffffffffffffffffn, 1);
  b.writeBigUInt64LE(n >> 64n, 9);
  return b;
}
