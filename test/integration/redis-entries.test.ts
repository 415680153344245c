// Redis entries that prove themselves, on this file's own redis-server: an entry
// that is cut short, bit-flipped, foreign or of an older format is a miss, answered
// with the node's bytes and rewritten, so the next read is a good HIT from Redis;
// it is counted, and it never makes the proxy skip Redis for the reads after it.
import { gunzipSync } from 'node:zlib';
import type { Redis } from 'ioredis';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeAnswer } from '../../src/cache/redis/codec.js';
import type { StoredAnswer } from '../../src/model/read.js';
import { cacheOf, expectStatus, hex, itemAt, PRESENT_KEYS, redisEntryKeys, served } from '../helpers/cache.js';
import { type ProxyHandle, proxy, rawItem, type Reply, sim } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { metricValue } from '../helpers/metrics.js';

const PREFIX = 'entries:';

const server = useRedisServer({ flushEach: true });
let admin: Redis;

beforeAll(() => {
  admin = server.client();
});

function redisProxy(node: Awaited<ReturnType<typeof sim>>): Promise<ProxyHandle> {
  return proxy([node], {
    routing: { probeIntervalMs: 50 },
    cache: {
      memory: { maxBytes: 1_000_000 },
      redis: { url: server.url, keyPrefix: PREFIX, commandTimeoutMs: 500, fillLock: true, fillLockMs: 2000 },
    },
  });
}

/** A seeded stream of bytes: "random", and the same on every run. */
function noise(length: number, seed = 7): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = (seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16;
  return out;
}

function flipped(entry: Buffer, at: number): Buffer {
  const copy = Buffer.from(entry);
  copy[at] ^= 0x10;
  return copy;
}

/**
 * The same answer in the first entry format (format byte 1: status, version, gas,
 * content type, body; no length, no checksum), as an older release wrote it.
 */
function oldFormat(answer: StoredAnswer): Buffer {
  const gas = Buffer.from(answer.gasUsed ?? '', 'latin1');
  const type = Buffer.from(answer.contentType, 'utf8');
  const head = Buffer.alloc(12);
  head.writeUInt8(1, 0);
  head.writeUInt16BE(answer.status, 1);
  head.writeBigUInt64BE(answer.version, 3);
  head.writeUInt8(gas.length, 11);
  const typeLength = Buffer.alloc(2);
  typeLength.writeUInt16BE(type.length);
  return Buffer.concat([head, gas, typeLength, type, answer.body]);
}

const CORRUPTIONS: ReadonlyArray<readonly [string, (entry: Buffer) => Buffer]> = [
  ['truncated by half', (e) => e.subarray(0, Math.floor(e.length / 2))],
  ['missing its last byte', (e) => e.subarray(0, e.length - 1)],
  ['a bit flipped in the body', (e) => flipped(e, e.length - 6)],
  ['a bit flipped in the status', (e) => flipped(e, 2)],
  ['random bytes', (e) => noise(e.length)],
  ['empty', () => Buffer.alloc(0)],
  ['an old-format entry', (e) => oldFormat(decodeAnswer(e)!)],
];

/** Reads on `writer` so the answer lands in Redis, and returns its Redis key and entry. */
async function written(read: () => Promise<{ status: number }>): Promise<{ key: string; entry: Buffer }> {
  const before = new Set(await redisEntryKeys(admin, PREFIX));
  expect((await read()).status, 'the first read').toBe(200);
  let added: string[] = [];
  await until(
    async () => (added = (await redisEntryKeys(admin, PREFIX)).filter((k) => !before.has(k))).length > 0,
    2000,
    'the entry in Redis',
  );
  expect(added).toHaveLength(1);
  return { key: added[0], entry: (await admin.getBuffer(added[0]))! };
}

describe('an entry that fails its check', () => {
  it.each(CORRUPTIONS.map(([what, corrupt], i) => [what, corrupt, i] as const))(
    '%s: a miss answered by the node, rewritten, then a redis HIT elsewhere',
    async (_what, corrupt, i) => {
      const node = await sim();
      const [writer, a, b] = [await redisProxy(node), await redisProxy(node), await redisProxy(node)];
      const key = PRESENT_KEYS[i % PRESENT_KEYS.length];
      const version = 900 + i;
      const expected = itemAt(key, BigInt(version));
      const read = (p: ProxyHandle): Promise<Reply> => rawItem(p.url, hex(key), { version });
      const entry = await written(() => read(writer));
      await admin.set(entry.key, corrupt(entry.entry));

      const calls = served(node);
      const onA = await read(a);
      expectStatus(onA, 200);
      expect(onA.body.equals(expected), `body ${onA.body.toString('hex')}`).toBe(true);
      expect(cacheOf(onA)).toBe('MISS');
      expect(served(node), 'the node answered').toBe(calls + 1);

      await until(
        async () => decodeAnswer((await admin.getBuffer(entry.key)) ?? Buffer.alloc(0))?.body.equals(expected) === true,
        2000,
        'the entry rewritten',
      );
      const onB = await read(b);
      expect(cacheOf(onB)).toBe('HIT redis');
      expect(onB.body.equals(expected)).toBe(true);
      expect(served(node), 'no node call for B').toBe(calls + 1);

      expect(await metricValue(a.app, 'ledger_proxy_redis_corrupt_total')).toBe(1);
      expect(await metricValue(a.app, 'ledger_proxy_redis_errors_total'), 'a bad entry is no Redis failure').toBe(0);
    },
  );

  it('does not make the proxy skip Redis: an intact entry read right after it is a redis HIT', async () => {
    const node = await sim();
    const [writer, a] = [await redisProxy(node), await redisProxy(node)];
    const read = (p: ProxyHandle, key: Buffer): Promise<Reply> => rawItem(p.url, hex(key), { version: 950 });
    const [bad, good] = PRESENT_KEYS;
    const corrupted = await written(() => read(writer, bad));
    await written(() => read(writer, good));
    await admin.set(corrupted.key, noise(corrupted.entry.length));

    expect(cacheOf(await read(a, bad))).toBe('MISS');
    const intact = await read(a, good);
    expect(cacheOf(intact)).toBe('HIT redis');
    expect(intact.body.equals(itemAt(good, 950n))).toBe(true);
  });

  it("the memory tier's gzip copy is made from the node's bytes, not the entry's", async () => {
    const node = await sim();
    const [writer, a] = [await redisProxy(node), await redisProxy(node)];
    // A view whose answer (the type's name) is over 1 KiB: it gets a gzip copy.
    const view = (p: ProxyHandle, acceptEncoding?: string) =>
      request(`${p.url}/v1/view?ledger_version=960`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
        },
        body: JSON.stringify({
          function: '0x1::sim::type_name',
          type_arguments: [`0x1::${'a'.repeat(1500)}::T`],
          arguments: [],
        }),
      });
    const entry = await written(async () => {
      const res = await view(writer);
      await res.body.arrayBuffer();
      return { status: res.statusCode };
    });
    const expected = decodeAnswer(entry.entry)!.body;
    expect(expected.length).toBeGreaterThan(1024);
    await admin.set(entry.key, entry.entry.subarray(0, entry.entry.length - 300));

    let gzipped: Buffer | undefined;
    await until(
      async () => {
        const res = await view(a, 'gzip');
        const raw = Buffer.from(await res.body.arrayBuffer());
        if (res.headers['content-encoding'] !== 'gzip') return false;
        gzipped = raw;
        return true;
      },
      2000,
      'a gzip reply from the memory tier',
    );
    expect(gunzipSync(gzipped!).equals(expected)).toBe(true);
  });
});
