// The per-client rate limit (issue 14): checked in the fast path, so memory hits
// stay on it with rate limiting on; each request counted once whichever path
// serves it; refusals node-shaped with the ledger headers; and with
// rateLimit.redis one limit shared by every instance.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ReplyWriter } from '../../src/http/reply.js';
import { freePort, ledgerHeaders, proxy, rawItem, sim } from '../helpers/proxy.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const QUIET = { routing: { probeIntervalMs: 600_000 } };
const limit = (max: number, redis = false) => ({ rateLimit: { enabled: true, max, timeWindowMs: 60_000, redis } });

describe('rate limiting and the fast path', () => {
  it('memory hits are answered by the fast path with rate limiting on', async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...limit(1000) });
    await rawItem(p.url, '0x01', { version: 1000 });
    const fast = vi.spyOn(ReplyWriter.prototype, 'writeRaw');
    try {
      for (let i = 0; i < 3; i++) expect((await rawItem(p.url, '0x01', { version: 1000 })).headers['x-cache']).toBe('HIT');
      expect(fast).toHaveBeenCalledTimes(3);
    } finally {
      fast.mockRestore();
    }
  });

  it('counts a request once whichever path answers it, and refuses hits and misses alike, with the ledger headers', async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, ...limit(3) });
    // A miss the fast path reads and hands to the route, a hit, a latest read: three requests.
    expect((await rawItem(p.url, '0x01', { version: 1000 })).status).toBe(200);
    expect((await rawItem(p.url, '0x01', { version: 1000 })).headers['x-cache']).toBe('HIT');
    expect((await rawItem(p.url, '0x01')).status).toBe(200);
    for (const refused of [await rawItem(p.url, '0x01', { version: 1000 }), await rawItem(p.url, '0x02', { version: 1000 })]) {
      expect(refused.status).toBe(503);
      expect(refused.json().message).toContain('rate limit exceeded');
      expect(Object.keys(ledgerHeaders(refused))).toHaveLength(7);
    }
    expect(node.counters.byRoute.raw_item).toBe(2);
  });
});

describe('rate limiting shared through Redis', () => {
  let redis: RedisServerHandle;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('two instances share one limit per client', async () => {
    const node = await sim();
    const cache = { redis: { url: redis.url, keyPrefix: 'rl-test:' } };
    const a = await proxy([node], { ...QUIET, cache, ...limit(3, true) });
    const b = await proxy([node], { ...QUIET, cache, ...limit(3, true) });
    for (let i = 0; i < 3; i++) expect((await rawItem(a.url, '0x01', { version: 1000 })).status).toBe(200);
    // b has not seen this client yet: its first request is admitted and learns the shared total.
    expect((await rawItem(b.url, '0x01', { version: 1000 })).status).toBe(200);
    await vi.waitFor(async () => expect((await rawItem(b.url, '0x01', { version: 1000 })).status).toBe(503));
  });

  it("a client's requests are added to the shared counter together, not one command each", async () => {
    const node = await sim();
    const cache = { redis: { url: redis.url, keyPrefix: 'rl-batch:' } };
    // An hour's window: the requests never straddle two windows (two counters).
    const p = await proxy([node], { ...QUIET, cache, rateLimit: { enabled: true, max: 1000, timeWindowMs: 3_600_000, redis: true } });
    const client = new Redis(redis.url);
    try {
      await client.config('RESETSTAT');
      await rawItem(p.url, '0x01', { version: 1000 });
      await Promise.all(Array.from({ length: 40 }, () => rawItem(p.url, '0x01', { version: 1000 })));
      // Every request is counted in the shared total, by a handful of commands.
      const counter = async (): Promise<number> => {
        const keys = await client.keys('rl-batch:rate-limit:*');
        return (await Promise.all(keys.map((k) => client.get(k)))).reduce((n, v) => n + Number(v), 0);
      };
      await until(async () => (await counter()) === 41, 2000, 'the shared counter to reach 41');
      const calls = (await client.info('commandstats')).match(/^cmdstat_incrby:calls=(\d+)/m);
      expect(Number(calls?.[1])).toBeGreaterThan(0);
      expect(Number(calls?.[1])).toBeLessThanOrEqual(5);
      expect((await client.info('commandstats')).match(/^cmdstat_incr:/m)).toBeNull();
    } finally {
      client.disconnect();
    }
  });
});

describe('rate limiting shared through a Redis that is unreachable', () => {
  it('counts in this process; the counters client writes nothing to stderr, and its failure is counted', async () => {
    const port = await freePort();
    const stderr = vi.spyOn(console, 'error');
    try {
      const node = await sim();
      const cache = { redis: { url: `redis://127.0.0.1:${port}`, keyPrefix: 'rl-down:' } };
      const p = await proxy([node], { ...QUIET, cache, ...limit(2, true) });
      expect((await rawItem(p.url, '0x01', { version: 1000 })).status).toBe(200);
      expect((await rawItem(p.url, '0x01', { version: 1000 })).status).toBe(200);
      expect((await rawItem(p.url, '0x01', { version: 1000 })).status).toBe(503);
      const counted = async (): Promise<boolean> => /^ledger_proxy_redis_errors_total\{client="rate-limit",op="connection"\} [1-9]/m.test((await p.app.metrics.render()).body);
      await until(counted, 5000, 'the counters client failure in ledger_proxy_redis_errors_total');
      const fromIoredis = stderr.mock.calls.filter((args) => args.some((a) => String(a).includes('[ioredis]')));
      expect(fromIoredis).toEqual([]);
    } finally {
      stderr.mockRestore();
    }
  });
});
