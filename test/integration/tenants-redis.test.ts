// Tenants' limits shared through Redis (api.md §10.3): instances on one Redis
// share a tenant's budget, and limits hold when that Redis cannot be reached.
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { proxy, sim, QUIET } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { sha256Hex } from '../helpers/bytes.js';
import { bearer, expectTooMany, FROZEN, pinnedItem, send, WALLET_KEY } from '../helpers/tenants.js';

describe('shared through Redis', () => {
  const redis = useRedisServer();

  it("two instances on one Redis share a tenant's budget", async () => {
    const node = await sim();
    const cache = { redis: { url: redis.url, keyPrefix: 'tenants-test:' } };
    const overrides = {
      ...QUIET,
      cache,
      tenants: { list: [{ name: 'wallet-backend', keys: [{ sha256: sha256Hex(WALLET_KEY) }], requestsPerSecond: 4 }] },
    };
    const a = await proxy([node], overrides, FROZEN);
    const b = await proxy([node], overrides, FROZEN);
    const headers = bearer(WALLET_KEY);
    const client = new Redis(redis.url);
    const shared = async (): Promise<number> => {
      const keys = await client.keys('tenants-test:limits:requests:*');
      return (await Promise.all(keys.map((k) => client.get(k)))).reduce((n, v) => n + Number(v), 0);
    };
    try {
      for (let i = 0; i < 4; i++) expect((await send(a.url, '/v1', { headers })).status).toBe(200);
      await until(async () => (await shared()) === 4, 3000, "a's four requests in the shared counter");
      // b has counted nothing of this tenant: its first request passes, and its count brings back the shared total.
      expect((await send(b.url, '/v1', { headers })).status).toBe(200);
      await until(async () => (await shared()) === 5, 3000, "b's request in the shared counter");
      // By its own count b would allow two more; by the shared one the tenant is over.
      expectTooMany(await send(b.url, '/v1', { headers }), '4');
    } finally {
      client.disconnect();
    }
  });

  it("a tenant's requests are added to the shared counter together, not one command each", async () => {
    const node = await sim();
    const cache = { redis: { url: redis.url, keyPrefix: 'tenants-batch:' } };
    const p = await proxy([node], { ...QUIET, cache, tenants: { anonymous: { requestsPerSecond: 1000 } } }, FROZEN);
    const client = new Redis(redis.url);
    try {
      await client.config('RESETSTAT');
      const item = pinnedItem('0x01');
      await send(p.url, item.path, item);
      await Promise.all(Array.from({ length: 40 }, () => send(p.url, item.path, item)));
      const counted = async (): Promise<number> => {
        const keys = await client.keys('tenants-batch:limits:requests:*');
        return (await Promise.all(keys.map((k) => client.get(k)))).reduce((n, v) => n + Number(v), 0);
      };
      await until(async () => (await counted()) === 41, 2000, 'the shared counter to reach 41');
      const calls = (await client.info('commandstats')).match(/^cmdstat_incrby:calls=(\d+)/m);
      expect(Number(calls?.[1])).toBeGreaterThan(0);
      expect(Number(calls?.[1])).toBeLessThanOrEqual(5);
      expect((await client.info('commandstats')).match(/^cmdstat_incr:/m)).toBeNull();
    } finally {
      client.disconnect();
    }
  });
});

describe('limits shared through a Redis that is unreachable', () => {
  it('count in this process; the counters client writes nothing to stderr, and its failure is counted', async () => {
    const port = await freePort();
    const stderr = vi.spyOn(console, 'error');
    try {
      const node = await sim();
      const cache = { redis: { url: `redis://127.0.0.1:${port}`, keyPrefix: 'tenants-down:' } };
      const p = await proxy([node], { ...QUIET, cache, tenants: { anonymous: { requestsPerSecond: 2 } } }, FROZEN);
      const item = pinnedItem('0x01');
      expect((await send(p.url, item.path, item)).status).toBe(200);
      expect((await send(p.url, item.path, item)).status).toBe(200);
      expect((await send(p.url, item.path, item)).status).toBe(429);
      const counted = async (): Promise<boolean> =>
        /^ledger_proxy_redis_errors_total\{client="limits",op="connection"\} [1-9]/m.test(
          (await p.app.metrics.render()).body,
        );
      await until(counted, 5000, 'the counters client failure in ledger_proxy_redis_errors_total');
      const fromIoredis = stderr.mock.calls.filter((args) => args.some((a) => String(a).includes('[ioredis]')));
      expect(fromIoredis).toEqual([]);
    } finally {
      stderr.mockRestore();
    }
  });
});
