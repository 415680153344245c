// One memory-tier entry per canonical request (DESIGN "Cache keys and entries"):
// spellings a node reads alike share one node call, and requests that differ
// keep their own entries and answers.
import { describe, expect, it } from 'vitest';
import {
  BALANCE,
  balanceAt,
  cacheOf,
  expectHitMemory,
  expectStatus,
  FAST_PROBES,
  hex,
  itemAt,
  OWNER,
  OWNER2,
  PRESENT,
  PRESENT_KEYS,
  served,
  u64le,
  viewBcsRequest,
} from '../helpers/cache.js';
import { call, HANDLE, rawItem, simBehindProxy, viewJson, type Reply } from '../helpers/proxy.js';

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

describe('canonical keys', () => {
  it("raw_item: handle forms, key hex case and prefix, JSON whitespace, a leading '+' and zeros of the version → one node call", async () => {
    const { node, url } = await simBehindProxy(FAST_PROBES);
    const keyHex = PRESENT.toString('hex');
    const expected = itemAt(PRESENT, 7n);
    const variants: Array<[string, () => Promise<Reply>]> = [
      ['canonical', () => rawItem(url, '0x' + keyHex, { version: 7 })],
      ['ledger_version=007', () => rawItem(url, '0x' + keyHex, { version: '007' })],
      ['ledger_version=%2B7', () => rawItem(url, '0x' + keyHex, { version: '%2B7' })],
      ['ledger_version=%2B007', () => rawItem(url, '0x' + keyHex, { version: '%2B007' })],
      [
        'handle upper case',
        () => rawItem(url, '0x' + keyHex, { version: 7, handle: HANDLE.toUpperCase().replace('0X', '0x') }),
      ],
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
      [
        'accept with parameters',
        () => rawItem(url, '0x' + keyHex, { version: 7, accept: 'application/x-bcs; q=1, application/json' }),
      ],
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
    const { node, url } = await simBehindProxy(FAST_PROBES);
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

  it("view JSON: function address form, member order, whitespace, a leading '+' and zeros of the version → one node call", async () => {
    const { node, url } = await simBehindProxy(FAST_PROBES);
    const expected = balanceAt(OWNER, 7n);
    const post = (body: string, q = '?ledger_version=7') =>
      call(url, `/v1/view${q}`, { headers: { 'content-type': 'application/json', accept: 'application/json' }, body });
    const variants: Array<[string, () => Promise<Reply>]> = [
      ['canonical', () => viewJson(url, BALANCE, [OWNER], { version: 7 })],
      [
        'long function address',
        () => viewJson(url, '0x' + '1'.padStart(64, '0') + '::sim::balance', [OWNER], { version: 7 }),
      ],
      ['member order', () => post(JSON.stringify({ arguments: [OWNER], type_arguments: [], function: BALANCE }))],
      [
        'whitespace',
        () => post(JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }, null, 2)),
      ],
      [
        'ledger_version=007',
        () =>
          post(JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }), '?ledger_version=007'),
      ],
      [
        'ledger_version=%2B7',
        () =>
          post(JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }), '?ledger_version=%2B7'),
      ],
      [
        'no Accept means JSON',
        () =>
          call(url, '/v1/view?ledger_version=7', {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }),
          }),
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
    const { node, url } = await simBehindProxy(FAST_PROBES);
    const cases: Array<[string, () => Promise<Reply>, Buffer]> = [
      ['balance(OWNER)@7 json', () => viewJson(url, BALANCE, [OWNER], { version: 7 }), balanceAt(OWNER, 7n)],
      ['balance(OWNER2)@7 json', () => viewJson(url, BALANCE, [OWNER2], { version: 7 }), balanceAt(OWNER2, 7n)],
      [
        'balance(OWNER)@7 bcs',
        () => viewJson(url, BALANCE, [OWNER], { version: 7, accept: 'application/x-bcs' }),
        balanceAt(OWNER, 7n, 'bcs'),
      ],
      ['balance(OWNER)@17 json', () => viewJson(url, BALANCE, [OWNER], { version: 17 }), balanceAt(OWNER, 17n)],
      ['add(1,2)@7', () => viewJson(url, '0x1::sim::add', ['1', '2'], { version: 7 }), Buffer.from('["3"]')],
      ['add(1,3)@7', () => viewJson(url, '0x1::sim::add', ['1', '3'], { version: 7 }), Buffer.from('["4"]')],
      [
        'add(1,2)@7 bcs request',
        () => viewBcsRequest(url, 'add', [u64le(1n), u64le(2n)], { version: 7 }),
        Buffer.from('["3"]'),
      ],
      [
        'add(1,2)@7 bcs request, bcs answer',
        () => viewBcsRequest(url, 'add', [u64le(1n), u64le(2n)], { version: 7, accept: 'application/x-bcs' }),
        u128Answer(3n),
      ],
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
