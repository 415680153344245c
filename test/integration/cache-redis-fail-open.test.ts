// The Redis tier failing open, on this file's own redis-server (never the shared
// one on 6379): while Redis is killed, restarted or stalled every read is the
// node's answer, in time (api.md §7); and what an operator sees of it meanwhile:
// each client's state in /readyz, which stays ready, and ledger_proxy_redis_up.
import { describe, expect, it } from 'vitest';
import { simBalance } from '../../src/sim/index.js';
import {
  BALANCE,
  balanceAt,
  cacheOf,
  expectStatus,
  hex,
  itemAt,
  OWNER,
  PRESENT,
  PRESENT_KEYS,
  redisEntryKeys,
  tally,
  timed,
} from '../helpers/cache.js';
import { metricValue } from '../helpers/metrics.js';
import { COMMAND_TIMEOUT_MS, PREFIX, redisProxy } from '../helpers/redis-cache.js';
import { until } from '../helpers/until.js';
import { call, freePort, rawItem, sim, viewJson, type Reply } from '../helpers/proxy.js';
import { stallRedis, useRedisServer } from '../helpers/redis-server.js';

const server = useRedisServer({ flushEach: true });

describe('failing open', () => {
  it('killing redis-server mid-stream loses no reply; after a restart the proxy uses Redis again', async () => {
    const node = await sim({ versionsPerSecond: 20 });
    const { app, url } = await redisProxy(server.url, node);
    const TOTAL = 300;
    // A steady stream of requests, one every SPACING_MS, through the kill and the restart.
    const SPACING_MS = 10;
    const keys = PRESENT_KEYS.slice(0, 8);

    type Outcome = { i: number; kind: string; reply: Reply; ms: number; expected: Buffer };
    const one = async (i: number): Promise<Outcome> => {
      const key = keys[i % keys.length];
      // Pinned versions repeat every 40 requests, so the stream has hits as well as misses.
      const pinned = 500n + BigInt(i % 40);
      switch (i % 4) {
        case 0: {
          const { value, ms } = await timed(() => rawItem(url, hex(key), { version: pinned }));
          return { i, kind: 'pinned raw_item', reply: value, ms, expected: itemAt(key, pinned) };
        }
        case 1: {
          const { value, ms } = await timed(() => rawItem(url, hex(key)));
          const v = BigInt(value.headers['x-node-ledger-version'] ?? '0');
          return { i, kind: 'latest raw_item', reply: value, ms, expected: itemAt(key, v) };
        }
        case 2: {
          const { value, ms } = await timed(() => viewJson(url, BALANCE, [OWNER], { version: pinned }));
          return { i, kind: 'pinned view', reply: value, ms, expected: balanceAt(OWNER, pinned) };
        }
        default: {
          const { value, ms } = await timed(() => viewJson(url, BALANCE, [OWNER]));
          const v = BigInt(value.headers['x-node-ledger-version'] ?? '0');
          return {
            i,
            kind: 'latest view',
            reply: value,
            ms,
            expected: Buffer.from(JSON.stringify([String(simBalance(OWNER, v))])),
          };
        }
      }
    };

    const pending: Array<Promise<Outcome>> = [];
    const started = Date.now();
    let killedAt = -1;
    let restartedAt = -1;
    const readiness: boolean[] = [];
    for (let i = 0; i < TOTAL; i++) {
      pending.push(one(i));
      readiness.push(app.redis!.isReady());
      if (i === Math.floor(TOTAL / 3)) {
        killedAt = i;
        void server.kill();
      }
      if (i === Math.floor((2 * TOTAL) / 3)) {
        restartedAt = i;
        await server.restart();
      }
      await new Promise((r) => setTimeout(r, SPACING_MS));
    }
    const outcomes = await Promise.all(pending);
    const elapsed = Date.now() - started;
    expect(killedAt).toBeGreaterThan(0);
    expect(restartedAt).toBeGreaterThan(killedAt);
    expect(readiness.slice(0, killedAt).every(Boolean), 'Redis was in use before the kill').toBe(true);
    expect(readiness.slice(killedAt + 1, restartedAt).includes(false), 'the proxy saw Redis go away').toBe(true);

    const problems: string[] = [];
    for (const o of outcomes) {
      if (o.reply.status !== 200)
        problems.push(`#${o.i} ${o.kind}: HTTP ${o.reply.status} ${o.reply.body.toString('utf8').slice(0, 200)}`);
      else if (!o.reply.body.equals(o.expected))
        problems.push(`#${o.i} ${o.kind}: wrong body ${o.reply.body.toString('hex')}`);
      if (o.ms > 1000) problems.push(`#${o.i} ${o.kind}: took ${Math.round(o.ms)} ms`);
    }
    expect(problems, `${outcomes.length} replies over ${elapsed} ms`).toEqual([]);
    expect(outcomes.filter((o) => o.reply.status >= 500)).toHaveLength(0);
    const kinds = tally(outcomes.map((o) => o.reply));
    expect(kinds.MISS, JSON.stringify(kinds)).toBeGreaterThan(0);
    expect(kinds['HIT memory'], JSON.stringify(kinds)).toBeGreaterThan(0);

    // The restarted server is empty: a new pinned read must show up in it once the proxy reconnected.
    const client = server.client();
    let version = 300n;
    await until(
      async () => {
        expectStatus(await rawItem(url, hex(PRESENT), { version: version++ }), 200);
        return (await redisEntryKeys(client, PREFIX)).length > 0;
      },
      10_000,
      'a pinned read to be stored in the restarted Redis',
    );
    expect(app.redis!.isReady()).toBe(true);
  });

  it('with Redis stalled (DEBUG SLEEP), pinned misses still answer 200 from the node well under 1 s', async () => {
    const node = await sim();
    const { app, url } = await redisProxy(server.url, node);
    // Node time for one pinned miss, measured while Redis is fine.
    const warm = await timed(() => rawItem(url, hex(PRESENT_KEYS[0]), { version: 800 }));
    expectStatus(warm.value, 200);
    const nodeMs = warm.ms;

    const { awake } = await stallRedis(server.url, 2);
    expect(app.redis!.isReady(), 'a stalled server still looks connected').toBe(true);

    // Distinct pinned misses, all sent while the server sleeps.
    const misses: Array<{ label: string; send: () => Promise<Reply>; expected: Buffer }> = [
      ...[1n, 2n, 3n].map((i) => ({
        label: `raw_item @${810n + i}`,
        send: () => rawItem(url, hex(PRESENT), { version: 810n + i }),
        expected: itemAt(PRESENT, 810n + i),
      })),
      ...[1n, 2n].map((i) => ({
        label: `view @${820n + i}`,
        send: () => viewJson(url, BALANCE, [OWNER], { version: 820n + i }),
        expected: balanceAt(OWNER, 820n + i),
      })),
    ];
    const results = await Promise.all(
      misses.map(async (m) => {
        const { value, ms } = await timed(m.send);
        return { ...m, ms, reply: value };
      }),
    );

    await awake;

    const report = results
      .map((r) => `${r.label}: HTTP ${r.reply.status} ${cacheOf(r.reply)} in ${Math.round(r.ms)} ms`)
      .join('; ');
    for (const r of results) {
      expectStatus(r.reply, 200, r.label);
      expect(r.reply.body.equals(r.expected), r.label).toBe(true);
      expect(cacheOf(r.reply), r.label).toBe('MISS');
      expect(r.ms, `${r.label} (node time ${Math.round(nodeMs)} ms): ${report}`).toBeLessThan(1000);
    }
  });

  it('with Redis stalled, a pinned miss pays at most one command timeout (commandTimeoutMs + node time)', async () => {
    const node = await sim();
    const { url } = await redisProxy(server.url, node);
    const warm = await timed(() => rawItem(url, hex(PRESENT_KEYS[0]), { version: 800 }));
    expectStatus(warm.value, 200);

    const { awake } = await stallRedis(server.url, 2);
    const { value, ms } = await timed(() => rawItem(url, hex(PRESENT), { version: 811 }));
    await awake;
    expectStatus(value, 200);
    expect(value.body.equals(itemAt(PRESENT, 811n))).toBe(true);
    // 150 ms of scheduling slack on top of one command timeout and the node time.
    expect(
      ms,
      `pinned miss with Redis stalled took ${Math.round(ms)} ms (node time ${Math.round(warm.ms)} ms)`,
    ).toBeLessThan(COMMAND_TIMEOUT_MS + warm.ms + 150);
  });
});

describe("Redis's state, where an operator looks", () => {
  it('/readyz lists each client up, down or backing off, and stays ready; ledger_proxy_redis_up follows', async () => {
    const node = await sim();
    // With tenants, the limits' counters have a client of their own.
    const { app, url } = await redisProxy(server.url, node, {
      admin: { host: '127.0.0.1', port: await freePort() },
      tenants: { anonymous: { requestsPerSecond: 1000 } },
    });
    const readyz = async () => {
      const res = await call(app.adminUrl()!, '/readyz');
      const body = res.json() as { redis: Array<{ client: string; state: string }> };
      return { status: res.status, states: Object.fromEntries(body.redis.map((r) => [r.client, r.state])) };
    };
    const up = async (client: string) => metricValue(app, 'ledger_proxy_redis_up', { client });
    const clients = ['cache', 'fill-channel', 'limits'];

    await until(async () => (await readyz()).states.limits === 'up', 5000, 'the limits client connected');
    expect(await readyz()).toEqual({ status: 200, states: { cache: 'up', 'fill-channel': 'up', limits: 'up' } });
    for (const client of clients) expect(await up(client), client).toBe(1);

    // Stalled: still connected, but a command that timed out leaves it alone for a moment.
    const { awake } = await stallRedis(server.url, 2);
    let version = 700n;
    await until(
      async () => {
        expectStatus(await rawItem(url, hex(PRESENT), { version: version++ }), 200);
        return (await readyz()).states.cache === 'backing_off';
      },
      5000,
      'the cache client backing off after a command timed out',
    );
    expect((await readyz()).status).toBe(200);
    await awake;

    await server.kill();
    await until(async () => (await readyz()).states.cache === 'down', 5000, 'the cache client down');
    const down = await readyz();
    expect(down.status, 'Redis down never makes the proxy unready').toBe(200);
    expect(down.states).toEqual({ cache: 'down', 'fill-channel': 'down', limits: 'down' });
    for (const client of clients) expect(await up(client), client).toBe(0);
    // What reached the node: the read Redis could not answer.
    const before = node.counters.byRoute.raw_item ?? 0;
    expectStatus(await rawItem(url, hex(PRESENT), { version: 790n }), 200);
    expect(node.counters.byRoute.raw_item).toBe(before + 1);

    await server.restart();
    await until(
      async () => Object.values((await readyz()).states).every((state) => state === 'up'),
      10_000,
      'every client up again',
    );
    for (const client of clients) expect(await up(client), client).toBe(1);
  });
});
