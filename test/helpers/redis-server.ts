// A private redis-server per test file (or describe block), on a free port, so a
// test may kill, stall or restart it. The shared Redis on 6379 is never used by
// tests. useRedisServer() registers its start and stop where it is called.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { freePort } from './free-port.js';
import { until } from './until.js';

export interface RedisServerHandle {
  url: string;
  port: number;
  /** SIGKILL the server and wait until it has exited (as a crash would). */
  kill(): Promise<void>;
  /** Start it again on the same port (after kill) and wait until it answers PING. */
  restart(): Promise<void>;
  /** Kill it for good; call in afterAll. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 5000;
const running = new Set<ChildProcess>();
const clusterDirs = new Set<string>();
// A test process that ends without afterAll must not leave servers or directories behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of clusterDirs) rmSync(dir, { recursive: true, force: true });
});

export interface RedisServerOptions {
  /**
   * Run as a one-node Redis Cluster owning all 16384 slots, to exercise cluster
   * clients. Its node table lives in a temporary directory removed by stop().
   */
  cluster?: boolean;
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  if (spawnSync('redis-server', ['--version']).error !== undefined) {
    throw new Error('redis-server is not on PATH; install it (apt-get install -y redis-server)');
  }
  // Another process can take a port between probe and bind; try a few.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await serve(port, options.cluster === true);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

export interface UseRedisServerOptions extends RedisServerOptions {
  /** FLUSHALL before each test of the block, so each starts on an empty server. */
  flushEach?: boolean;
}

export interface UsedRedisServer extends RedisServerHandle {
  /** A client of the server for the test to look at it (errors are left to its commands); disconnected when the block ends. */
  client(): Redis;
}

/**
 * A private redis-server for the enclosing file or describe block: started before
 * its first test and stopped after its last. The handle reads the server started
 * for the block, so it may be kept in a const where the block is declared and used
 * in its tests and hooks.
 */
export function useRedisServer(options: UseRedisServerOptions = {}): UsedRedisServer {
  let server: RedisServerHandle | undefined;
  const clients: Redis[] = [];
  beforeAll(async () => {
    server = await startRedisServer(options);
  });
  afterAll(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    await server?.stop();
    server = undefined;
  });
  if (options.flushEach === true) beforeEach(() => flushAll(started().url));
  const started = (): RedisServerHandle => {
    if (server === undefined)
      throw new Error('the redis-server of useRedisServer is there only in the tests and hooks of its block');
    return server;
  };
  return {
    get url() {
      return started().url;
    },
    get port() {
      return started().port;
    },
    kill: () => started().kill(),
    restart: () => started().restart(),
    stop: () => started().stop(),
    client: () => {
      const client = new Redis(started().url, { maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      clients.push(client);
      return client;
    },
  };
}

async function serve(port: number, cluster: boolean): Promise<RedisServerHandle> {
  const dir = cluster ? mkdtempSync(join(tmpdir(), 'redis-cluster-')) : undefined;
  if (dir !== undefined) clusterDirs.add(dir);
  const removeDir = (): void => {
    if (dir === undefined) return;
    rmSync(dir, { recursive: true, force: true });
    clusterDirs.delete(dir);
  };
  let child: ChildProcess | undefined;
  try {
    child = await launch(port, dir);
  } catch (err) {
    removeDir();
    throw err;
  }
  let stopped = false;
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c !== undefined) await stopRedisServer(c);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: async () => {
      if (stopped) throw new Error('redis-server was stopped');
      await kill();
      child = await launch(port, dir);
    },
    stop: async () => {
      stopped = true;
      await kill();
      removeDir();
    },
  };
}

/** Starts redis-server; with clusterDir, as a cluster node that owns every slot. */
async function launch(port: number, clusterDir?: string): Promise<ChildProcess> {
  if (clusterDir === undefined) return spawnRedisServer(port);
  // A lone node has met no peer to learn its address from, and would list itself
  // in CLUSTER SLOTS with an empty host, which cluster clients skip.
  const args = [
    '--cluster-enabled',
    'yes',
    '--cluster-announce-ip',
    '127.0.0.1',
    '--dir',
    clusterDir,
    '--cluster-config-file',
    `nodes-${port}.conf`,
  ];
  const started = performance.now();
  const child = await spawnRedisServer(port, args);
  try {
    await assignAllSlots(port, READY_TIMEOUT_MS - (performance.now() - started));
    return child;
  } catch (err) {
    await stopRedisServer(child);
    throw new Error(`redis-server on port ${port} did not become ready: ${String(err)}`);
  }
}

/**
 * Starts a redis-server on port with `extra` arguments and resolves once it answers
 * PING (rejects with its output when it does not). Killed when the test process
 * exits, if stopRedisServer was not called first. For the helpers that run servers.
 */
export async function spawnRedisServer(port: number, extra: string[] = []): Promise<ChildProcess> {
  // `local` lets tests stall the server with DEBUG SLEEP.
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--enable-debug-command',
    'local',
    ...extra,
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => running.delete(child));

  let gone = false;
  void exited.then(() => (gone = true));
  try {
    await until(async () => gone || (await ping(port)), READY_TIMEOUT_MS, 'redis-server to answer PING');
    if (!gone) return child;
  } catch (err) {
    output += `\n${String(err)}`;
  }
  await stopRedisServer(child);
  throw new Error(`redis-server on port ${port} did not become ready:\n${output}`);
}

/** Gives the node every slot (a restart keeps them in its nodes file) and waits for cluster_state:ok. */
async function assignAllSlots(port: number, timeoutMs: number): Promise<void> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    const slots = (await client.call('CLUSTER', 'SLOTS')) as unknown[];
    if (slots.length === 0) await client.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await until(
      async () => ((await client.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok'),
      timeoutMs,
      'cluster_state:ok',
    );
  } finally {
    client.disconnect();
  }
}

/** SIGKILLs a server spawnRedisServer started and resolves once it has exited. */
export function stopRedisServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** True when the server on port answers PING within 500 ms. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

/** FLUSHALL on the server at url (a private test server, never the shared one). */
export async function flushAll(url: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    await client.flushall();
  } finally {
    client.disconnect();
  }
}

/** Resolves once each of `channels` has a subscriber on the server at url (PUBSUB NUMSUB). */
export async function untilSubscribed(url: string, channels: string[], timeoutMs = 5000): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    const counts = async (): Promise<number[]> => {
      const reply = (await client.call('PUBSUB', 'NUMSUB', ...channels)) as Array<string | number>;
      return channels.map((_, i) => Number(reply[2 * i + 1]));
    };
    await until(
      async () => (await counts()).every((n) => n > 0),
      timeoutMs,
      `a subscriber on each of ${channels.join(', ')}`,
    );
  } finally {
    client.disconnect();
  }
}

/** How long a PING goes unanswered before stallRedis takes the server for asleep. */
const ASLEEP_AFTER_MS = 100;

/**
 * Puts the server at url to sleep for `seconds` (DEBUG SLEEP, on a connection of
 * its own) and resolves once it sleeps: a sleeping server answers nothing, so once
 * a PING sent after the DEBUG SLEEP has gone ASLEEP_AFTER_MS without an answer.
 * `awake` settles when the DEBUG SLEEP returns.
 */
export async function stallRedis(url: string, seconds: number): Promise<{ awake: Promise<void> }> {
  const [staller, prober] = [url, url].map((u) => {
    const client = new Redis(u, { lazyConnect: true, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    return client;
  });
  await Promise.all([staller.connect(), prober.connect()]);
  const awake = staller.call('DEBUG', 'SLEEP', String(seconds)).then(
    () => undefined,
    () => undefined,
  );
  void awake.then(() => {
    staller.disconnect();
    prober.disconnect();
  });
  const answers = (): Promise<boolean> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ASLEEP_AFTER_MS);
      const answered = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      prober.ping().then(answered, answered);
    });
  await until(async () => !(await answers()), seconds * 1000, 'the redis-server asleep');
  return { awake };
}
