// One cache entry per canonical request, seen from the client and counted on the
// sim: repeats are HITs, latest reads are forwarded (and stored at their version),
// spellings of one request share an entry, and concurrent identical reads share
// one node call.
import { describe, expect, it } from 'vitest';
import { simBalance, simTableItem, SIM_MODULE_ADDRESS } from '../../src/sim/index.js';
import { hex, OWNER, PRESENT, presentKeyOf } from '../helpers/cache.js';
import { call, HANDLE, proxy, QUIET, rawItem, type Reply, sim, viewJson } from '../helpers/proxy.js';

const ONE = '0x' + '1'.padStart(64, '0');
const PRESENT_AT_ONE = presentKeyOf(ONE);

describe('one cache entry per canonical request', () => {
  it('a pinned repeat is a memory HIT that does not reach the node', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const first = await rawItem(url, hex(PRESENT), { version: 980 });
    expect(first.status).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    for (let i = 0; i < 3; i++) {
      const again = await rawItem(url, hex(PRESENT), { version: 980 });
      expect(again.headers['x-cache']).toBe('HIT');
      expect(again.headers['x-cache-tier']).toBe('memory');
      expect(again.body).toEqual(first.body);
      expect(again.headers['content-type']).toBe('application/x-bcs');
    }
    expect(node.counters.byRoute.raw_item).toBe(1);
    // Another version, another entry.
    const other = await rawItem(url, hex(PRESENT), { version: 970 });
    expect(other.headers['x-cache']).toBe('MISS');
    expect(other.body).toEqual(simTableItem(HANDLE, PRESENT, 970n));
    expect(node.counters.byRoute.raw_item).toBe(2);
    // A BCS and a JSON answer of one view are two entries.
    const asJson = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 980 });
    const asBcs = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 980, accept: 'application/x-bcs' });
    expect(asJson.json()).toEqual(['3']);
    expect(asBcs.headers['content-type']).toBe('application/x-bcs');
    expect(asBcs.headers['x-cache']).toBe('MISS');
    expect(node.counters.byRoute.view).toBe(2);
  });

  it('latest reads are always forwarded, and stored as the pinned answer at their version', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const a = await rawItem(url, hex(PRESENT));
    const b = await rawItem(url, hex(PRESENT));
    expect([a.headers['x-cache'], b.headers['x-cache']]).toEqual(['MISS', 'MISS']);
    expect(node.counters.byRoute.raw_item).toBe(2);
    const pinned = await rawItem(url, hex(PRESENT), { version: 1000 });
    expect(pinned.headers['x-cache']).toBe('HIT');
    expect(pinned.body).toEqual(a.body);
    expect(node.counters.byRoute.raw_item).toBe(2);
  });

  it('handle forms (0x1, 64 digits, no 0x, upper case) and key hex forms share one entry', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const long = '0'.repeat(63) + '1';
    const variants: Array<[string, string]> = [
      ['0x1', hex(PRESENT_AT_ONE)],
      ['0x' + long, hex(PRESENT_AT_ONE)],
      [long, hex(PRESENT_AT_ONE)],
      ['0x01', PRESENT_AT_ONE.toString('hex')],
      ['0x0001', '0x' + PRESENT_AT_ONE.toString('hex').toUpperCase()],
    ];
    const replies: Reply[] = [];
    for (const [handle, key] of variants) replies.push(await rawItem(url, key, { handle, version: 960 }));
    expect(replies.map((r) => r.headers['x-cache'])).toEqual(['MISS', 'HIT', 'HIT', 'HIT', 'HIT']);
    for (const r of replies) expect(r.body).toEqual(simTableItem(ONE, PRESENT_AT_ONE, 960n));
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(node.counters.requests.filter((r) => r.method === 'POST').at(-1)?.url).toBe(
      `/v1/tables/${ONE}/raw_item?ledger_version=960`,
    );

    const upper = await rawItem(url, hex(PRESENT), { handle: '0x' + 'AB'.repeat(32), version: 960 });
    const lower = await rawItem(url, hex(PRESENT), { handle: 'ab'.repeat(32), version: '0960' });
    expect([upper.headers['x-cache'], lower.headers['x-cache']]).toEqual(['MISS', 'HIT']);
    expect(node.counters.byRoute.raw_item).toBe(2);
  });

  it('JSON whitespace, member order and address forms of a view share one entry', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    const bodies = [
      JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [OWNER] }),
      JSON.stringify({ arguments: [OWNER], type_arguments: [], function: '0x1::sim::balance' }),
      `{\n  "type_arguments" : [ ],\n\t"function":"${SIM_MODULE_ADDRESS}::sim::balance",\r\n  "arguments": [ "${OWNER}" ]\n}\n`,
      JSON.stringify({ function: '0x01::sim::balance', arguments: [OWNER], type_arguments: [] }),
    ];
    const replies: Reply[] = [];
    for (const body of bodies) {
      replies.push(
        await call(url, '/v1/view?ledger_version=950', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }),
      );
    }
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(replies.map((r) => r.headers['x-cache'])).toEqual(['MISS', 'HIT', 'HIT', 'HIT']);
    for (const r of replies) {
      expect(r.json()).toEqual([String(simBalance(OWNER, 950n))]);
      expect(r.headers['x-node-gas-used']).toBe('7');
    }
    expect(node.counters.byRoute.view).toBe(1);
    // Different arguments are a different entry.
    const other = await viewJson(url, '0x1::sim::balance', ['0x43'], { version: 950 });
    expect(other.headers['x-cache']).toBe('MISS');
    expect(node.counters.byRoute.view).toBe(2);
  });

  it('concurrent identical latest reads share one node call and are not served from the cache', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    node.faults.set({ mode: 'slow', delayMs: 150, routes: ['raw_item'] });
    const replies = await Promise.all(Array.from({ length: 4 }, () => rawItem(url, hex(PRESENT))));
    node.faults.clear();
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(replies.map((r) => r.headers['x-cache']).sort()).toEqual(['COALESCED', 'COALESCED', 'COALESCED', 'MISS']);
    for (const r of replies) {
      expect(r.body).toEqual(simTableItem(HANDLE, PRESENT, 1000n));
      expect(r.headers['x-node-ledger-version']).toBe('1000');
    }
    // The next latest read is forwarded again: the node has moved on.
    node.ledger.advance(10);
    const next = await rawItem(url, hex(PRESENT));
    expect(next.headers['x-cache']).toBe('MISS');
    expect(next.headers['x-node-ledger-version']).toBe('1010');
    expect(next.body).toEqual(simTableItem(HANDLE, PRESENT, 1010n));
    expect(node.counters.byRoute.raw_item).toBe(2);
  });

  it('concurrent identical pinned reads make one node call (MISS + COALESCED)', async () => {
    const node = await sim();
    const { url } = await proxy([node], QUIET);
    node.faults.set({ mode: 'slow', delayMs: 150, routes: ['view'] });
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => viewJson(url, '0x1::sim::pair', ['9'], { version: 940 })),
    );
    node.faults.clear();
    expect(node.counters.byRoute.view).toBe(1);
    const statuses = replies.map((r) => r.headers['x-cache']).sort();
    expect(statuses).toEqual(['COALESCED', 'COALESCED', 'COALESCED', 'COALESCED', 'MISS']);
    for (const r of replies) expect(r.json()).toEqual(['4', false]);
  });
});
