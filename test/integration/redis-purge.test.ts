// The Redis side of a purge, on RedisStore against its own redis-server (and a
// one-node Redis Cluster): the index deletes exactly the versions in range, past
// 2^53 and across batches; its sets expire; a range purge's record refuses what
// the index lost, is folded past its bound and written back into a lost hash; a
// lost purge hash is written back with the generation the processes have; one
// store's purges reach another's listener.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeAnswer } from '../../src/cache/redis/codec.js';
import { CacheGeneration } from '../../src/cache/generation.js';
import { MAX_RECORDS_PER_FAMILY } from '../../src/cache/redis/purge-records.js';
import { type RedisStore, redisStore, type RedisStoreOptions } from '../../src/cache/redis/store.js';
import type { PurgeNotice } from '../../src/cache/store.js';
import type { StoredAnswer } from '../../src/model/read.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const MAX_TTL_SECONDS = 7200;

const server = useRedisServer();
const clusterNode = useRedisServer({ cluster: true });
const cleanups: Array<() => Promise<void> | void> = [];
let prefixes = 0;

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function answerAt(version: bigint): StoredAnswer {
  return { status: 200, contentType: 'application/json', body: Buffer.from(`"${version}"`), version };
}

async function store(
  target: { url: string } | { cluster: string[] },
  prefix: string,
  overrides: Partial<RedisStoreOptions> = {},
): Promise<RedisStore> {
  const s = redisStore({
    ...target,
    keyPrefix: prefix,
    commandTimeoutMs: 1000,
    maxTtlSeconds: MAX_TTL_SECONDS,
    ...overrides,
  });
  cleanups.push(() => s.close());
  expect(await s.whenReady(5000)).toBe(true);
  return s;
}

function inspector(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  cleanups.push(() => client.disconnect());
  return client;
}

describe('RedisStore purges', () => {
  it('by range: exactly the versions in range of that family, past 2^53 and over many batches', async () => {
    const prefix = `p${++prefixes}:`;
    const s = await store({ url: server.url }, prefix);
    const big = 2n ** 60n;
    // Versions 2^60 and 2^60+1 are one double: only each member's own version tells them apart.
    const versions = [big - 1n, big, big + 1n, big + 2n];
    for (const v of versions) await s.set(`view-${v}`, answerAt(v), 60, 'view');
    await s.set(`raw-${big}`, answerAt(big), 60, 'raw_item');
    // 600 entries at small versions: more than one batch.
    await Promise.all(
      Array.from({ length: 600 }, (_, i) => s.set(`many-${i}`, answerAt(BigInt(1000 + i)), 60, 'view')),
    );

    expect((await s.purgeRange('view', big + 1n, big + 1n)).deleted).toBe(1);
    const client = inspector(server.url);
    const left = async (keys: string[]): Promise<boolean[]> =>
      Promise.all(keys.map(async (k) => (await client.exists(prefix + k)) === 1));
    expect(await left(versions.map((v) => `view-${v}`))).toEqual([true, true, false, true]);
    expect(await left([`raw-${big}`])).toEqual([true]);

    expect((await s.purgeRange('view', 1100n, 1499n)).deleted).toBe(400);
    expect(await left(['many-99', 'many-100', 'many-499', 'many-500'])).toEqual([true, false, false, true]);
    // No upper bound; the index no longer holds what was deleted.
    expect((await s.purgeRange('view', 0n, null)).deleted).toBe(200 + 3);
    expect((await s.purgeRange('view', 0n, null)).deleted).toBe(0);
    expect(await left([`raw-${big}`])).toEqual([true]);
  });

  it('keeps its index in sets that expire after every entry written into them has', async () => {
    const prefix = `p${++prefixes}:`;
    const s = await store({ url: server.url }, prefix);
    await s.set('k', answerAt(5n), 30, 'view');
    const client = inspector(server.url);
    const [set] = await client.keys(`${prefix}purge:index:*`);
    expect(set).toMatch(new RegExp(`^${prefix}purge:index:0:view:\\d+$`));
    const ttl = await client.ttl(set);
    // Within the hour it was written in, plus maxTtlSeconds.
    expect(ttl).toBeGreaterThan(MAX_TTL_SECONDS);
    expect(ttl).toBeLessThanOrEqual(MAX_TTL_SECONDS + 3600);
  });

  it('one store purging tells the others; a lost purge hash is written back with the highest generation', async () => {
    const prefix = `p${++prefixes}:`;
    const a = await store({ url: server.url }, prefix);
    const generation = new CacheGeneration();
    const b = await store({ url: server.url }, prefix, { generation });
    const heard: PurgeNotice[] = [];
    b.onPurge((notice) => heard.push(notice));

    expect(await a.purgeAll()).toEqual({ generation: 1, announced: 1, deleted: 0 });
    await until(() => heard.length === 1, 2000, 'B heard the purge');
    expect(heard[0]).toEqual({ scope: 'all', generation: 1 });
    expect(generation.current).toBe(1);
    expect((await a.purgeRange('blocks', 3n, null)).deleted).toBe(0);
    await until(() => heard.length === 2, 2000, 'B heard the range purge');
    expect(heard[1]).toEqual({ scope: 'family', family: 'blocks', fromVersion: '3', toVersion: null });

    // The hash is lost (FLUSHALL, eviction): the next read of it puts the generation back, not 0.
    const client = inspector(server.url);
    await client.del(`${prefix}purge`);
    const c = await store({ url: server.url }, prefix);
    expect(c.generation.current, 'a store started on the empty hash').toBe(0);
    await b.whenReady(1000);
    expect(await client.hget(`${prefix}purge`, 'generation')).toBe('1');
    expect((await c.purgeAll()).generation, 'the next purge moves past every generation in use').toBe(2);
  });

  it('refuses an entry a range purge names that the index lost; a lost hash gets the records back from a store that has them', async () => {
    const prefix = `p${++prefixes}:`;
    const a = await store({ url: server.url }, prefix);
    const b = await store({ url: server.url }, prefix);
    const client = inspector(server.url);
    // Entries written before the purge (their writer knew of no purge), which no index set holds.
    const before = { family: 'view', purges: 0 };
    await client.set(`${prefix}named`, encodeAnswer(answerAt(5n), before));
    await client.set(`${prefix}outside`, encodeAnswer(answerAt(50n), before));
    await client.set(`${prefix}other`, encodeAnswer(answerAt(5n), { family: 'accounts', purges: 0 }));

    expect((await a.purgeRange('view', 0n, 9n)).deleted).toBe(0);
    expect(await a.get('named'), 'named by the purge').toBeUndefined();
    await until(async () => (await b.get('named')) === undefined, 2000, 'B heard the purge');
    for (const s of [a, b]) {
      expect(await s.get('outside'), 'above the range').toBeDefined();
      expect(await s.get('other'), 'another family').toBeDefined();
    }
    await a.set('named', answerAt(5n), 60, 'view');
    expect(await b.get('named'), 'written since the purge').toBeDefined();

    // The hash is lost (eviction): a store started now knows of no purge, until one that does writes it back.
    await client.set(`${prefix}named`, encodeAnswer(answerAt(5n), before));
    await client.del(`${prefix}purge`);
    const c = await store({ url: server.url }, prefix);
    expect(await c.get('named'), 'C, on the lost hash').toBeDefined();
    await b.whenReady(1000);
    expect(await client.hgetall(`${prefix}purge`)).toMatchObject({
      purges: '1',
      'range:1': expect.stringMatching(/^\d+ view 0 9$/),
    });
    await c.whenReady(1000);
    expect(await c.get('named'), 'C, once the records are back').toBeUndefined();
  });

  it('folds the range records of a family past its bound into one, which still names every entry they did', async () => {
    const prefix = `p${++prefixes}:`;
    const s = await store({ url: server.url }, prefix);
    const client = inspector(server.url);
    const ranges = Array.from(
      { length: MAX_RECORDS_PER_FAMILY },
      (_, i) => [BigInt(100 + i * 10), BigInt(105 + i * 10)] as const,
    );
    for (const [from, to] of ranges) expect((await s.purgeRange('view', from, to)).widened).toBeUndefined();
    await s.purgeRange('blocks', 0n, null);
    const folding = await s.purgeRange('view', 0n, 1n);
    const top = String(ranges.at(-1)![1]);
    expect(folding.widened).toEqual({ fromVersion: '0', toVersion: top });
    const fields = Object.entries(await client.hgetall(`${prefix}purge`)).filter(([field]) =>
      field.startsWith('range:'),
    );
    expect(fields.map(([, value]) => value.replace(/^\d+ /, ''))).toEqual(['blocks 0 -', `view 0 ${top}`]);

    const before = { family: 'view', purges: 0 };
    for (const [key, version] of [
      ['first', 100n],
      ['last', ranges.at(-1)![1]],
      ['between', 107n],
      ['above', ranges.at(-1)![1] + 1n],
    ] as const) {
      await client.set(`${prefix}${key}`, encodeAnswer(answerAt(version), before));
    }
    expect(await s.get('first')).toBeUndefined();
    expect(await s.get('last')).toBeUndefined();
    expect(await s.get('between'), 'between two ranges: read afresh, once folded').toBeUndefined();
    expect(await s.get('above')).toBeDefined();
  });

  it('works on a Redis Cluster', async () => {
    const prefix = `p${++prefixes}:`;
    const a = await store({ cluster: [clusterNode.url] }, prefix);
    const b = await store({ cluster: [clusterNode.url] }, prefix);
    const heard: PurgeNotice[] = [];
    b.onPurge((notice) => heard.push(notice));
    await a.set('one', answerAt(7n), 60, 'accounts');
    await a.set('two', answerAt(8n), 60, 'accounts');
    expect((await a.purgeRange('accounts', 8n, 9n)).deleted).toBe(1);
    expect((await a.purgeKey('some key text')).deleted).toBe(0);
    expect(await a.purgeAll()).toEqual({ generation: 1, announced: 3, deleted: 0 });
    await until(
      () => heard.length === 3,
      3000,
      () => `B heard all three (heard ${JSON.stringify(heard)})`,
    );
    expect(heard.map((n) => n.scope)).toEqual(['family', 'key', 'all']);
    expect(b.generation.current).toBe(1);
  });
});
