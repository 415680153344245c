// RedisStore in Cluster mode fails open and recovers like the single-node client:
// ioredis handles a lost cluster node by dropping it and rediscovering slots, a
// different path from a single connection's reconnect.
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { redisStore } from '../../src/cache/redis/store.js';
import type { StoredAnswer } from '../../src/model/read.js';
import { untilSubscribed, useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const TIMEOUT_MS = 250;
const SLACK_MS = 250;
const sample: StoredAnswer = { status: 200, contentType: 'application/x-bcs', body: Buffer.from([1, 2]), version: 3n };

const node = useRedisServer({ cluster: true });

it('a cluster store fails open while its node is down and recovers after a restart', async () => {
  const errors: string[] = [];
  const store = redisStore({
    cluster: [node.url],
    keyPrefix: 'cl:',
    commandTimeoutMs: TIMEOUT_MS,
    onError: (op) => errors.push(op),
  });
  try {
    expect(await store.whenReady(5000)).toBe(true);
    await store.set('k', sample);
    expect(await store.get('k')).toBeDefined();

    await node.kill();
    const start = performance.now();
    expect(await store.get('k')).toBeUndefined();
    await store.set('k', sample);
    expect(performance.now() - start).toBeLessThan(2 * TIMEOUT_MS + SLACK_MS);
    expect(errors.length).toBeGreaterThanOrEqual(2);

    await node.restart();
    await until(
      async () => {
        await store.set('k2', sample);
        return (await store.get('k2')) !== undefined;
      },
      10_000,
      'the store to work again after the restart',
    );
  } finally {
    await store.close();
  }
});

it('a cluster store gives up on a stalled node within about the command timeout', async () => {
  const errors: string[] = [];
  const store = redisStore({
    cluster: [node.url],
    keyPrefix: 'cs:',
    commandTimeoutMs: TIMEOUT_MS,
    onError: (op) => errors.push(op),
  });
  const staller = new Redis(node.url);
  staller.on('error', () => {});
  try {
    expect(await store.whenReady(10_000)).toBe(true);
    await store.set('k', sample);
    const sleeping = staller.call('DEBUG', 'SLEEP', '1');
    // The stall begins when the node reads DEBUG SLEEP: retry until a get of a stored key misses.
    let stalledMs: number | undefined;
    for (let i = 0; i < 20 && stalledMs === undefined; i++) {
      const start = performance.now();
      if ((await store.get('k')) === undefined) stalledMs = performance.now() - start;
    }
    expect(stalledMs).toBeDefined();
    expect(stalledMs!).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(errors).toContain('get');
    await sleeping;
  } finally {
    staller.disconnect();
    await store.close();
  }
});

it('fill outcomes reach a waiter on another cluster store, published before or after it subscribes', async () => {
  const stores = [0, 1].map(() => redisStore({ cluster: [node.url], keyPrefix: 'cf:', commandTimeoutMs: TIMEOUT_MS }));
  const [filler, waiter] = stores;
  try {
    for (const s of stores) expect(await s.whenReady(10_000)).toBe(true);
    const waiting = waiter.awaitFill('k', 5000);
    await untilSubscribed(node.url, ['cf:fill:k']);
    await filler.publishFill('k', { answer: sample, stored: true });
    expect(await waiting).toEqual({ answer: sample, stored: true });
    await filler.publishFill('late', { answer: sample, stored: false });
    expect(await waiter.awaitFill('late', 5000)).toEqual({ answer: sample, stored: false });
  } finally {
    for (const s of stores) await s.close();
  }
});
