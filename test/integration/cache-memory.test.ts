// The memory tier through the whole proxy (api.md §7, DESIGN "Cache keys and entries"):
// what is served from cache and what reaches the node, counted on the sim: repeats,
// single-flight, which answers are cached, and the memory bound.
import { describe, expect, it } from 'vitest';
import { VM_ABORTED, VM_OUT_OF_GAS, type SimRoute } from '../../src/sim/index.js';
import {
  ABSENT,
  BALANCE,
  balanceAt,
  cacheOf,
  errorBodyOf,
  expectHitMemory,
  expectStatus,
  FAST_PROBES,
  hex,
  itemAt,
  OWNER,
  PRESENT,
  PRESENT_KEYS,
  served,
  simHeaders,
  tally,
  u64le,
  viewBcsRequest,
  warmConnections,
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

/**
 * How long the sim holds a read in the single-flight tests: every request of a
 * burst must reach the proxy before the one node call returns, also on a busy machine.
 */
const SLOW_MS = 300;

describe('repeat of a pinned read', () => {
  it('is a memory HIT that does not reach the node, byte-identical, with the stored gas used', async () => {
    const { node, url } = await simBehindProxy(FAST_PROBES);
    const v = 990n;
    const cases: Array<{
      label: string;
      route: SimRoute;
      send: () => Promise<Reply>;
      body: Buffer;
      type: string;
      gas?: string;
    }> = [
      {
        label: 'raw_item',
        route: 'raw_item',
        send: () => rawItem(url, hex(PRESENT), { version: v }),
        body: itemAt(PRESENT, v),
        type: 'application/x-bcs',
      },
      {
        label: 'view json',
        route: 'view',
        send: () => viewJson(url, BALANCE, [OWNER], { version: v }),
        body: balanceAt(OWNER, v),
        type: 'application/json',
        gas: '7',
      },
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
      const { node, url } = await simBehindProxy(FAST_PROBES);
      await warmConnections(url, 50);
      node.counters.reset();
      node.faults.set({ mode: 'slow', delayMs: SLOW_MS, routes: [route] });
      const send =
        route === 'raw_item'
          ? () => rawItem(url, hex(PRESENT), { version: 995 })
          : () => viewJson(url, BALANCE, [OWNER], { version: 995 });
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
    const { node, url } = await simBehindProxy(FAST_PROBES);
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

describe('what is cached', () => {
  it('deterministic errors are cached: 404 table_item_not_found and a view Move abort (4016)', async () => {
    const { node, url } = await simBehindProxy(FAST_PROBES);
    const cases: Array<{
      label: string;
      route: SimRoute;
      send: () => Promise<Reply>;
      status: number;
      code: string;
      vm: number | null;
    }> = [
      {
        label: 'absent item',
        route: 'raw_item',
        send: () => rawItem(url, hex(ABSENT), { version: 990 }),
        status: 404,
        code: 'table_item_not_found',
        vm: null,
      },
      {
        label: 'always_abort',
        route: 'view',
        send: () => viewJson(url, '0x1::sim::always_abort', [], { version: 990 }),
        status: 400,
        code: 'invalid_input',
        vm: VM_ABORTED,
      },
      {
        label: 'unknown function',
        route: 'view',
        send: () => viewJson(url, '0x1::sim::nope', [], { version: 990 }),
        status: 400,
        code: 'invalid_input',
        vm: null,
      },
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
    const { node, url } = await simBehindProxy(FAST_PROBES);
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
    const { node, url } = await simBehindProxy({
      routing: { ...QUIET_ROUTING, attemptTimeoutMs: 200, deadlineMs: 1000 },
    });
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

describe('memory bound', () => {
  it('stays within cache.memory.maxBytes after many distinct pinned reads', async () => {
    const maxBytes = 4000;
    const { node, app, url } = await simBehindProxy({ ...FAST_PROBES, cache: { memory: { maxBytes } } });
    const reads = 80;
    for (let i = 0; i < reads; i++) {
      const key = PRESENT_KEYS[i % PRESENT_KEYS.length];
      const version = 500n + BigInt(i);
      const r =
        i % 2 === 0 ? await rawItem(url, hex(key), { version }) : await viewJson(url, BALANCE, [OWNER], { version });
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
