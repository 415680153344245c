// A finding of the differential run (two proxies sharing Redis), reduced: a pinned
// read whose Redis lookup is in flight while the proxy learns that its version was
// pruned is still answered from Redis, with ledger headers whose oldest version
// says the version is pruned. A node asked at that moment answers 410, and api.md §7
// says a version below the known prune line gets 410 "cached or not".
//
// Where: src/serve/read-through.ts, readPinned/fillPinned. nodes.isPruned(version)
// is checked once, before the memory lookup; the Redis lookup (and the wait for
// another instance's fill, and a shared single-flight) is asynchronous, and the
// answer it brings back is served without a second look. Fix: check
// isPruned(version) again when the filled answer is turned into a reply (in the
// promise.then of readPinned) and throw NodeError.pruned(version) then.
//
// This test fails until that is fixed.
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { simTableItem } from '../../src/sim/index.js';
import { startStack, type Stack } from '../helpers/fuzz-stack.js';
import { stallRedis, useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { HANDLE } from './harness.js';

const KEY = Buffer.from([1, 0x5a]);

async function readAt(
  base: string,
  version: bigint,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const res = await request(`${base}/v1/tables/${HANDLE}/raw_item?ledger_version=${version}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
    body: JSON.stringify({ key: '0x' + KEY.toString('hex') }),
  });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

describe('a pinned read answered from Redis after the proxy learned of the prune', () => {
  const redis = useRedisServer();
  let filler: Stack;
  let reader: Stack;
  let client: Redis;

  beforeAll(async () => {
    // Commands may take 2 s, so a stalled Redis is slow rather than skipped; probes
    // every 25 ms, so the prune is learned while the lookup waits.
    const overrides = {
      routing: { probeIntervalMs: 25 },
      cache: { redis: { url: redis.url, commandTimeoutMs: 2000 } },
    };
    filler = await startStack({ sim: { startVersion: 1000n }, overrides });
    reader = await startStack({ overrides: { ...overrides, upstreams: [{ url: filler.node.url, name: 'node0' }] } });
    client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  });

  afterAll(async () => {
    client?.disconnect();
    await reader?.close();
    await filler?.close();
  });

  it('answers 410 version_pruned, not the stored answer under headers that say it is pruned', async () => {
    const version = 900n;
    const item = simTableItem(HANDLE, KEY, version);
    expect(item, 'the key has an item').not.toBeNull();
    // One proxy reads N: the answer is stored in Redis for every instance.
    const first = await readAt(filler.url, version);
    expect(first.status).toBe(200);
    await until(async () => (await client.dbsize()) > 0, 2000, 'the answer stored in Redis');

    // Redis stalls for 600 ms; the other proxy (memory miss) looks N up there meanwhile.
    const { awake } = await stallRedis(redis.url, 0.6);
    const lookups = vi.spyOn(reader.app.redis!, 'get');
    const pending = readAt(reader.url, version);
    await until(() => lookups.mock.calls.length > 0, 2000, "the reader's lookup in Redis");
    // The node prunes past N; the reader's probes learn it long before Redis answers.
    filler.node.ledger.pruneTo(950n);
    const reply = await pending;
    await awake;

    const oldest = BigInt(String(reply.headers['x-node-ledger-oldest-version']));
    const description = `${reply.status} x-cache=${String(reply.headers['x-cache'])} tier=${String(reply.headers['x-cache-tier'])} oldest header ${oldest}, body ${reply.body.toString('latin1').slice(0, 120)}`;
    expect(oldest, `the reader learned of the prune: ${description}`).toBe(950n);
    expect(reply.status, `a version below the oldest in the reply's own headers: ${description}`).toBe(410);
    expect(JSON.parse(reply.body.toString('utf8'))).toEqual({
      message: `Ledger version(${version}) has been pruned`,
      error_code: 'version_pruned',
      vm_error_code: null,
    });
  });
});
