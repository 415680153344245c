// The Redis tier through the whole proxy, on this file's own redis-server (never
// the shared one on 6379): sharing between instances, the fill lock and what lands
// in Redis (api.md §7, DESIGN "Cache keys and entries").
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { decodeAnswer, FORMAT_V4 } from '../../src/cache/redis/codec.js';
import {
  BALANCE,
  balanceAt,
  cacheOf,
  expectStatus,
  hex,
  itemAt,
  OWNER,
  PRESENT,
  redisEntryKeys,
  served,
  tally,
  warmConnections,
} from '../helpers/cache.js';
import { MAX_TTL_SECONDS, PREFIX, redisProxy } from '../helpers/redis-cache.js';
import { until } from '../helpers/until.js';
import { rawItem, sim, viewJson, type Reply } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';

const server = useRedisServer({ flushEach: true });

/** Waits (bounded) until `count` answer entries are in Redis: a write may finish after its reply. */
async function entriesInRedis(client: Redis, count: number): Promise<string[]> {
  let keys: string[] = [];
  await until(
    async () => (keys = await redisEntryKeys(client, PREFIX)).length >= count,
    2000,
    `${count} entries in Redis`,
  );
  expect(keys).toHaveLength(count);
  return keys;
}

describe('sharing between instances', () => {
  it('a pinned read on proxy A is a redis HIT on proxy B without a node call; a repeat on B is a memory HIT', async () => {
    const node = await sim();
    const a = await redisProxy(server.url, node);
    const b = await redisProxy(server.url, node);
    const reads: Array<[string, (url: string) => Promise<Reply>, Buffer]> = [
      ['raw_item', (url) => rawItem(url, hex(PRESENT), { version: 990 }), itemAt(PRESENT, 990n)],
      ['view', (url) => viewJson(url, BALANCE, [OWNER], { version: 990 }), balanceAt(OWNER, 990n)],
      [
        'view bcs',
        (url) => viewJson(url, BALANCE, [OWNER], { version: 990, accept: 'application/x-bcs' }),
        balanceAt(OWNER, 990n, 'bcs'),
      ],
    ];
    const client = server.client();
    for (const [n, [label, read, expected]] of reads.entries()) {
      const onA = await read(a.url);
      expectStatus(onA, 200, label);
      expect(cacheOf(onA), label).toBe('MISS');
      expect(onA.body.equals(expected), label).toBe(true);
      await entriesInRedis(client, n + 1);
      const calls = served(node);

      const onB = await read(b.url);
      expectStatus(onB, 200, label);
      expect(cacheOf(onB), `${label} on B`).toBe('HIT redis');
      expect(onB.body.equals(onA.body), label).toBe(true);
      expect(onB.headers['content-type'], label).toBe(onA.headers['content-type']);
      expect(onB.headers['x-node-gas-used'], `${label}: stored gas used`).toBe(onA.headers['x-node-gas-used']);
      expect(onB.headers['x-node-ledger-version'], label).toBe('1000');

      const again = await read(b.url);
      expect(cacheOf(again), `${label} again on B: promoted to memory`).toBe('HIT memory');
      expect(again.body.equals(onA.body), label).toBe(true);
      expect(served(node), `${label}: no node call for B`).toBe(calls);
    }
  });

  it('a latest read on A is stored in Redis at its header version: the pinned read on B is a redis HIT', async () => {
    const node = await sim();
    const a = await redisProxy(server.url, node);
    const b = await redisProxy(server.url, node);
    const latest = await rawItem(a.url, hex(PRESENT));
    expectStatus(latest, 200);
    const v = latest.headers['x-node-ledger-version'];
    await entriesInRedis(server.client(), 1);
    const calls = served(node);
    const pinned = await rawItem(b.url, hex(PRESENT), { version: v });
    expect(cacheOf(pinned)).toBe('HIT redis');
    expect(pinned.body.equals(latest.body)).toBe(true);
    expect(served(node)).toBe(calls);
  });

  it('two instances, 20 concurrent identical misses on each → one node call between them (fill lock)', async () => {
    const node = await sim();
    const a = await redisProxy(server.url, node);
    const b = await redisProxy(server.url, node);
    await Promise.all([warmConnections(a.url, 20), warmConnections(b.url, 20)]);
    node.faults.set({ mode: 'slow', delayMs: 300, routes: ['raw_item', 'view'] });
    for (const [label, read, expected] of [
      ['raw_item', (url: string) => rawItem(url, hex(PRESENT), { version: 995 }), itemAt(PRESENT, 995n)],
      ['view', (url: string) => viewJson(url, BALANCE, [OWNER], { version: 995 }), balanceAt(OWNER, 995n)],
    ] as const) {
      const before = served(node);
      const replies = await Promise.all([
        ...Array.from({ length: 20 }, () => read(a.url)),
        ...Array.from({ length: 20 }, () => read(b.url)),
      ]);
      expect(served(node) - before, `${label}: node calls between both instances`).toBe(1);
      for (const r of replies) {
        expectStatus(r, 200, label);
        expect(r.body.equals(expected), label).toBe(true);
      }
      const counts = tally(replies);
      expect(counts.MISS, `${label}: ${JSON.stringify(counts)}`).toBe(1);
      // The other instance's leader found the answer in Redis; everyone else joined a flight.
      expect(
        (counts['HIT redis'] ?? 0) + (counts['COALESCED redis'] ?? 0) + (counts.COALESCED ?? 0),
        JSON.stringify(counts),
      ).toBe(39);
      expect(counts['HIT redis'], `${label}: ${JSON.stringify(counts)}`).toBe(1);
    }
  });
});

describe("waiting for another instance's fill (api.md §8)", () => {
  /** Commands the server ran since the last CONFIG RESETSTAT, by name, without the test's own. */
  async function commandCalls(client: Redis): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const m of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      if (!/^(info|config)\b/.test(m[1])) out[m[1]] = Number(m[2]);
    }
    return out;
  }

  it('a node that takes 1.5 s to answer 500: the waiter relays that answer as it arrives, with no node call of its own', async () => {
    const node = await sim();
    const a = await redisProxy(server.url, node);
    const b = await redisProxy(server.url, node);
    await Promise.all([warmConnections(a.url, 1), warmConnections(b.url, 1)]);
    const client = server.client();
    // Two slow failures: a waiter that called the node itself would get the second.
    node.faults.set({ mode: 'status500', delayMs: 1500, routes: ['raw_item'], count: 2 });
    const calls = served(node);

    const started = performance.now();
    const onA = rawItem(a.url, hex(PRESENT), { version: 995 }).then((reply) => ({
      reply,
      ms: performance.now() - started,
    }));
    await until(async () => (await client.keys(`${PREFIX}lock:*`)).length === 1, 1000, 'A to hold the fill lock');
    await client.config('RESETSTAT');
    const onB = await rawItem(b.url, hex(PRESENT), { version: 995 }).then((reply) => ({
      reply,
      ms: performance.now() - started,
    }));
    const filler = await onA;

    expect(filler.reply.status).toBeGreaterThanOrEqual(500);
    expect(cacheOf(filler.reply)).toBe('MISS');
    expect(onB.reply.status).toBe(filler.reply.status);
    expect(onB.reply.body.equals(filler.reply.body), "the filler's answer, relayed").toBe(true);
    expect(cacheOf(onB.reply)).toBe('COALESCED');
    expect(served(node) - calls, 'node calls between both instances').toBe(1);
    expect(filler.ms).toBeGreaterThanOrEqual(1450);
    expect(
      Math.round(onB.ms),
      "the waiter answers within the filler's node call + 100 ms (and slack)",
    ).toBeLessThanOrEqual(filler.ms + 150);

    // B: MGET (the entry), SET NX, SUBSCRIBE, GET outcome, UNSUBSCRIBE; A: SET outcome,
    // PUBLISH, unlock (EVAL, which Redis counts with the GET and DEL it runs).
    const commands = await commandCalls(client);
    const total = Object.values(commands).reduce((x, y) => x + y, 0);
    expect(total, JSON.stringify(commands)).toBeLessThanOrEqual(12);
    expect((commands.get ?? 0) + (commands.mget ?? 0), JSON.stringify(commands)).toBeLessThanOrEqual(3);
  });

  it('a cacheable fill: the waiter gets the answer from the outcome, stores it in memory, no node call of its own', async () => {
    const node = await sim();
    const a = await redisProxy(server.url, node);
    const b = await redisProxy(server.url, node);
    await Promise.all([warmConnections(a.url, 1), warmConnections(b.url, 1)]);
    const client = server.client();
    node.faults.set({ mode: 'slow', delayMs: 500, routes: ['raw_item'], count: 2 });
    const calls = served(node);
    const started = performance.now();
    const onA = rawItem(a.url, hex(PRESENT), { version: 995 }).then((reply) => ({
      reply,
      ms: performance.now() - started,
    }));
    await until(async () => (await client.keys(`${PREFIX}lock:*`)).length === 1, 1000, 'A to hold the fill lock');
    const onB = await rawItem(b.url, hex(PRESENT), { version: 995 }).then((reply) => ({
      reply,
      ms: performance.now() - started,
    }));
    const filler = await onA;
    expectStatus(onB.reply, 200);
    expect(onB.reply.body.equals(itemAt(PRESENT, 995n))).toBe(true);
    expect(cacheOf(onB.reply)).toBe('HIT redis');
    expect(Math.round(onB.ms)).toBeLessThanOrEqual(filler.ms + 150);
    expect(cacheOf(await rawItem(b.url, hex(PRESENT), { version: 995 }))).toBe('HIT memory');
    expect(served(node) - calls).toBe(1);
  });
});

describe('entries in Redis', () => {
  it('are under the key prefix, binary (not JSON/base64), with a TTL in (0, maxTtlSeconds]', async () => {
    const node = await sim();
    const { url } = await redisProxy(server.url, node);
    const item = await rawItem(url, hex(PRESENT), { version: 990 });
    const view = await viewJson(url, BALANCE, [OWNER], { version: 991 });
    expectStatus(item, 200);
    expectStatus(view, 200);

    const client = server.client();
    const keys = await entriesInRedis(client, 2);
    const all = await client.keys('*');
    for (const k of all) expect(k.startsWith(PREFIX), `every key is under the prefix: ${k}`).toBe(true);

    const found: Array<{ version: bigint; body: Buffer; gas?: string; type: string }> = [];
    for (const key of keys) {
      expect(key, 'prefix + a hash, no client input').toMatch(/^test:[0-9a-f]{64}$/);
      const raw = (await client.getBuffer(key))!;
      expect(raw[0], 'format byte').toBe(FORMAT_V4);
      expect(() => JSON.parse(raw.toString('utf8')), 'not JSON').toThrow();
      const answer = decodeAnswer(raw);
      expect(answer, 'decodes').toBeDefined();
      expect(answer!.status).toBe(200);
      // The body is stored as its own bytes before the 4-byte checksum, not base64.
      expect(raw.subarray(raw.length - 4 - answer!.body.length, raw.length - 4).equals(answer!.body)).toBe(true);
      // A few header bytes (status, version, purge mark, gas, content type) and the body: no text encoding around it.
      expect(raw.length, 'entry size').toBeLessThanOrEqual(answer!.body.length + 80);
      found.push({ version: answer!.version, body: answer!.body, gas: answer!.gasUsed, type: answer!.contentType });

      const ttl = await client.ttl(key);
      expect(ttl, `TTL of ${key}`).toBeGreaterThan(0);
      expect(ttl, `TTL of ${key}`).toBeLessThanOrEqual(MAX_TTL_SECONDS);
    }
    found.sort((x, y) => Number(x.version - y.version));
    expect(found.map((f) => f.version)).toEqual([990n, 991n]);
    expect(found[0].body.equals(item.body)).toBe(true);
    expect(found[1].body.equals(view.body)).toBe(true);
    expect(found.map((f) => [f.type, f.gas])).toEqual([
      ['application/x-bcs', undefined],
      ['application/json', '7'],
    ]);
  });

  it('expire near the time their version will be pruned', async () => {
    // Sim chain time: 4 versions per second. Window 400: at latest 1040 the oldest is 640.
    const node = await sim({ pruneWindow: 400n });
    const { app, url } = await redisProxy(server.url, node);
    node.ledger.advance(40);
    await until(() => app.watermark.current()?.ledgerVersion === 1040n, 5000, 'the watermark to reach 1040');
    const client = server.client();
    for (const [version, seconds] of [
      [1000n, 90], // (1000 - 640) / 4
      [700n, 15], // (700 - 640) / 4
    ] as const) {
      const before = new Set(await redisEntryKeys(client, PREFIX));
      expectStatus(await rawItem(url, hex(PRESENT), { version }), 200);
      const added = (await entriesInRedis(client, before.size + 1)).filter((k) => !before.has(k));
      expect(added, `one entry for ${version}`).toHaveLength(1);
      const ttl = await client.ttl(added[0]);
      expect(ttl, `TTL of the entry at ${version}`).toBeLessThanOrEqual(seconds);
      expect(ttl, `TTL of the entry at ${version}`).toBeGreaterThanOrEqual(seconds - 2);
    }
  });
});
