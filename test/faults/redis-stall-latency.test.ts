// What a stalled Redis may cost a read, pinned down deterministically (the load
// suite sees these only now and then):
// - docs/operations/deploy.md "Redis": when Redis is slow (over commandTimeoutMs) the proxy answers
//   "with no added latency beyond the timeout". Pinned misses arriving one every
//   10 ms while Redis stalls must each answer within one commandTimeoutMs (plus
//   the node's few ms and slack), not wait for earlier commands' timeouts first.
// - A fill lock whose SET NX timed out on the client but landed on the server
//   after the stall must not be left behind: it would make every later miss of
//   that key wait fillLockMs for a fill that never comes.
// - routing.deadlineMs bounds "a whole client request": the wait for another
//   instance's fill counts against it.
// - A process too busy to run its timers on time (a GC pause, CPU contention, a
//   container's CPU quota) is no slow Redis: a reply that arrived meanwhile is
//   read, not failed as a timeout (which would leave Redis alone for a second).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisStore } from '../../src/cache/redis/store.js';
import { cacheKeyText, sharedKey } from '../../src/cache/key.js';
import { parseRawItem } from '../../src/routes/parse-read.js';
import { PRESENT, hex, itemAt } from '../helpers/cache.js';
import { HANDLE, proxy, rawItem, sim } from '../helpers/proxy.js';
import { stallRedis, useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const COMMAND_TIMEOUT_MS = 300;
/** The node answers in a few ms; the rest is scheduling slack on a busy 2-core machine. */
const SLACK_MS = 150;

const redis = useRedisServer({ flushEach: true });

/** Blocks this process's one thread for ms, as a GC pause or a CPU quota would. */
function blockProcess(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('a stalled Redis costs a pinned miss at most one command timeout', () => {
  it('pinned misses arriving while Redis stalls each answer within commandTimeoutMs', async () => {
    const node = await sim();
    const { app, url } = await proxy([node], {
      // Nothing in memory: every pinned read asks Redis first.
      cache: {
        memory: { maxBytes: 1 },
        redis: { url: redis.url, keyPrefix: 'stall:', commandTimeoutMs: COMMAND_TIMEOUT_MS },
      },
    });
    expect(app.redis!.isReady()).toBe(true);
    // Warm: the connection is up and a first command has been answered.
    expect((await rawItem(url, hex(PRESENT), { version: 500 })).status).toBe(200);

    const { awake } = await stallRedis(redis.url, 1);
    const timings: Array<Promise<{ version: number; ms: number; status: number; ok: boolean }>> = [];
    // Reads arriving one after another through the stall, 10 ms apart.
    for (let i = 0; i < 10; i++) {
      const version = 600 + i;
      const started = performance.now();
      timings.push(
        rawItem(url, hex(PRESENT), { version }).then((r) => ({
          version,
          ms: Math.round(performance.now() - started),
          status: r.status,
          ok: r.status === 200 && r.body.equals(itemAt(PRESENT, BigInt(version))),
        })),
      );
      await sleep(10);
    }
    const results = await Promise.all(timings);
    await awake;
    // Fails open: every read is the node's right answer.
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const slow = results.filter((r) => r.ms > COMMAND_TIMEOUT_MS + SLACK_MS);
    expect(
      slow,
      `reads slower than commandTimeoutMs (${COMMAND_TIMEOUT_MS}) + ${SLACK_MS} ms; all: ${JSON.stringify(results.map((r) => r.ms))}`,
    ).toEqual([]);
  });

  it('a lock attempt that timed out during a stall leaves no lock behind once Redis answers again', async () => {
    const store = redisStore({ url: redis.url, keyPrefix: 'orphan:', commandTimeoutMs: 100 });
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 0, lazyConnect: true });
    admin.on('error', () => {});
    try {
      expect(await store.whenReady(2000)).toBe(true);
      await admin.connect();
      const { awake } = await stallRedis(redis.url, 0.5);
      // The SET NX is on the wire when the client gives up on it.
      expect(await store.tryLock('k', 2000)).toBe('failed');
      await awake;
      // Redis runs it when it wakes: a lock nobody holds, for the full 2 s, unless the store takes it away.
      let ttl = await admin.pttl('orphan:lock:k');
      await until(
        async () => (ttl = await admin.pttl('orphan:lock:k')) === -2,
        500,
        () => `the lock the proxy failed to take gone (${ttl} ms left; -1: no expiry)`,
      );
    } finally {
      await store.close();
      admin.disconnect();
    }
  });

  it('a reply that arrived while the process was blocked past commandTimeoutMs is a reply, not a timeout', async () => {
    const errors: string[] = [];
    const store = redisStore({
      url: redis.url,
      keyPrefix: 'busy:',
      commandTimeoutMs: 100,
      onError: (op) => errors.push(op),
    });
    try {
      expect(await store.whenReady(2000)).toBe(true);
      await store.set('k', { status: 200, contentType: 'application/x-bcs', body: Buffer.from([1, 2]), version: 3n });
      const found = store.get('k');
      // The GET is sent by the client's flush, queued before this; then the process
      // is blocked three command timeouts, and Redis answers meanwhile.
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          blockProcess(300);
          resolve();
        }),
      );
      expect(await found, 'the entry Redis answered while the process was blocked').toBeDefined();
      expect(errors, 'Redis failures counted').toEqual([]);
      expect(store.isHealthy(), 'Redis is still taken as healthy').toBe(true);
    } finally {
      await store.close();
    }
  });

  it("the wait for another instance's fill counts against routing.deadlineMs", async () => {
    const node = await sim();
    const deadlineMs = 1500;
    const { url } = await proxy([node], {
      routing: { attemptTimeoutMs: 1500, deadlineMs },
      cache: { redis: { url: redis.url, keyPrefix: 'deadline:', fillLockMs: 1000 } },
    });
    // Another instance took the fill lock of this read and died (or is partitioned away).
    const req = parseRawItem({
      params: { table_handle: HANDLE },
      query: { ledger_version: '700' },
      contentType: 'application/json',
      accept: 'application/x-bcs',
      body: Buffer.from(JSON.stringify({ key: hex(PRESENT) })),
    });
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 0, lazyConnect: true });
    admin.on('error', () => {});
    try {
      await admin.connect();
      await admin.set(
        `deadline:lock:${sharedKey(cacheKeyText('node', 4, req, 700n, 0))}`,
        'another-instance',
        'PX',
        10_000,
      );
      // The node is slow but within the attempt timeout.
      node.faults.set({ mode: 'slow', delayMs: 1200, routes: ['raw_item'] });
      const started = performance.now();
      const reply = await rawItem(url, hex(PRESENT), { version: 700 });
      const ms = performance.now() - started;
      // Either the node's answer or a 503, but within the deadline (plus slack).
      expect([200, 503]).toContain(reply.status);
      expect(
        Math.round(ms),
        `reply after ${Math.round(ms)} ms (status ${reply.status}) with deadlineMs ${deadlineMs}`,
      ).toBeLessThanOrEqual(deadlineMs + SLACK_MS);
    } finally {
      admin.disconnect();
    }
  });
});
