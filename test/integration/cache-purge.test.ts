// POST /cache/purge on the admin listener (api.md §10.5): by route family and
// version range, by one request, or everything, in the memory tier and in Redis,
// and so on every proxy sharing that Redis; bad bodies answered 400; each purge
// counted and logged. Real proxies on port 0 in front of the sim, on this file's
// own redis-server.
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { SIM_MODULE_ADDRESS, type SimNode } from '../../src/sim/index.js';
import {
  BALANCE,
  cacheOf,
  errorBodyOf,
  expectStatus,
  hex,
  OWNER,
  OWNER2,
  PRESENT,
  redisEntryKeys,
  served,
  u64le,
  viewBcsRequest,
} from '../helpers/cache.js';
import { freePort } from '../helpers/free-port.js';
import { parsePrometheus, valuesByLabel } from '../helpers/prometheus.js';
import { call, capturedLog, type ProxyHandle, proxy, rawItem, type Reply, sim, viewJson } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { tcpRelay } from '../helpers/tcp-relay.js';
import { until } from '../helpers/until.js';

const PREFIX = 'purge:';

const server = useRedisServer({ flushEach: true });

/** A client of the suite's server, to look at what the proxies wrote. */
function inspector(): Redis {
  return server.client();
}

/** A proxy with its admin listener, on this file's Redis (`redisUrl` to reach it another way; null: no Redis). */
async function purgeable(
  node: SimNode,
  options: { redisUrl?: string | null; logger?: ReturnType<typeof capturedLog>['logger'] } = {},
): Promise<ProxyHandle & { admin: string }> {
  const redisUrl = options.redisUrl === undefined ? server.url : options.redisUrl;
  const cache =
    redisUrl === null
      ? { memory: { maxBytes: 1_000_000 } }
      : { memory: { maxBytes: 1_000_000 }, redis: { url: redisUrl, keyPrefix: PREFIX, commandTimeoutMs: 500 } };
  const p = await proxy(
    [node],
    { admin: { host: '127.0.0.1', port: await freePort() }, routing: { probeIntervalMs: 50 }, cache },
    options.logger ? { logger: options.logger } : {},
  );
  return { ...p, admin: p.app.adminUrl()! };
}

function purge(admin: string, body: unknown): Promise<Reply> {
  return call(admin, '/cache/purge', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const view = (url: string, version: number, owner = OWNER): Promise<Reply> =>
  viewJson(url, BALANCE, [owner], { version });
const txn = (url: string, version: number): Promise<Reply> => call(url, `/v1/transactions/by_version/${version}`);

/** Reads `read` and checks how it was served, and that it reached the node exactly when it says MISS. */
async function expectServed(node: SimNode, read: () => Promise<Reply>, cache: string, label: string): Promise<void> {
  const before = served(node);
  const reply = await read();
  expectStatus(reply, 200, label);
  expect(cacheOf(reply), label).toBe(cache);
  expect(served(node) - before, `${label}: node calls`).toBe(cache === 'MISS' ? 1 : 0);
}

/**
 * A read of view@990 through `p`, held at the node for `delayMs`, and a purge of that
 * version on `p` begun while the node is still answering it; the read's reply is to come.
 */
async function purgedWhileInFlight(
  node: SimNode,
  p: { url: string; admin: string },
  delayMs: number,
): Promise<{ inFlight: Promise<Reply> }> {
  node.faults.set({ mode: 'slow', delayMs, routes: ['view'], count: 1 });
  const inFlight = view(p.url, 990);
  await until(() => node.counters.byRoute.view === 1, 2000, 'the read reached the node');
  expectStatus(await purge(p.admin, { family: 'view', fromVersion: '990', toVersion: '990' }), 200, 'purge');
  return { inFlight };
}

/** Waits until `count` entries are in Redis (a write lands after its reply). */
async function entriesInRedis(count: number): Promise<void> {
  const client = inspector();
  await until(async () => (await redisEntryKeys(client, PREFIX)).length >= count, 2000, `${count} entries in Redis`);
}

describe('POST /cache/purge', () => {
  it('by family and version range: exactly the entries of that family in range, from memory and Redis, on both proxies', async () => {
    const node = await sim();
    const a = await purgeable(node);
    const b = await purgeable(node);
    for (const v of [900, 950, 990]) await expectServed(node, () => view(a.url, v), 'MISS', `view@${v} on A`);
    await expectServed(node, () => rawItem(a.url, hex(PRESENT), { version: 950 }), 'MISS', 'raw_item@950 on A');
    await expectServed(node, () => txn(a.url, 950), 'MISS', 'transaction@950 on A');
    await entriesInRedis(5);
    for (const v of [900, 950, 990]) await expectServed(node, () => view(b.url, v), 'HIT redis', `view@${v} on B`);
    const entriesOnB = b.app.memory.stats().entries;

    const reply = await purge(a.admin, { family: 'view', fromVersion: '920', toVersion: '960' });
    expectStatus(reply, 200, 'purge');
    expect(reply.json()).toEqual({
      purged: {
        scope: 'family',
        family: 'view',
        fromVersion: '920',
        toVersion: '960',
        memoryEntries: 1,
        redis: 'purged',
        redisEntries: 1,
      },
    });
    // B hears of it from Redis.
    await until(() => b.app.memory.stats().entries === entriesOnB - 1, 2000, 'B dropped view@950 from memory');

    await expectServed(node, () => view(a.url, 950), 'MISS', 'purged view@950 on A');
    await entriesInRedis(5);
    await expectServed(
      node,
      () => view(b.url, 950),
      'HIT redis',
      'purged view@950 on B: filled again by A, not kept by B',
    );
    for (const [label, read] of [
      ['view@900 on A', () => view(a.url, 900)],
      ['view@990 on A', () => view(a.url, 990)],
      ['view@900 on B', () => view(b.url, 900)],
      ['raw_item@950 on A', () => rawItem(a.url, hex(PRESENT), { version: 950 })],
      ['transaction@950 on A', () => txn(a.url, 950)],
    ] as const) {
      await expectServed(node, read, 'HIT memory', `${label}, outside the purge`);
    }

    // A path route is purged by the version its answer belongs to; no upper bound.
    const open = await purge(b.admin, { family: 'transactions', fromVersion: '950' });
    expect(open.json().purged).toMatchObject({
      scope: 'family',
      family: 'transactions',
      fromVersion: '950',
      memoryEntries: 0,
      redisEntries: 1,
    });
    await until(async () => !(await txn(a.url, 950)).headers['x-cache-tier'], 2000, 'the transaction purged from A');
  });

  it('one request: the key the proxy parses it into, in memory and Redis, and no other', async () => {
    const node = await sim();
    const a = await purgeable(node);
    const b = await purgeable(node);
    await expectServed(node, () => view(a.url, 990), 'MISS', 'view@990 (JSON) on A');
    await expectServed(node, () => view(a.url, 990, OWNER2), 'MISS', 'view@990 of another owner on A');
    await expectServed(node, () => view(a.url, 980), 'MISS', 'view@980 on A');
    const bcs = (url: string): Promise<Reply> => viewBcsRequest(url, 'add', [u64le(2n), u64le(40n)], { version: 990 });
    await expectServed(node, () => bcs(a.url), 'MISS', 'view@990 with a BCS body on A');
    await entriesInRedis(4);
    await expectServed(node, () => view(b.url, 990), 'HIT redis', 'view@990 on B');
    const entriesOnB = b.app.memory.stats().entries;

    // Whitespace and member order do not matter: the parser's canonical form names the key.
    const body = `{ "arguments": [${JSON.stringify(OWNER)}], "type_arguments": [], "function": "${BALANCE}" }`;
    const reply = await purge(a.admin, {
      request: {
        method: 'POST',
        path: '/v1/view?ledger_version=990',
        body,
        headers: { 'Content-Type': 'application/json', accept: 'application/json' },
      },
    });
    expectStatus(reply, 200, 'purge');
    expect(reply.json()).toEqual({
      purged: { scope: 'request', family: 'view', version: '990', memoryEntries: 1, redis: 'purged', redisEntries: 1 },
    });
    await until(() => b.app.memory.stats().entries === entriesOnB - 1, 2000, 'B dropped it from memory');
    await expectServed(node, () => view(b.url, 990), 'MISS', 'the purged request on B');
    await entriesInRedis(4);
    await expectServed(node, () => view(a.url, 990), 'HIT redis', 'the purged request on A, filled again by B');
    await expectServed(node, () => view(a.url, 990, OWNER2), 'HIT memory', 'another owner at 990');
    await expectServed(node, () => view(a.url, 980), 'HIT memory', 'the same request at 980');

    // A BCS request body is given as hex.
    const viewBody = Buffer.from(
      encodeViewRequest({
        address: SIM_MODULE_ADDRESS,
        module: 'sim',
        function: 'add',
        typeArgs: [],
        args: [u64le(2n), u64le(40n)],
      }),
    );
    const byHex = await purge(a.admin, {
      request: {
        method: 'POST',
        path: '/v1/view?ledger_version=990',
        bodyHex: hex(viewBody),
        headers: { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/json' },
      },
    });
    expect(byHex.json().purged).toMatchObject({ memoryEntries: 1, redisEntries: 1 });
    await expectServed(node, () => bcs(a.url), 'MISS', 'the purged BCS request on A');
  });

  it('everything: a new generation, with no scan of Redis; neither proxy reads an entry of the old one', async () => {
    const node = await sim();
    const a = await purgeable(node);
    const b = await purgeable(node);
    for (const v of [900, 990]) await expectServed(node, () => view(a.url, v), 'MISS', `view@${v} on A`);
    await expectServed(node, () => rawItem(a.url, hex(PRESENT), { version: 990 }), 'MISS', 'raw_item@990 on A');
    await entriesInRedis(3);
    await expectServed(node, () => view(b.url, 900), 'HIT redis', 'view@900 on B');

    const reply = await purge(b.admin, { all: true });
    expectStatus(reply, 200, 'purge');
    expect(reply.json()).toEqual({ purged: { scope: 'all', generation: 1, memoryEntries: 1, redis: 'purged' } });
    await until(() => a.app.memory.stats().entries === 0, 2000, 'A cleared its memory tier');
    // The old entries are left to expire: nothing is scanned or deleted.
    expect(await redisEntryKeys(inspector(), PREFIX)).toHaveLength(3);
    expect(await inspector().hgetall(`${PREFIX}purge`)).toEqual({ generation: '1', purges: '1' });

    await expectServed(node, () => view(a.url, 900), 'MISS', 'view@900 on A');
    await entriesInRedis(4);
    await expectServed(node, () => view(b.url, 900), 'HIT redis', 'view@900 on B, in the new generation');
    await expectServed(node, () => view(b.url, 990), 'MISS', 'view@990 on B');
    await expectServed(node, () => rawItem(b.url, hex(PRESENT), { version: 990 }), 'MISS', 'raw_item@990 on B');
    await entriesInRedis(6);

    // A proxy started afterwards reads the generation before it serves from Redis.
    const c = await purgeable(node);
    await expectServed(node, () => view(c.url, 990), 'HIT redis', 'view@990 on a new proxy');
  });

  it('a proxy cut off from Redis during a purge of everything drops its entries as soon as Redis answers it again', async () => {
    const node = await sim();
    const relay = await tcpRelay(server.port);
    const a = await purgeable(node);
    const b = await purgeable(node, { redisUrl: `redis://127.0.0.1:${relay.port}` });
    await expectServed(node, () => view(a.url, 990), 'MISS', 'view@990 on A');
    await entriesInRedis(1);
    await expectServed(node, () => view(b.url, 990), 'HIT redis', 'view@990 on B');

    await relay.cut();
    await until(() => !b.app.redis!.isHealthy(), 2000, 'B lost Redis');
    expectStatus(await purge(a.admin, { all: true }), 200, 'purge');
    // Cut off, B cannot know: it serves what it holds (the bound is the outage).
    await expectServed(node, () => view(b.url, 990), 'HIT memory', 'view@990 on B while cut off');

    await relay.restore();
    await until(() => b.app.redis!.isHealthy(), 5000, 'B back on Redis');
    expect(b.app.memory.stats().entries, 'B cleared its memory tier on reconnecting').toBe(0);
    await expectServed(node, () => view(b.url, 990), 'MISS', 'view@990 on B after reconnecting');
  });

  it('a read in flight when a purge begins stores nothing: its answer may be the one purged', async () => {
    const node = await sim();
    const a = await purgeable(node);
    // Long enough that the purge begins while the node is still answering, on a busy machine too.
    const { inFlight } = await purgedWhileInFlight(node, a, 2000);
    const reply = await inFlight;
    expect(cacheOf(reply), 'the read in flight is answered').toBe('MISS');
    await expectServed(node, () => view(a.url, 990), 'MISS', 'the same read after: nothing was stored');
    await entriesInRedis(1);
    await expectServed(node, () => view(a.url, 990), 'HIT memory', 'and that one was');
  });

  it('a read that begins after a purge joins no read in flight from before it: that answer may be the one purged', async () => {
    const node = await sim();
    const a = await purgeable(node);
    const { inFlight } = await purgedWhileInFlight(node, a, 1000);
    const after = view(a.url, 990);
    expect(cacheOf(await inFlight), 'the read in flight is answered').toBe('MISS');
    expect(cacheOf(await after), 'the read after the purge asked a node').toBe('MISS');
    expect(node.counters.byRoute.view).toBe(2);
    await expectServed(node, () => view(a.url, 990), 'HIT memory', 'its answer is the one stored');
  });

  it("a read waiting on another instance's fill that began before a purge asks a node itself: that answer may be the one purged", async () => {
    const node = await sim();
    const a = await purgeable(node);
    const b = await purgeable(node);
    const { inFlight } = await purgedWhileInFlight(node, a, 1000);
    // B finds A's fill lock held, and waits for what A's read comes to.
    const waiting = view(b.url, 990);
    expect(cacheOf(await inFlight), 'the read in flight is answered').toBe('MISS');
    const reply = await waiting;
    expectStatus(reply, 200, 'the read that waited');
    expect(cacheOf(reply), 'the read that waited asked a node').toBe('MISS');
    expect(node.counters.byRoute.view).toBe(2);
    await entriesInRedis(1);
    await expectServed(node, () => view(a.url, 990), 'HIT redis', "B's answer is the one stored");
  });

  it('a request before the nodes have named their vendor and chain: 503 not ready, whatever it is, and nothing counted', async () => {
    // Nothing listens there: no node answers, so no vendor and no chain is known.
    const silent = `http://127.0.0.1:${await freePort()}`;
    const p = await proxy([{ url: silent }], {
      admin: { host: '127.0.0.1', port: await freePort() },
      routing: { probeIntervalMs: 50 },
      cache: { memory: { maxBytes: 1_000_000 } },
    });
    const admin = p.app.adminUrl()!;
    // The view's media types are the vendor's: until the nodes name it, no request can be told good or bad.
    for (const type of ['application/json', 'application/x.aptos.view_function+bcs']) {
      const reply = await purge(admin, {
        request: { method: 'POST', path: '/v1/view?ledger_version=990', body: '{}', headers: { 'content-type': type } },
      });
      expectStatus(reply, 503, type);
      expect(reply.json().message, type).toMatch(/^not ready: /);
    }
    expect(await purges({ ...p, admin })).toMatchObject({ request: 0 });
  });

  it('bad bodies get a node-shaped 400, purge nothing and are not counted', async () => {
    const node = await sim();
    const a = await purgeable(node);
    await expectServed(node, () => view(a.url, 990), 'MISS', 'view@990');
    const view990 = {
      method: 'POST',
      path: '/v1/view?ledger_version=990',
      headers: { 'content-type': 'application/json' },
    };
    const bad: Array<[unknown, RegExp]> = [
      ['{"all": tru', /not JSON/],
      [[], /JSON object/],
      [{}, /exactly one/],
      [{ all: false }, /"all" must be true/],
      [{ all: true, family: 'view', fromVersion: '1' }, /exactly one/],
      [
        { family: 'nodes', fromVersion: '1' },
        /"family" must be one of raw_item, view, accounts, tables, transactions, blocks/,
      ],
      [{ family: 'view' }, /"fromVersion" must be a u64/],
      [{ family: 'view', fromVersion: 5 }, /"fromVersion" must be a u64/],
      [{ family: 'view', fromVersion: '-1' }, /"fromVersion" must be a u64/],
      [{ family: 'view', fromVersion: '18446744073709551616' }, /"fromVersion" must be a u64/],
      [{ family: 'view', fromVersion: '10', toVersion: '9' }, /below/],
      [{ family: 'view', fromVersion: '10', extra: 1 }, /unknown member "extra"/],
      [{ request: { ...view990, method: 'PUT', body: '{}' } }, /"GET" or "POST"/],
      [{ request: { ...view990, path: 'view' } }, /"request.path"/],
      [
        { request: { ...view990, body: '{"function": ' } },
        /refuses \(web_framework_error\): parse request payload error/,
      ],
      [
        {
          request: {
            ...view990,
            path: '/v1/view',
            body: JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] }),
          },
        },
        /no ledger_version: a latest read/,
      ],
      [{ request: { ...view990, path: '/v1/estimate_gas_price', method: 'GET' } }, /not a cached route/],
      [{ request: { ...view990, body: '{}', headers: { authorization: 'Bearer x' } } }, /content-type and accept only/],
      [{ request: { ...view990, bodyHex: 'zz' } }, /"request.bodyHex" must be hex/],
      [
        {
          request: {
            ...view990,
            bodyHex: '010203',
            headers: { 'content-type': 'application/x.node.view_function+bcs' },
          },
        },
        /refuses \(invalid_input\): Failed to deserialize input into ViewRequest/,
      ],
    ];
    for (const [body, message] of bad) {
      const reply = await purge(a.admin, body);
      const label = JSON.stringify(body);
      expectStatus(reply, 400, label);
      expect(errorBodyOf(reply).message, label).toMatch(message);
    }
    await expectServed(node, () => view(a.url, 990), 'HIT memory', 'view@990 after the bad purges');
    expect(await purges(a)).toEqual({ all: 0, family: 0, request: 0 });
  });

  it('each purge is counted by scope from 0 and logged at info with its scope, family, versions and counts, never a request body', async () => {
    const node = await sim();
    const { logger, lines } = capturedLog();
    const a = await purgeable(node, { logger });
    expect(await purges(a)).toEqual({ all: 0, family: 0, request: 0 });
    await expectServed(node, () => view(a.url, 990), 'MISS', 'view@990');
    const body = JSON.stringify({ function: BALANCE, type_arguments: [], arguments: [OWNER] });
    const headers = { 'content-type': 'application/json' };
    expectStatus(
      await purge(a.admin, { request: { method: 'POST', path: '/v1/view?ledger_version=990', body, headers } }),
      200,
      'request',
    );
    expectStatus(await purge(a.admin, { family: 'raw_item', fromVersion: '1', toVersion: '2' }), 200, 'family');
    expectStatus(await purge(a.admin, { family: 'blocks', fromVersion: '7' }), 200, 'family');
    expect(await purges(a)).toEqual({ all: 0, family: 2, request: 1 });

    const purged = lines.filter((line) => line.msg === 'cache purged');
    expect(purged).toHaveLength(3);
    expect(purged[0]).toMatchObject({
      level: 30,
      scope: 'request',
      family: 'view',
      version: '990',
      memoryEntries: 1,
      redis: 'purged',
      redisEntries: 1,
    });
    expect(purged[1]).toMatchObject({
      scope: 'family',
      family: 'raw_item',
      fromVersion: '1',
      toVersion: '2',
      memoryEntries: 0,
      redisEntries: 0,
    });
    expect(purged[2]).toMatchObject({ scope: 'family', family: 'blocks', fromVersion: '7' });
    const logged = lines.map((line) => JSON.stringify(line)).join('\n');
    expect(logged).not.toContain(OWNER.slice(2, 20));
    expect(logged).not.toContain('balance');
  });

  it('without Redis: the memory tier alone, and the answer says Redis is off', async () => {
    const node = await sim();
    const a = await purgeable(node, { redisUrl: null });
    await expectServed(node, () => view(a.url, 990), 'MISS', 'view@990');
    await expectServed(node, () => view(a.url, 980), 'MISS', 'view@980');
    const family = await purge(a.admin, { family: 'view', fromVersion: '985' });
    expect(family.json()).toEqual({
      purged: { scope: 'family', family: 'view', fromVersion: '985', memoryEntries: 1, redis: 'off' },
    });
    await expectServed(node, () => view(a.url, 990), 'MISS', 'view@990 after the family purge');
    await expectServed(node, () => view(a.url, 980), 'HIT memory', 'view@980 after the family purge');
    const all = await purge(a.admin, { all: true });
    expect(all.json()).toEqual({ purged: { scope: 'all', generation: 1, memoryEntries: 2, redis: 'off' } });
    await expectServed(node, () => view(a.url, 980), 'MISS', 'view@980 after purging everything');
  });

  it('answers 503 with what it did when Redis does not answer: a purge is safe to repeat', async () => {
    const node = await sim();
    const relay = await tcpRelay(server.port);
    const a = await purgeable(node, { redisUrl: `redis://127.0.0.1:${relay.port}` });
    await expectServed(node, () => view(a.url, 990), 'MISS', 'view@990');
    await relay.cut();
    await until(() => !a.app.redis!.isReady(), 2000, 'A lost Redis');
    const reply = await purge(a.admin, { family: 'view', fromVersion: '0' });
    expectStatus(reply, 503, 'purge');
    expect(reply.json()).toMatchObject({
      purged: { scope: 'family', memoryEntries: 1, redis: 'failed' },
      message: expect.stringMatching(/Redis did not answer.*safe to repeat/),
    });
    expect(await purges(a)).toMatchObject({ family: 1 });
  });
});

/** ledger_proxy_purges_total by scope, as /metrics says it. */
async function purges(p: ProxyHandle & { admin: string }): Promise<Record<string, number>> {
  const text = (await call(p.admin, '/metrics')).body.toString('utf8');
  return valuesByLabel(parsePrometheus(text), 'ledger_proxy_purges_total', 'scope');
}
