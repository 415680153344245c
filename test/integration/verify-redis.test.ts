// cache.verify across instances sharing Redis with the fill lock: an answer under
// check is a one-off for the instances waiting for it; once the check is over, the
// waiters that came since learn whether it was stored. On this file's own
// redis-server (never the shared one on 6379).
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { cacheOf, hex, itemAt, PRESENT_KEYS, redisEntryKeys } from '../helpers/cache.js';
import { metricValue } from '../helpers/metrics.js';
import { proxy, rawItem, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const PREFIX = 'verify:';
const START = 1_000_004n;
const AT = START - 10n;
const KEY = PRESENT_KEYS[0];

const server = useRedisServer({ flushEach: true });
let client: Redis;

beforeEach(() => {
  client = server.client();
});

async function twoProxies(nodes: Parameters<typeof proxy>[0]): Promise<Array<Awaited<ReturnType<typeof proxy>>>> {
  const config = {
    routing: QUIET_ROUTING,
    cache: {
      memory: { maxBytes: 1_000_000 },
      redis: { url: server.url, keyPrefix: PREFIX, fillLock: true, fillLockMs: 3000 },
      verify: { mode: 'always' },
    },
  };
  return [await proxy(nodes, config), await proxy(nodes, config)];
}

const checks = (app: App, outcome: string): Promise<number> =>
  metricValue(app, 'ledger_proxy_verify_total', { outcome });
const keysOf = async (kind: 'lock' | 'fill'): Promise<number> => (await client.keys(`${PREFIX}${kind}:*`)).length;

describe('cache.verify with the Redis fill lock', () => {
  it('a waiter relays the answer under check as a one-off; a disagreement stores nothing anywhere, and the next read asks a node', async () => {
    const honest = await sim({ startVersion: START });
    const liar = await sim({ startVersion: START });
    const [a, b] = await twoProxies([honest, liar]);
    honest.faults.set({ mode: 'slow', delayMs: 400, routes: ['raw_item'], count: 1 });
    liar.faults.set({ mode: 'wrongBody', routes: ['raw_item'] });

    const onA = rawItem(a.url, hex(KEY), { version: AT });
    await until(async () => (await keysOf('lock')) === 1, 2000, 'A to hold the fill lock');
    const onB = await rawItem(b.url, hex(KEY), { version: AT });
    expect(cacheOf(await onA)).toBe('MISS');
    expect(cacheOf(onB)).toBe('COALESCED');
    expect(onB.body.equals(itemAt(KEY, AT))).toBe(true);

    await until(async () => (await checks(a.app, 'disagreed')) === 1, 5000, "A's check to disagree");
    await until(async () => (await keysOf('lock')) === 0, 2000, 'the lock to be released once the check is over');
    expect(cacheOf(await rawItem(b.url, hex(KEY), { version: AT })), 'the one-off was not kept').toBe('MISS');
    await until(async () => (await checks(b.app, 'disagreed')) === 1, 5000, "B's own check to disagree");
    expect(await redisEntryKeys(client, PREFIX)).toEqual([]);
    expect(honest.counters.byRoute.raw_item).toBe(2);
  });

  it('a waiter that comes while the check runs (after the one-off has expired) gets the stored answer when the check agrees', async () => {
    const first = await sim({ startVersion: START });
    const second = await sim({ startVersion: START });
    const [a, b] = await twoProxies([first, second]);
    second.faults.set({ mode: 'slow', delayMs: 1500, routes: ['raw_item'], count: 1 });

    expect(cacheOf(await rawItem(a.url, hex(KEY), { version: AT }))).toBe('MISS');
    expect(await keysOf('lock'), 'A holds the lock while its check runs').toBe(1);
    await until(async () => (await keysOf('fill')) === 0, 3000, 'the one-off outcome to expire');
    expect(await checks(a.app, 'agreed'), 'the check still runs').toBe(0);

    const onB = await rawItem(b.url, hex(KEY), { version: AT });
    expect(cacheOf(onB)).toBe('HIT redis');
    expect(onB.body.equals(itemAt(KEY, AT))).toBe(true);
    expect(await checks(a.app, 'agreed')).toBe(1);
    expect([first.counters.byRoute.raw_item, second.counters.byRoute.raw_item], 'B made no node call').toEqual([1, 1]);
    expect(cacheOf(await rawItem(b.url, hex(KEY), { version: AT }))).toBe('HIT memory');
  });
});
