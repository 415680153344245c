// RedisStore against its own redis-server: what lands in Redis, locks, and failing
// open while the server is killed, restarted or stalled.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeAnswer, FORMAT_V4 } from '../../src/cache/redis/codec.js';
import { type RedisStore, redisStore, type RedisStoreOptions } from '../../src/cache/redis/store.js';
import type { FillLock } from '../../src/cache/store.js';
import type { StoredAnswer } from '../../src/model/read.js';
import { untilSubscribed, useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { timed } from '../helpers/cache.js';

const TIMEOUT_MS = 250;
/** Scheduling slack on a busy CI machine on top of the command timeout. */
const SLACK_MS = 250;

const sample: StoredAnswer = {
  status: 200,
  contentType: 'application/x-bcs',
  body: Buffer.from([0x7b, 0x00, 0xff, 0x22]),
  gasUsed: '5',
  version: 2n ** 63n,
};

const server = useRedisServer();
const cleanups: Array<() => Promise<void> | void> = [];
let prefixes = 0;

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Made {
  store: RedisStore;
  prefix: string;
  errors: Array<{ op: string; err: Error }>;
  logs: Array<{ level: number; msg: string; op?: string }>;
}

async function makeStore(overrides: Partial<RedisStoreOptions> = {}): Promise<Made> {
  const errors: Made['errors'] = [];
  const logs: Made['logs'] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const prefix = `it:${++prefixes}:`;
  const store = redisStore({
    url: server.url,
    keyPrefix: prefix,
    commandTimeoutMs: TIMEOUT_MS,
    logger,
    onError: (op, err) => errors.push({ op, err }),
    ...overrides,
  });
  cleanups.push(() => store.close());
  expect(await store.whenReady(5000)).toBe(true);
  return { store, prefix, errors, logs };
}

describe('RedisStore in Redis', () => {
  it('stores under the prefix, as binary', async () => {
    const { store, prefix } = await makeStore();
    await store.set('abc', sample);
    const redis = server.client();
    expect(await redis.keys(`${prefix}*`)).toEqual([`${prefix}abc`]);
    const raw = (await redis.getBuffer(`${prefix}abc`))!;
    expect(raw[0]).toBe(FORMAT_V4);
    expect(() => JSON.parse(raw.toString('utf8'))).toThrow();
    expect(raw.subarray(raw.length - 4 - sample.body.length, raw.length - 4).equals(sample.body)).toBe(true);
    expect(decodeAnswer(raw)).toEqual(sample);
  });

  it('sets a ttl when given one, rounded up to seconds, and none otherwise', async () => {
    const { store, prefix } = await makeStore();
    const redis = server.client();
    await store.set('ttl', sample, 120);
    await store.set('frac', sample, 1.2);
    await store.set('forever', sample);
    await store.set('expired', sample, 0);
    const ttl = await redis.ttl(`${prefix}ttl`);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
    expect(await redis.pttl(`${prefix}frac`)).toBeGreaterThan(1200);
    expect(await redis.ttl(`${prefix}forever`)).toBe(-1);
    expect(await redis.exists(`${prefix}expired`)).toBe(0);
  });

  it('reads an entry that fails its check as a miss: counted every time, logged once per key, and no failure', async () => {
    const faults: string[] = [];
    const { store, prefix, errors, logs } = await makeStore({ onCorrupt: (fault) => faults.push(fault) });
    const redis = server.client();
    await store.set('good', sample);
    const good = (await redis.getBuffer(`${prefix}good`))!;
    await redis.set(`${prefix}short`, good.subarray(0, good.length - 1));
    await redis.set(`${prefix}foreign`, Buffer.from([9, 9, 9]));
    for (let i = 0; i < 3; i++) {
      expect(await store.get('short')).toBeUndefined();
      expect(await store.get('foreign')).toBeUndefined();
      expect(await store.get('good')).toEqual(sample);
    }
    expect(faults).toEqual(['length', 'format', 'length', 'format', 'length', 'format']);
    const warned = logs.filter((l) => l.level === 40);
    expect(warned.map((l) => (l as { key?: string }).key)).toEqual(['short', 'foreign']);
    expect(errors, 'a bad entry is no Redis failure').toEqual([]);
    expect(store.isHealthy(), 'Redis is not left alone after it').toBe(true);
  });
});

describe('RedisStore fill lock', () => {
  it('is held by one instance at a time, under prefix + lock:', async () => {
    const a = await makeStore({ keyPrefix: 'lk:' });
    const b = await makeStore({ keyPrefix: 'lk:' });
    const redis = server.client();
    const lock = await a.store.tryLock('k', 5000);
    expect(typeof lock).toBe('object');
    expect(await b.store.tryLock('k', 5000)).toBe('held');
    expect(await a.store.tryLock('k', 5000)).toBe('held');
    expect(await redis.pttl('lk:lock:k')).toBeGreaterThan(4000);

    await (lock as FillLock).release();
    expect(await redis.exists('lk:lock:k')).toBe(0);
    const next = await b.store.tryLock('k', 5000);
    expect(typeof next).toBe('object');
    await (next as FillLock).release();
    expect(await redis.exists('lk:lock:k')).toBe(0);
  });

  it('an expired lock taken again is not released by its first holder: another instance, or the same one', async () => {
    const a = await makeStore({ keyPrefix: 'lx:' });
    const b = await makeStore({ keyPrefix: 'lx:' });
    const redis = server.client();
    for (const second of [b, a]) {
      const first = (await a.store.tryLock('k', 50)) as FillLock;
      expect(typeof first).toBe('object');
      await until(async () => (await redis.exists('lx:lock:k')) === 0, 5000, 'the lock key to expire');
      const taken = (await second.store.tryLock('k', 5000)) as FillLock;
      expect(typeof taken).toBe('object');
      await first.release();
      expect(await redis.exists('lx:lock:k'), "the first holder released the second holder's lock").toBe(1);
      await taken.release();
      expect(await redis.exists('lx:lock:k')).toBe(0);
    }
  });
});

describe('RedisStore fill outcomes', () => {
  it('reach every waiter of the key at once, and none of another key', async () => {
    const filler = await makeStore({ keyPrefix: 'fo:' });
    const waiter = await makeStore({ keyPrefix: 'fo:' });
    const waits = [
      waiter.store.awaitFill('k', 5000),
      waiter.store.awaitFill('k', 5000),
      waiter.store.awaitFill('other', 300),
    ];
    await untilSubscribed(server.url, ['fo:fill:k', 'fo:fill:other']);
    const started = performance.now();
    await filler.store.publishFill('k', { answer: sample, stored: false });
    const [first, second] = await Promise.all(waits.slice(0, 2));
    expect(performance.now() - started).toBeLessThan(200);
    const other = await waits[2];
    for (const outcome of [first, second]) {
      expect(outcome).toEqual({ answer: sample, stored: false });
    }
    expect(other, 'another key times out').toBeUndefined();
    expect(waiter.errors).toEqual([]);
  });

  it('a waiter that subscribes after the publish reads the outcome key; it lives about a second', async () => {
    const filler = await makeStore({ keyPrefix: 'fl:' });
    const waiter = await makeStore({ keyPrefix: 'fl:' });
    await filler.store.publishFill('k', { answer: sample, stored: true });
    const redis = server.client();
    const ttl = await redis.pttl('fl:fill:k');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
    const { value, ms } = await timed(() => waiter.store.awaitFill('k', 5000));
    expect(value).toEqual({ answer: sample, stored: true });
    expect(ms).toBeLessThan(200);
    await filler.store.publishFill('g', 'gave-up');
    expect(await waiter.store.awaitFill('g', 5000)).toBe('gave-up');
  });

  it('with the server gone, a wait ends at once with no outcome', async () => {
    const { store } = await makeStore();
    await server.kill();
    let restarted = false;
    cleanups.push(async () => {
      if (!restarted) await server.restart();
    });
    const { value, ms } = await timed(() => store.awaitFill('k', 5000));
    expect(value).toBeUndefined();
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    await store.publishFill('k', 'gave-up');
    await server.restart();
    restarted = true;
  });
});

describe('RedisStore fails open', () => {
  it('while the server is killed, then reconnects by itself after a restart', async () => {
    const { store, errors, logs } = await makeStore();
    await store.set('k', sample);
    await server.kill();
    let restarted = false;
    cleanups.push(async () => {
      if (!restarted) await server.restart();
    });

    const get = await timed(() => store.get('k'));
    expect(get.value).toBeUndefined();
    expect(get.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect((await timed(() => store.set('k', sample))).ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    await store.delete('k');
    expect(await store.tryLock('k', 1000)).toBe('failed');
    expect(store.isReady()).toBe(false);

    // An outage is reported on every call but logged once, not per request.
    for (let i = 0; i < 50; i++) expect(await store.get('k')).toBeUndefined();
    expect(errors.length).toBeGreaterThanOrEqual(54);
    expect(logs.filter((l) => l.level === 40)).toHaveLength(1);

    await server.restart();
    restarted = true;
    await until(
      async () => {
        await store.set('k2', sample);
        return (await store.get('k2')) !== undefined;
      },
      10_000,
      'the store to work again',
    );
    expect(store.isReady()).toBe(true);
    expect(logs.some((l) => l.msg === 'redis available again')).toBe(true);
  });

  it('get resolves undefined within about the command timeout while the server is stalled', async () => {
    const { store, errors } = await makeStore();
    const { stalledGet, sleeping } = await stall(store);
    expect(stalledGet.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(errors.some((e) => e.op === 'get' && /timed out/i.test(e.err.message))).toBe(true);

    await sleeping;
    await until(async () => (await store.get('stall')) !== undefined, 5000, 'the stalled value');
  });

  it('close does not hang when the server is stalled', async () => {
    const { store } = await makeStore();
    const { sleeping } = await stall(store);
    expect((await timed(() => store.close())).ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    await sleeping;
  });

  it('close does not hang when the server is gone', async () => {
    const { store } = await makeStore();
    await server.kill();
    try {
      expect((await timed(() => store.close())).ms).toBeLessThan(SLACK_MS);
      expect(await store.get('k')).toBeUndefined();
    } finally {
      await server.restart();
    }
  });

  it('refuses options without exactly one of url and cluster', () => {
    expect(() => redisStore({ keyPrefix: 'x:', commandTimeoutMs: 100 })).toThrow(/exactly one/);
    expect(() =>
      redisStore({ url: server.url, cluster: [server.url], keyPrefix: 'x:', commandTimeoutMs: 100 }),
    ).toThrow(/exactly one/);
  });
});

/**
 * Stalls the server for 1 s with DEBUG SLEEP from another client and returns the
 * first get of a stored key that missed. The stall starts when the server reads the
 * command, which the test cannot observe, so gets are retried until one misses.
 */
async function stall(store: RedisStore): Promise<{ stalledGet: { ms: number }; sleeping: Promise<unknown> }> {
  await store.set('stall', sample);
  expect(await store.get('stall')).toBeDefined();
  const sleeping = server.client().call('DEBUG', 'SLEEP', '1');
  for (let i = 0; i < 20; i++) {
    const attempt = await timed(() => store.get('stall'));
    if (attempt.value === undefined) return { stalledGet: attempt, sleeping };
  }
  throw new Error('the server never stalled');
}
