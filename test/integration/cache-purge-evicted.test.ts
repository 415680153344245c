// A purge by family and version range on a Redis that evicts (maxmemory with
// allkeys-lru, as docs/operations/deploy.md recommends): Redis evicts the index set that found
// the family's entries, the entries stay, and the purge still reaches them, on
// the proxy that purged and on another one sharing that Redis. Real proxies in
// front of the sim, on this file's own redis-server.
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { decodeAnswer } from '../../src/cache/redis/codec.js';
import { BALANCE, cacheOf, expectStatus, OWNER, redisEntryKeys, served } from '../helpers/cache.js';
import { freePort } from '../helpers/free-port.js';
import { call, type ProxyHandle, proxy, type Reply, sim, viewJson } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import type { SimNode } from '../../src/sim/index.js';
import { until } from '../helpers/until.js';

const PREFIX = 'evicted:';
/** Idle seconds given to what Redis should evict: the index set first, then the filler, never the entries just read. */
const COLDEST = 1_000_000;
const COLD = 1000;

const server = useRedisServer({ flushEach: true });

async function purgeable(node: SimNode): Promise<ProxyHandle & { admin: string }> {
  const cache = {
    memory: { maxBytes: 1_000_000 },
    redis: { url: server.url, keyPrefix: PREFIX, commandTimeoutMs: 500 },
  };
  const p = await proxy([node], {
    admin: { host: '127.0.0.1', port: await freePort() },
    routing: { probeIntervalMs: 50 },
    cache,
  });
  return { ...p, admin: p.app.adminUrl()! };
}

const view = (url: string, version: number): Promise<Reply> => viewJson(url, BALANCE, [OWNER], { version });

/** Reads view@version and checks how it was served, and that it reached the node exactly when it says MISS. */
async function expectServed(node: SimNode, url: string, version: number, cache: string, label: string): Promise<void> {
  const before = served(node);
  const reply = await view(url, version);
  expectStatus(reply, 200, label);
  expect(cacheOf(reply), label).toBe(cache);
  expect(served(node) - before, `${label}: node calls`).toBe(cache === 'MISS' ? 1 : 0);
}

/** The Redis keys (prefix included) of the entries in Redis, by the version each answers. */
async function entriesByVersion(client: Redis): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const key of await redisEntryKeys(client, PREFIX))
    out.set(Number(decodeAnswer((await client.getBuffer(key))!)!.version), key);
  return out;
}

/** What `p`'s Redis store answers for a Redis key (prefix included): read through it, so nothing is written back. */
const storeHas = async (p: ProxyHandle, key: string): Promise<boolean> =>
  (await p.app.redis!.get(key.slice(PREFIX.length))) !== undefined;

function purge(admin: string, body: unknown): Promise<Reply> {
  return call(admin, '/cache/purge', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('a range purge on a Redis that evicted its index (maxmemory, allkeys-lru)', () => {
  it('reaches the entries the evicted index set held, on both proxies, and no others', async () => {
    const node = await sim();
    const a = await purgeable(node);
    const b = await purgeable(node);
    for (const v of [900, 950, 990]) await expectServed(node, a.url, v, 'MISS', `view@${v} on A`);
    const client = server.client();
    await until(async () => (await redisEntryKeys(client, PREFIX)).length === 3, 2000, 'the three entries in Redis');
    const entries = await entriesByVersion(client);
    const [indexSet, ...others] = await client.keys(`${PREFIX}purge:index:*`);
    expect(others, 'one index set: view, this hour').toEqual([]);

    // Redis evicts under its own policy: the index set is made the coldest key, a
    // filler colder than the entries, and the filler grows until Redis evicts the set.
    await client.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await client.restore(
      indexSet,
      await client.pttl(indexSet),
      (await client.dumpBuffer(indexSet))!,
      'REPLACE',
      'IDLETIME',
      COLDEST,
    );
    const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
    await client.config('SET', 'maxmemory', String(used + 512 * 1024));
    await client.set(`${PREFIX}filler:template`, 'x'.repeat(16 * 1024));
    const filler = (await client.dumpBuffer(`${PREFIX}filler:template`))!;
    await client.del(`${PREFIX}filler:template`);
    let fillers = 0;
    await until(
      async () => {
        for (let i = 0; i < 16; i++) await client.restore(`${PREFIX}filler:${fillers++}`, 0, filler, 'IDLETIME', COLD);
        return (await client.exists(indexSet)) === 0;
      },
      10_000,
      'Redis evicted the index set',
    );
    // Enough evicted: nothing else is, from here on.
    await client.config('SET', 'maxmemory', '0');
    expect(Number(/evicted_keys:(\d+)/.exec(await client.info('stats'))![1]), 'evicted by maxmemory').toBeGreaterThan(
      0,
    );
    expect(await client.exists(...entries.values()), 'the entries are still there').toBe(3);

    const reply = await purge(a.admin, { family: 'view', fromVersion: '920', toVersion: '960' });
    expectStatus(reply, 200, 'purge');
    // The index had nothing left to delete: the purge's record keeps the entry from being read.
    expect(reply.json()).toEqual({
      purged: {
        scope: 'family',
        family: 'view',
        fromVersion: '920',
        toVersion: '960',
        memoryEntries: 1,
        redis: 'purged',
        redisEntries: 0,
      },
    });
    expect(await client.exists(...entries.values()), 'nothing deleted').toBe(3);
    expect(await storeHas(a, entries.get(950)!), 'view@950 through the store of A, which purged').toBe(false);
    await until(
      async () => !(await storeHas(b, entries.get(950)!)),
      2000,
      'view@950 refused by the store of B, once B heard the purge',
    );
    for (const p of [a, b])
      for (const v of [900, 990]) expect(await storeHas(p, entries.get(v)!), `view@${v}, outside the range`).toBe(true);

    await expectServed(node, a.url, 950, 'MISS', 'view@950 on A');
    await expectServed(
      node,
      b.url,
      990,
      'HIT redis',
      'view@990 on B, outside the range: the entry from before the purge',
    );
    await expectServed(node, b.url, 900, 'HIT redis', 'view@900 on B, outside the range');
  });

  it('reaches them on a proxy started after the purge, which learns of it from Redis', async () => {
    const node = await sim();
    const a = await purgeable(node);
    await expectServed(node, a.url, 950, 'MISS', 'view@950 on A');
    const client = server.client();
    await until(async () => (await redisEntryKeys(client, PREFIX)).length === 1, 2000, 'the entry in Redis');
    const entry = (await entriesByVersion(client)).get(950)!;
    // The index lost it as eviction would lose it (the test above has Redis evict it).
    for (const set of await client.keys(`${PREFIX}purge:index:*`)) await client.del(set);

    const reply = await purge(a.admin, { family: 'view', fromVersion: '0' });
    expectStatus(reply, 200, 'purge');
    expect(reply.json().purged).toMatchObject({ memoryEntries: 1, redisEntries: 0 });
    const c = await purgeable(node);
    expect(await client.exists(entry), 'the entry is still there').toBe(1);
    expect(await storeHas(c, entry), 'view@950 through the store of C').toBe(false);
    await expectServed(node, c.url, 950, 'MISS', 'view@950 on C');
  });
});
