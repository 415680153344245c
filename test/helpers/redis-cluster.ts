// A private Redis Cluster for a test file: three masters with a replica each, six
// redis-server processes on free ports with their node tables in a temporary
// directory, joined by `redis-cli --cluster create`. Tests move slots between
// masters under traffic (CLUSTER SETSLOT and MIGRATE, step by step, so a test can
// act while a slot is half moved) and stall a master (stallRedis on its url).
// useRedisCluster() registers its start and stop where it is called.
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from './free-port.js';
import { spawnRedisServer, stopRedisServer } from './redis-server.js';
import { until, within } from './until.js';

/** One master of the cluster, as the cluster saw it when asked. */
export interface ClusterMaster {
  id: string;
  port: number;
  url: string;
}

export interface RedisClusterHandle {
  /** every node's redis:// url: the seeds a cluster client is given */
  readonly seeds: string[];
  /** The masters, in the order of the slots they serve. */
  masters(): Promise<ClusterMaster[]>;
  /** The master serving `slot` now. */
  masterOf(slot: number): Promise<ClusterMaster>;
  /** The slot of a key (CLUSTER KEYSLOT). */
  slotOf(key: string): Promise<number>;
  /**
   * Moves each of `slots` to the master after its owner (in slot order), as
   * `redis-cli --cluster reshard` does, one step for all of them at a time: every
   * slot marked importing on its new owner and migrating on its old one; then `whileMigrating` runs (a slot is half moved: its owner answers
   * ASK for keys it no longer has); then each slot's keys are migrated and every
   * master is told its new owner (clients that knew the old one get MOVED).
   */
  moveSlots(slots: number[], whileMigrating?: () => Promise<void>): Promise<void>;
  /** A cluster client for the test to look at keys (it follows redirections), once ready; disconnected when the block ends. */
  client(): Promise<Cluster>;
}

const MASTERS = 3;
const NODES = 2 * MASTERS;
const CREATE_TIMEOUT_MS = 60_000;
const execFileAsync = promisify(execFile);

/**
 * A private Redis Cluster for the enclosing file or describe block: started before
 * its first test and stopped after its last.
 */
export function useRedisCluster(): RedisClusterHandle {
  let cluster: StartedCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, CREATE_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    await cluster?.stop();
    cluster = undefined;
  });
  const started = (): StartedCluster => {
    if (cluster === undefined)
      throw new Error('the cluster of useRedisCluster is there only in the tests and hooks of its block');
    return cluster;
  };
  return {
    get seeds() {
      return started().seeds;
    },
    masters: () => started().masters(),
    masterOf: (slot) => started().masterOf(slot),
    slotOf: (key) => started().slotOf(key),
    moveSlots: (slots, whileMigrating) => started().moveSlots(slots, whileMigrating),
    client: () => started().client(),
  };
}

interface StartedCluster extends RedisClusterHandle {
  stop(): Promise<void>;
}

async function startRedisCluster(): Promise<StartedCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  // The servers are killed at exit by redis-server.ts; their directory goes too.
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  const children: ChildProcess[] = [];
  const admins = new Map<number, Redis>();
  const clients: Cluster[] = [];
  const stop = async (): Promise<void> => {
    for (const c of clients.splice(0)) c.disconnect();
    for (const a of admins.values()) a.disconnect();
    admins.clear();
    await Promise.all(children.splice(0).map(stopRedisServer));
    process.off('exit', removeDir);
    removeDir();
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < NODES; i++) {
      const { port, child } = await startNode(dir);
      ports.push(port);
      children.push(child);
    }
    const addresses = ports.map((p) => `127.0.0.1:${p}`);
    await execFileAsync(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'],
      { timeout: CREATE_TIMEOUT_MS },
    );
    const admin = (port: number): Redis => {
      let client = admins.get(port);
      if (client === undefined) {
        client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0 });
        client.on('error', () => {});
        admins.set(port, client);
      }
      return client;
    };
    // Every node serves the cluster and sees the three masters, and each master has
    // its replica in sync. (CLUSTER SLOTS lists a replica only once gossip has
    // carried its replication offset to the node asked, seconds later: not waited for.)
    await until(
      async () => {
        for (const port of ports) {
          if (!((await admin(port).call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok')) return false;
          if (((await admin(port).call('CLUSTER', 'SLOTS')) as unknown[]).length !== MASTERS) return false;
        }
        const slots = (await admin(ports[0]).call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
        for (const [, , [, port]] of slots) {
          const replication = (await admin(port).call('INFO', 'replication')) as string;
          if (!replication.includes('connected_slaves:1') || !replication.includes('state=online')) return false;
        }
        return true;
      },
      CREATE_TIMEOUT_MS,
      'every node of the cluster to see three masters, each with its replica in sync',
    );
    const anyAdmin = (): Redis => admin(ports[0]);
    const masters = async (): Promise<ClusterMaster[]> => {
      const slots = (await anyAdmin().call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, string]]>;
      const seen = new Map<string, ClusterMaster>();
      for (const [, , [, port, id]] of [...slots].sort((a, b) => a[0] - b[0])) {
        if (!seen.has(id)) seen.set(id, { id, port, url: `redis://127.0.0.1:${port}` });
      }
      return [...seen.values()];
    };
    const masterOf = async (slot: number): Promise<ClusterMaster> => {
      const slots = (await anyAdmin().call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, string]]>;
      const range = slots.find(([from, to]) => slot >= from && slot <= to);
      if (range === undefined) throw new Error(`no master serves slot ${slot}`);
      const [, port, id] = range[2];
      return { id, port, url: `redis://127.0.0.1:${port}` };
    };
    const moveSlots = async (slots: number[], whileMigrating?: () => Promise<void>): Promise<void> => {
      const everyMaster = await masters();
      const moves: Array<{ slot: number; from: ClusterMaster; to: ClusterMaster }> = [];
      for (const slot of new Set(slots)) {
        const from = await masterOf(slot);
        const to = everyMaster[(everyMaster.findIndex((m) => m.id === from.id) + 1) % everyMaster.length];
        moves.push({ slot, from, to });
      }
      for (const { slot, from, to } of moves) {
        await admin(to.port).call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', from.id);
        await admin(from.port).call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', to.id);
      }
      await whileMigrating?.();
      // The moves end one new owner at a time, each seen by every node before the next.
      // A node takes a slot's new owner from gossip only when its config epoch is above
      // the old owner's; the new owner bumps its epoch when it takes the slot. Moving
      // slots round the masters at once (A to B, B to C, C to A) would leave A's epoch
      // above B's before a replica of A heard B took A's slot, and that replica would
      // then never take it: a move that never ends.
      for (const owner of new Set(moves.map((m) => m.to.id))) {
        const group = moves.filter((m) => m.to.id === owner);
        for (const { slot, from, to } of group) {
          for (;;) {
            const keys = (await admin(from.port).call('CLUSTER', 'GETKEYSINSLOT', String(slot), '100')) as string[];
            if (keys.length === 0) break;
            await admin(from.port).call('MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'KEYS', ...keys);
          }
          // The new owner first, so it never refuses the slot while the old one redirects to it.
          for (const master of [to, from, ...everyMaster.filter((m) => m.id !== to.id && m.id !== from.id)]) {
            await admin(master.port).call('CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id);
          }
        }
        // The move ends when every node says so: replicas learn it by gossip, and a client
        // that asks one for its slot map meanwhile is sent back to the old owner.
        const stale = async (): Promise<string | null> => {
          for (const port of ports) {
            const view = (await admin(port).call('CLUSTER', 'SLOTS')) as Array<
              [number, number, [string, number, string]]
            >;
            for (const { slot, to } of group) {
              const seen = view.find(([lo, hi]) => slot >= lo && slot <= hi)?.[2];
              if (seen?.[2] !== to.id) return `node ${port} sees slot ${slot} at ${seen?.[1]}, not ${to.port}`;
            }
          }
          return null;
        };
        let last: string | null = null;
        await until(
          async () => (last = await stale()) === null,
          CREATE_TIMEOUT_MS,
          () => `every node of the cluster to see the slots moved (${last})`,
        );
      }
    };
    return {
      seeds: ports.map((p) => `redis://127.0.0.1:${p}`),
      masters,
      masterOf,
      slotOf: async (key) => Number(await anyAdmin().call('CLUSTER', 'KEYSLOT', key)),
      moveSlots,
      client: async () => {
        const client = new Cluster(
          ports.map((port) => ({ host: '127.0.0.1', port })),
          { redisOptions: { maxRetriesPerRequest: 1 } },
        );
        client.on('error', () => {});
        clients.push(client);
        // Ready before a test stalls a master: its first slot map may otherwise be asked of that one.
        await within(
          new Promise((resolve) => client.once('ready', resolve)),
          CREATE_TIMEOUT_MS,
          'the test’s cluster client ready',
        );
        return client;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One cluster-enabled node on a free port and a free bus port (another process may take a port first: a few tries). */
async function startNode(dir: string): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const [port, busPort] = [await freePort(), await freePort()];
    // A replica's first sync starts at once (not after the default 5 s wait for more replicas).
    const args = [
      '--cluster-enabled',
      'yes',
      '--cluster-port',
      String(busPort),
      '--cluster-announce-ip',
      '127.0.0.1',
      '--repl-diskless-sync-delay',
      '0',
    ];
    args.push('--dir', dir, '--cluster-config-file', `nodes-${port}.conf`);
    try {
      return { port, child: await spawnRedisServer(port, args) };
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}
