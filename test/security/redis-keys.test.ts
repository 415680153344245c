// Redis keys are always the configured prefix plus a sha256: after reads whose
// handles, keys, functions and arguments carry odd text, `KEYS *` on the suite's
// own redis-server lists only `<prefix><64 hex>` (and `<prefix>lock:<64 hex>`
// while a fill holds its lock, `<prefix>fill:<64 hex>` for a second after it,
// the purge index, `<prefix>purge:index:<generation>:<route family>:<hour>`,
// whose members are `<64 hex>:<version>`, and the purge state `<prefix>purge`),
// and nothing a client sent.
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, proxy, rawItem, sim, viewJson } from '../helpers/proxy.js';
import { viewBcsRequest, u64le } from '../helpers/cache.js';
import { flushAll, useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { httpRequest, rawHttp } from '../helpers/raw-socket.js';

const PREFIX = 'sec-test:';
const ENTRY = /^sec-test:[0-9a-f]{64}$/;
const LOCK = /^sec-test:lock:[0-9a-f]{64}$/;
/** A fill's outcome, kept briefly for the instances waiting for it. */
const FILL = /^sec-test:fill:[0-9a-f]{64}$/;
/** The tenants' limit counters: under the prefix, keyed by a hash of the tenant and client address, and the window. */
const RATE = /^sec-test:limits:(?:requests|node-units):[0-9a-f]{64}:[0-9]+$/;
/** The purge index: a set per generation, route family and hour, beside the entries. */
const INDEX = /^sec-test:purge:index:[0-9]+:(?:raw_item|view|accounts|tables|transactions|blocks):[0-9]+$/;
const INDEX_MEMBER = /^[0-9a-f]{64}:[0-9]+$/;
/** The cache generation and count of purges (written by a purge). */
const PURGE_STATE = /^sec-test:purge$/;

const redis = useRedisServer();
let admin: Redis;

beforeAll(() => {
  admin = redis.client();
});

/** Client text that must never show up in a key. */
const MARKERS = ['evil', 'EVIL', '*', '?', '[', ' ', '\\', 'lock:', '..', '{', 'x-forwarded'];

async function expectOnlyHashedKeys(keys: string[], label: string): Promise<void> {
  for (const key of keys) {
    expect(
      ENTRY.test(key) || LOCK.test(key) || FILL.test(key) || RATE.test(key) || INDEX.test(key) || PURGE_STATE.test(key),
      `${label}: Redis key ${JSON.stringify(key)}`,
    ).toBe(true);
    if (INDEX.test(key))
      for (const member of await admin.zrange(key, 0, -1))
        expect(member, `${label}: a member of ${key}`).toMatch(INDEX_MEMBER);
    const hashed = key.slice(key.lastIndexOf(':') + 1);
    for (const m of MARKERS) expect(hashed, `${label}: key ${key}`).not.toContain(m);
  }
}

/** Reads whose input is odd but valid (so the answers are cached), or invalid (so nothing is). */
async function oddReads(url: string): Promise<void> {
  const replies = await Promise.all([
    rawItem(url, '0x01', { version: 990, handle: '0x1' }),
    rawItem(url, '0x01', { version: 990, handle: '0X' + 'AB'.repeat(32) }),
    rawItem(url, '0xDEADBEEF', { version: 991 }),
    rawItem(url, '0x2a2a2a2a', { version: '00992' }),
    rawItem(url, '0x01'),
    viewJson(url, '0x1::sim::add', ['1', '2'], { version: 990 }),
    viewJson(url, '0x1::sim::balance', ['0x' + 'e'.repeat(64)], { version: 993 }),
    viewJson(url, '0x1::sim::balance', ['0x1']),
    viewJson(url, '0x1::sim::always_abort', [], { version: 994 }),
    viewJson(url, '0x1::sim::no_such_fn', ['*evil*'], { version: 995 }),
    viewJson(url, '0x1::sim::add', ['1', '2'], { version: 996, accept: 'application/x-bcs' }),
    viewBcsRequest(url, 'add', [u64le(2n), u64le(40n)], { version: 997 }),
    call(url, '/v1/view?ledger_version=998', {
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: ' { "arguments" : ["7"], "type_arguments":[], "function":"0x1::sim::pair", "x-evil": "lock:*[?]{}\\\\.." } ',
    }),
    // Invalid: refused before any cache tier.
    rawItem(url, '0x01', { version: 990, handle: 'evil*' }),
    rawItem(url, 'evil', { version: 990 }),
    viewJson(url, 'evil::lock::*', [], { version: 990 }),
    call(url, '/v1/view?ledger_version=990', {
      headers: { 'content-type': 'application/json' },
      body: '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"],"evil":',
    }),
  ]);
  for (const r of replies) expect([200, 400, 403, 404], r.body.toString()).toContain(r.status);
}

describe('Redis keys are prefixed hashes, never client input', () => {
  it('after odd reads, KEYS * lists only <prefix><64 hex>', async () => {
    await flushAll(redis.url);
    const node = await sim();
    const { url } = await proxy([node], { cache: { redis: { url: redis.url, keyPrefix: PREFIX } } });
    await oddReads(url);
    // Writes to Redis happen in the background: wait until they settle (no fill holds its lock).
    let keys: string[] = [];
    await until(
      async () => {
        keys = await admin.keys('*');
        return (
          keys.length > 0 && keys.every((k) => ENTRY.test(k) || FILL.test(k) || INDEX.test(k) || PURGE_STATE.test(k))
        );
      },
      2000,
      'the background writes settled',
    );
    expect(keys.length, 'cached entries in Redis').toBeGreaterThanOrEqual(10);
    await expectOnlyHashedKeys(keys, 'after reads');
    expect(
      keys.filter((k) => LOCK.test(k)),
      'no fill lock left behind',
    ).toEqual([]);
  });

  it('while fills hold their locks (a slow node), KEYS * lists only <prefix><64 hex> and <prefix>lock:<64 hex>', async () => {
    await flushAll(redis.url);
    const node = await sim();
    const { url } = await proxy([node], { cache: { redis: { url: redis.url, keyPrefix: PREFIX } } });
    node.faults.set({ mode: 'slow', delayMs: 400, routes: ['raw_item', 'view'] });
    const reads = oddReads(url);
    // Every sample of the keys while the fills run holds only hashes; one of them shows a lock.
    await until(
      async () => {
        const keys = await admin.keys('*');
        await expectOnlyHashedKeys(keys, 'during fills');
        return keys.some((k) => LOCK.test(k));
      },
      3000,
      'a fill lock seen while the node was slow',
    );
    await reads;
    await expectOnlyHashedKeys(await admin.keys('*'), 'after fills');
  });

  // The tenants' limits count requests in the same Redis. Their keys must follow
  // the same rule: cache.redis.keyPrefix is documented as the "prefix of every
  // key", and a client address (X-Forwarded-For, with trustProxy) is client input.
  it('with tenants and trustProxy, the limit counters too are <prefix><64 hex>, never a client address', async () => {
    await flushAll(redis.url);
    const node = await sim();
    const { url } = await proxy([node], {
      server: { host: '127.0.0.1', port: 0, trustProxy: true },
      cache: { redis: { url: redis.url, keyPrefix: PREFIX } },
      tenants: { anonymous: { requestsPerSecond: 1000, nodeUnitsPerMinute: 100_000 } },
    });
    for (const xff of ['evil*lock:[?]', '6.6.6.6', 'x-forwarded-evil ' + 'A'.repeat(200)]) {
      const reply = await rawHttp(
        url,
        httpRequest(
          'POST /v1/view?ledger_version=990 HTTP/1.1',
          [
            'host: x',
            'content-type: application/json',
            'accept: application/json',
            `x-forwarded-for: ${xff}`,
            'connection: close',
          ],
          '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}',
        ),
      );
      expect(reply.status, reply.body.toString()).toBe(200);
    }
    // The counts reach Redis every 100 ms: wait for the limit counters of the three addresses.
    let keys: string[] = [];
    await until(
      async () => {
        keys = await admin.keys('*');
        return keys.filter((k) => RATE.test(k)).length >= 3;
      },
      2000,
      'the limit counters in Redis',
    );
    await expectOnlyHashedKeys(keys, 'with rate limiting in Redis');
  });
});
