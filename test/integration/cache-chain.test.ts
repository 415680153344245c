// api.md §8 "The chain id is part of every cache key": two chains never share an
// entry, even on one Redis with one key prefix, and a node whose chain changes
// (a devnet reset) is never answered from the old chain's entries.
import { describe, expect, it } from 'vitest';
import { cacheOf, errorBodyOf, expectStatus, hex, PRESENT, served } from '../helpers/cache.js';
import { until } from '../helpers/until.js';
import { proxy, rawItem, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';

const server = useRedisServer({ flushEach: true });

function withRedis(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    routing: { probeIntervalMs: 50 },
    cache: { redis: { url: server.url, keyPrefix: 'shared:', fillLock: true, fillLockMs: 2000 } },
    ...extra,
  };
}

describe('two chains on one Redis with one key prefix', () => {
  for (const configured of [false, true]) {
    it(`the second chain's proxy misses and asks its own node (${configured ? 'chainId configured' : 'chain from the nodes'})`, async () => {
      const four = await sim({ chainId: 4 });
      const five = await sim({ chainId: 5 });
      const a = await proxy([four], withRedis(configured ? { chainId: 4 } : {}));
      const b = await proxy([five], withRedis(configured ? { chainId: 5 } : {}));
      expect(a.app.redis?.isReady() && b.app.redis?.isReady()).toBe(true);

      const onA = await rawItem(a.url, hex(PRESENT), { version: 990 });
      expectStatus(onA, 200);
      expect(cacheOf(onA)).toBe('MISS');
      // A's entry is in Redis: another proxy on chain 4 finds it there.
      const alsoFour = await proxy([four], withRedis(configured ? { chainId: 4 } : {}));
      await until(
        async () => cacheOf(await rawItem(alsoFour.url, hex(PRESENT), { version: 990 })) === 'HIT redis',
        2000,
        'the entry in Redis',
      );

      const calls = served(five);
      const onB = await rawItem(b.url, hex(PRESENT), { version: 990 });
      expectStatus(onB, 200);
      expect(cacheOf(onB), 'chain 5 is not answered from chain 4').toBe('MISS');
      expect(onB.headers['x-node-chain-id']).toBe('5');
      expect(served(five) - calls, 'the read reached chain 5').toBe(1);
    });
  }
});

describe('a node whose chain changes (devnet reset)', () => {
  it("is not answered from the old chain's entries, memory or Redis", async () => {
    const node = await sim({ chainId: 4 });
    const { app, url } = await proxy([node], withRedis());
    expect(cacheOf(await rawItem(url, hex(PRESENT), { version: 990 }))).toBe('MISS');
    expect(cacheOf(await rawItem(url, hex(PRESENT), { version: 990 }))).toBe('HIT memory');

    node.ledger.setChainId(7);
    await until(() => app.watermark.current()?.chainId === 7, 5000, 'the proxy to adopt chain 7');
    const calls = served(node);
    const after = await rawItem(url, hex(PRESENT), { version: 990 });
    expectStatus(after, 200);
    expect(cacheOf(after)).toBe('MISS');
    expect(after.headers['x-node-chain-id']).toBe('7');
    expect(served(node) - calls).toBe(1);
  });
});

describe('while the chain is not known', () => {
  it('reads answer 503 internal_error "not ready", say why, name no URL, and nothing is cached', async () => {
    const down = await sim();
    await down.stop();
    const { url } = await proxy([down], withRedis({ routing: QUIET_ROUTING }));
    for (const read of [() => rawItem(url, hex(PRESENT), { version: 990 }), () => rawItem(url, hex(PRESENT))]) {
      const reply = await read();
      expectStatus(reply, 503);
      const body = errorBodyOf(reply);
      expect(body.error_code).toBe('internal_error');
      expect(body.message).toMatch(/^not ready: /);
      expect(body.message).toMatch(/node0: connection refused/);
      expect(body.message).not.toMatch(/127\.0\.0\.1|http:/);
    }
  });
});
