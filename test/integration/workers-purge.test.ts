// A cache purge with server.workers: 2, through the built CLI: the primary serves
// the admin listener, so it orders the purge of both workers' memory tiers, and of
// Redis once; a worker that does not answer is named in the answer after a bound,
// not waited for; a request is parsed by the workers, with the vendor the nodes
// named. The primary keeps the admin listener's rules. The purge is counted
// once, on the primary's /metrics.
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { SIM_MODULE_ADDRESS, type SimNode } from '../../src/sim/index.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { BALANCE, hex, OWNER, served, u64le } from '../helpers/cache.js';
import { type Cli, configFile, startCli, useCliBuild } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { parsePrometheus, valuesByLabel } from '../helpers/prometheus.js';
import { sim } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

useCliBuild();

const PREFIX = 'workers:';
const redis = useRedisServer();

function config(port: number, adminPort: number, node: SimNode, redisUrl?: string, adminLines: string[] = []): string {
  const lines = [
    'server:',
    '  host: 127.0.0.1',
    `  port: ${port}`,
    '  workers: 2',
    'admin:',
    '  host: 127.0.0.1',
    `  port: ${adminPort}`,
    ...adminLines,
    'upstreams:',
    `  - url: ${node.url}`,
    '    name: sim',
    'log:',
    '  level: info',
  ];
  if (redisUrl !== undefined) lines.push('cache:', '  redis:', `    url: ${redisUrl}`, `    keyPrefix: "${PREFIX}"`);
  return `${lines.join('\n')}\n`;
}

async function startWorkers(
  node: SimNode,
  redisUrl?: string,
  adminLines: string[] = [],
): Promise<{ cli: Cli; admin: string; workers(): Array<{ id: number; pid: number }> }> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const cli = await startCli(
    configFile(`workers-purge-${port}.yaml`, config(port, adminPort, node, redisUrl, adminLines)),
    port,
  );
  const admin = `http://127.0.0.1:${adminPort}`;
  const workers = (): Array<{ id: number; pid: number }> =>
    [...cli.output().matchAll(/"worker":(\d+),"workerPid":(\d+)[^\n]*"msg":"worker started"/g)].map((m) => ({
      id: Number(m[1]),
      pid: Number(m[2]),
    }));
  const listening = (): number => [...cli.output().matchAll(/"msg":"ledger-proxy listening"/g)].length;
  await until(() => listening() === 2 && workers().length === 2, 10_000, `both workers listening:\n${cli.output()}`);
  await until(async () => (await json(`${admin}/readyz`)).status === 200, 10_000, 'ready');
  return { cli, admin, workers };
}

async function json(
  url: string,
  body?: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: any }> {
  const res = await request(
    url,
    body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) },
  );
  const text = await res.body.text();
  return { status: res.statusCode, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** view@990 on a fresh connection, so the kernel may hand it to either worker; resolves with its X-Cache (and tier). */
async function read(url: string): Promise<string> {
  const res = await request(`${url}/v1/view?ledger_version=990`, {
    method: 'POST',
    reset: true,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }),
  });
  await res.body.dump();
  expect(res.statusCode).toBe(200);
  return `${res.headers['x-cache']}${res.headers['x-cache-tier'] ? ` ${res.headers['x-cache-tier']}` : ''}`;
}

/** The body of 0x1::sim::add(2, 40) as BCS, the way the Aptos SDK sends a view. */
const ADD_BCS = Buffer.from(
  encodeViewRequest({
    address: SIM_MODULE_ADDRESS,
    module: 'sim',
    function: 'add',
    typeArgs: [],
    args: [u64le(2n), u64le(40n)],
  }),
);
const APTOS_BCS = 'application/x.aptos.view_function+bcs';

/** view@990 with a BCS body in the aptos nodes' media type, as read() does: resolves with its X-Cache (and tier). */
async function readBcs(url: string): Promise<string> {
  const res = await request(`${url}/v1/view?ledger_version=990`, {
    method: 'POST',
    reset: true,
    headers: { 'content-type': APTOS_BCS, accept: 'application/json' },
    body: ADD_BCS,
  });
  expect(await res.body.text()).toBe('["42"]');
  expect(res.statusCode).toBe(200);
  return `${res.headers['x-cache']}${res.headers['x-cache-tier'] ? ` ${res.headers['x-cache-tier']}` : ''}`;
}

/**
 * Reads until `count` replies did not come from a worker's memory tier: each
 * worker's first read of the key (a MISS, or a Redis hit), after which it holds it.
 */
async function readUntilNotFromMemory(url: string, count: number, reader = read): Promise<void> {
  let seen = 0;
  await until(
    async () => {
      if ((await reader(url)) !== 'HIT memory') seen++;
      return seen >= count;
    },
    15_000,
    `${count} replies not from a worker's memory`,
  );
}

function purgesCounted(text: string): Record<string, number> {
  return valuesByLabel(parsePrometheus(text), 'ledger_proxy_purges_total', 'scope');
}

describe('a cache purge with server.workers: 2', () => {
  it("reaches both workers' memory tiers, is counted once and logged by the primary", async () => {
    const node = await sim();
    const { cli, admin } = await startWorkers(node);
    // Without Redis each worker asks the node once, then answers from memory.
    await until(async () => (await read(cli.url)) !== '' && served(node) === 2, 15_000, 'both workers hold view@990');

    const reply = await json(`${admin}/cache/purge`, { family: 'view', fromVersion: '990', toVersion: '990' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({
      purged: {
        scope: 'family',
        family: 'view',
        fromVersion: '990',
        toVersion: '990',
        memoryEntries: 2,
        redis: 'off',
        workers: { answered: 2, unanswered: [] },
      },
    });
    // A worker that had kept the entry would answer it from memory for ever: the node would not hear from it again.
    await until(
      async () => (await read(cli.url)) !== '' && served(node) === 4,
      15_000,
      'both workers asked the node again',
    );

    const metrics = await json(`${admin}/metrics`);
    expect(purgesCounted(metrics.body)).toEqual({ all: 0, family: 1, request: 0 });
    // Lines are flushed within 100 ms.
    await until(
      () =>
        /"scope":"family","family":"view","fromVersion":"990","toVersion":"990"[^\n]*"msg":"cache purged"/.test(
          cli.output(),
        ),
      2000,
      `the purge logged:\n${cli.output()}`,
    );
  });

  it('purges Redis once, and both workers move to the new generation before it answers', async () => {
    const node = await sim();
    const { cli, admin } = await startWorkers(node, redis.url);
    await readUntilNotFromMemory(cli.url, 2);
    expect(served(node), 'one node call: the other worker found it in Redis').toBe(1);

    const reply = await json(`${admin}/cache/purge`, { all: true });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({
      purged: {
        scope: 'all',
        generation: 1,
        memoryEntries: 2,
        redis: 'purged',
        workers: { answered: 2, unanswered: [] },
      },
    });
    const inspector = new Redis(redis.url);
    try {
      expect(await inspector.hgetall(`${PREFIX}purge`), 'one purge, one generation').toEqual({
        generation: '1',
        purges: '1',
      });
    } finally {
      inspector.disconnect();
    }
    // Each worker reads the key afresh once: from the node, or from Redis after the other filled it.
    await readUntilNotFromMemory(cli.url, 2);
    expect(served(node), 'one more node call between both workers').toBe(2);
  });

  it('purges a request keyed with the vendor the nodes named (vendor: auto), which the primary does not know', async () => {
    const node = await sim({ vendor: 'aptos' });
    const { admin, cli } = await startWorkers(node, redis.url);
    await readUntilNotFromMemory(cli.url, 2, readBcs);
    expect(served(node), 'one node call: the other worker found it in Redis').toBe(1);

    const request = {
      method: 'POST',
      path: '/v1/view?ledger_version=990',
      bodyHex: hex(ADD_BCS),
      headers: { 'content-type': APTOS_BCS, accept: 'application/json' },
    };
    const reply = await json(`${admin}/cache/purge`, { request });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({
      purged: {
        scope: 'request',
        family: 'view',
        version: '990',
        memoryEntries: 2,
        redis: 'purged',
        redisEntries: 1,
        workers: { answered: 2, unanswered: [] },
      },
    });
    // Each worker reads the key afresh once: from the node, or from Redis after the other filled it.
    await readUntilNotFromMemory(cli.url, 2, readBcs);
    expect(served(node), 'one more node call between both workers').toBe(2);
  });

  it("keeps the admin listener's rules in the primary: no Origin, a Host that names it, JSON only, and admin.token", async () => {
    const node = await sim();
    const token = 'workers-admin-token';
    const sha256 = createHash('sha256').update(token).digest('hex');
    const { admin } = await startWorkers(node, undefined, ['  token:', `    sha256: "${sha256}"`]);
    const refused = async (
      label: string,
      reply: Promise<{ status: number; body: any }>,
      status: number,
      code: string,
    ): Promise<void> => {
      const { status: got, body } = await reply;
      expect(got, `${label}: ${JSON.stringify(body)}`).toBe(status);
      expect(body.error_code, label).toBe(code);
    };
    await refused('Origin', json(`${admin}/metrics`, undefined, { origin: 'https://evil.example' }), 403, 'forbidden');
    await refused('a rebound Host', json(`${admin}/readyz`, undefined, { host: 'evil.example' }), 403, 'forbidden');
    await refused('a purge without the token', json(`${admin}/cache/purge`, { all: true }), 401, 'unauthorized');
    const bearer = { authorization: `Bearer ${token}` };
    await refused(
      'a text/plain purge',
      json(`${admin}/cache/purge`, { all: true }, { ...bearer, 'content-type': 'text/plain' }),
      400,
      'web_framework_error',
    );
    const reply = await json(`${admin}/cache/purge`, { all: true }, { ...bearer, 'content-type': 'application/json' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.purged).toMatchObject({ scope: 'all', workers: { answered: 2, unanswered: [] } });
  });

  it('names a worker that does not answer in time, and answers 503 for the others', async () => {
    const node = await sim();
    const { cli, admin, workers } = await startWorkers(node);
    const [stopped] = workers();
    process.kill(stopped.pid, 'SIGSTOP');
    try {
      const reply = await json(`${admin}/cache/purge`, { all: true });
      expect(reply.status, JSON.stringify(reply.body)).toBe(503);
      expect(reply.body.purged).toMatchObject({
        scope: 'all',
        redis: 'off',
        workers: { answered: 1, unanswered: [stopped.id] },
      });
      expect(reply.body.message).toMatch(new RegExp(`Workers ${stopped.id} did not answer in time.*safe to repeat`));
    } finally {
      process.kill(stopped.pid, 'SIGCONT');
    }
    await until(
      () => /"msg":"cache purge incomplete"/.test(cli.output()),
      2000,
      `the incomplete purge logged:\n${cli.output()}`,
    );
  });
});
