// Two instances on a Redis Cluster of three masters (each with a replica) keep
// sharing while the cluster changes under them:
// - slots move under traffic: a write made while its slot is half moved (the old
//   owner answers ASK) lands in the shared tier, and a read from an instance that
//   still knows the old owner (it gets MOVED) is a hit;
// - one master stalls: the keys the other masters serve are still written by one
//   instance and hit by the other, while the stalled master's keys go to a node.
import { expect, it } from 'vitest';
import { cacheKeyText, sharedKey } from '../../src/cache/key.js';
import { parseRawItem } from '../../src/routes/parse-read.js';
import type { SimNode } from '../../src/sim/index.js';
import { PRESENT, hex, itemAt } from '../helpers/cache.js';
import { HANDLE, type ProxyHandle, proxy, rawItem, sim } from '../helpers/proxy.js';
import { stallRedis } from '../helpers/redis-server.js';
import { type ClusterMaster, useRedisCluster } from '../helpers/redis-cluster.js';
import { until } from '../helpers/until.js';

const PREFIX = 'shared:';
/** Long enough that a loaded machine never turns a healthy master's answer into a timeout; far shorter than STALL_SECONDS. */
const COMMAND_TIMEOUT_MS = 1000;
/** How long the stalled master sleeps: each instance's first read on it waits out a command timeout, and the rest comes after. */
const STALL_SECONDS = 6;

const cluster = useRedisCluster();
/**
 * A slot move ends when every node of the cluster has heard of it by gossip, which
 * useRedisCluster's moveSlots waits up to a minute for, per new owner: the test that
 * moves slots is given longer than one such wait, so a slow gossip on a loaded
 * machine is waited out, and a stuck one fails naming the node and slot it waited
 * for rather than as a test timeout.
 */
const MOVING_TEST_TIMEOUT_MS = 90_000;

/** A proxy in front of node on the cluster, connected to it. */
async function clusterProxy(node: SimNode): Promise<ProxyHandle> {
  const handle = await proxy([node], {
    routing: { probeIntervalMs: 50 },
    cache: {
      redis: {
        cluster: cluster.seeds,
        keyPrefix: PREFIX,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        fillLock: true,
        fillLockMs: 2000,
      },
    },
  });
  expect(handle.app.redis?.isReady(), 'the proxy is connected to the cluster').toBe(true);
  return handle;
}

/** The Redis key of the entry of a raw_item read of PRESENT at version, as an instance on generation stores it. */
function entryKey(version: number, generation: number): string {
  const req = parseRawItem({
    params: { table_handle: HANDLE },
    query: { ledger_version: String(version) },
    contentType: 'application/json',
    accept: 'application/x-bcs',
    body: Buffer.from(JSON.stringify({ key: hex(PRESENT) })),
  });
  return PREFIX + sharedKey(cacheKeyText('node', 4, req, BigInt(version), generation));
}

/** Reads PRESENT at each version on url and checks every answer; resolves with the replies' X-Cache. */
async function readAll(url: string, versions: number[]): Promise<string[]> {
  const replies = await Promise.all(versions.map((v) => rawItem(url, hex(PRESENT), { version: v })));
  replies.forEach((reply, i) => {
    expect(reply.status, `read at ${versions[i]}`).toBe(200);
    expect(reply.body.equals(itemAt(PRESENT, BigInt(versions[i]))), `answer at ${versions[i]}`).toBe(true);
  });
  return replies.map((r) => r.headers['x-cache']);
}

const nodeReads = (node: SimNode): number => node.counters.byRoute.raw_item;

it(
  'writes made while their slots move reach the shared tier, and the other instance hits them after the move',
  async () => {
    const node = await sim();
    const a = await clusterProxy(node);
    const b = await clusterProxy(node);
    const generation = a.app.redis!.generation.current;
    const versions = Array.from({ length: 40 }, (_, i) => 600 + i);
    const keys = versions.map((v) => entryKey(v, generation));
    const slots = await Promise.all(keys.map((k) => cluster.slotOf(k)));
    const look = await cluster.client();
    const stored = async (): Promise<number> =>
      (await Promise.all(keys.map((k) => look.exists(k)))).reduce((n, e) => n + e, 0);
    const ownersBefore = await Promise.all(slots.map((slot) => cluster.masterOf(slot)));

    // Each entry's slot moves to another master. While the slots are half moved, one
    // instance misses every key at once (its writes meet ASK), and then the move ends.
    await cluster.moveSlots(slots, async () => {
      const before = nodeReads(node);
      await readAll(a.url, versions);
      expect(nodeReads(node) - before, 'node calls of the instance that filled').toBe(versions.length);
      let found = 0;
      await until(
        async () => (found = await stored()) === keys.length,
        5000,
        () => `every entry written while its slot moved (${found} of ${keys.length})`,
      );
    });
    for (const [i, slot] of slots.entries())
      expect((await cluster.masterOf(slot)).id, `the owner of slot ${slot} after the move`).not.toBe(
        ownersBefore[i].id,
      );

    // The other instance still knows the old owners: every read is a redirected hit.
    const before = nodeReads(node);
    const cache = await readAll(b.url, versions);
    expect(nodeReads(node) - before, `node calls of the other instance (X-Cache: ${cache.join(',')})`).toBe(0);
    expect(await stored(), 'entries after the move').toBe(keys.length);
  },
  MOVING_TEST_TIMEOUT_MS,
);

it('a stalled master costs only the keys it serves: the other masters still share between instances', async () => {
  const node = await sim();
  const a = await clusterProxy(node);
  const b = await clusterProxy(node);
  const generation = a.app.redis!.generation.current;
  const [stalled] = await cluster.masters();
  const onStalled: number[] = [];
  const elsewhere: number[] = [];
  for (let version = 700; elsewhere.length < 20 || onStalled.length < 2; version++) {
    const owner: ClusterMaster = await cluster.masterOf(await cluster.slotOf(entryKey(version, generation)));
    (owner.id === stalled.id ? onStalled : elsewhere).push(version);
  }
  const healthy = elsewhere.slice(0, 20);
  const look = await cluster.client();
  const stored = async (): Promise<number> =>
    (await Promise.all(healthy.map((v) => look.exists(entryKey(v, generation))))).reduce((n, e) => n + e, 0);

  const { awake } = await stallRedis(stalled.url, STALL_SECONDS);
  let woke = false;
  void awake.then(() => (woke = true));
  try {
    // Each instance first meets the stalled master (a read whose entry it serves),
    // then misses, or hits, keys the other masters serve.
    await readAll(a.url, [onStalled[0]]);
    await readAll(a.url, healthy);
    let found = 0;
    await until(
      async () => (found = await stored()) === healthy.length,
      3000,
      () => `the entries on the healthy masters written (${found} of ${healthy.length})`,
    );
    await readAll(b.url, [onStalled[1]]);
    const before = nodeReads(node);
    const cache = await readAll(b.url, healthy);
    expect(
      nodeReads(node) - before,
      `node calls of the other instance for keys on healthy masters (X-Cache: ${cache.join(',')})`,
    ).toBe(0);
    expect(woke, 'the master was still stalled when the other instance read').toBe(false);
  } finally {
    await awake;
  }
});
