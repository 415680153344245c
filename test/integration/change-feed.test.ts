// latest.changeFeed as an operator meets it: off by default (every latest read
// forwarded), on and off live on a reload, a hit like any other for tenants,
// ahead of bounded staleness, never a view, and gone with a purge.
import { describe, expect, it } from 'vitest';
import { simKeyRequests, type SimNode, type SimUniverseKey } from '../../src/sim/index.js';
import { latestReads, readLatest, type LatestRead } from '../helpers/change-feed.js';
import { metricValue } from '../helpers/metrics.js';
import { call, freePort, proxy, sparseSim, versionOf, viewJson, type ProxyHandle } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const UNIVERSE = { accounts: 6, objects: 2, tables: 1, tableKeys: 4, writeRate: 0.04 };
const FEED = { latest: { changeFeed: { enabled: true } } };

/** An account's Account resource read, the first of the universe (a 200 in both formats). */
function accountRead(node: SimNode, accept: LatestRead['accept'] = 'application/json'): LatestRead {
  const read = latestReads(node).find((r) => r.label === 'account' && r.accept === accept);
  if (read === undefined) throw new Error('no account read in the universe');
  return read;
}

/** Reads `read` until the feed answers it, the ledger standing still; returns that reply. */
async function untilAnswered(p: ProxyHandle, read: LatestRead) {
  let reply = await readLatest(p.url, read);
  await until(
    async () => {
      reply = await readLatest(p.url, read);
      return reply.headers['x-cache'] === 'HIT';
    },
    5000,
    () => `a feed answer (last: ${reply.status} ${reply.headers['x-cache']})`,
  );
  return reply;
}

describe('latest.changeFeed', () => {
  it('is off by default: every latest read reaches a node', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], { routing: { probeIntervalMs: 50 } });
    const read = accountRead(node);
    for (let i = 0; i < 3; i++) expect((await readLatest(p.url, read)).headers['x-cache']).toBe('MISS');
    expect(node.counters.byRoute.feed ?? 0).toBe(0);
    expect(await metricValue(p.app, 'ledger_proxy_feed_enabled')).toBe(0);
  });

  it('answers a latest read as a hit at the newest version, the bytes a node gives pinned there', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], { routing: { probeIntervalMs: 50 }, ...FEED });
    const read = accountRead(node, 'application/x-bcs');
    const hit = await untilAnswered(p, read);
    expect(hit.headers['x-cache-tier']).toBe('memory');
    const at = versionOf(hit);
    const pinned = await call(node.url, `${read.path}?ledger_version=${at}`, { headers: { accept: read.accept } });
    expect([hit.status, hit.body]).toEqual([pinned.status, pinned.body]);
    expect(await metricValue(p.app, 'ledger_proxy_feed_answers_total', { route: 'account' })).toBeGreaterThan(0);
  });

  it('turns on and off live on a reload', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], { routing: { probeIntervalMs: 50 } });
    const read = accountRead(node);
    const on = {
      ...p.app.config,
      latest: { ...p.app.config.latest, changeFeed: { ...p.app.config.latest.changeFeed, enabled: true } },
    };
    expect(await p.app.reload(on)).toEqual({ applied: ['latest.changeFeed'], needRestart: [], failed: [] });
    await untilAnswered(p, read);
    const off = { ...on, latest: { ...on.latest, changeFeed: { ...on.latest.changeFeed, enabled: false } } };
    expect(await p.app.reload(off)).toEqual({ applied: ['latest.changeFeed'], needRestart: [], failed: [] });
    const before = node.counters.byRoute.account ?? 0;
    expect((await readLatest(p.url, read)).headers['x-cache']).toBe('MISS');
    expect(node.counters.byRoute.account).toBe(before + 1);
    expect(await metricValue(p.app, 'ledger_proxy_feed_covering')).toBe(0);
    // New bounds for its index, on again: it starts afresh with them and answers.
    const bounds = { ...on.latest.changeFeed, windowVersions: 10, maxWatchedKeys: 50 };
    expect(await p.app.reload({ ...on, latest: { ...on.latest, changeFeed: bounds } })).toEqual({
      applied: ['latest.changeFeed'],
      needRestart: [],
      failed: [],
    });
    await untilAnswered(p, read);
  });

  it('comes before bounded staleness: an exact answer is a HIT at the newest version, not STALE', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], {
      routing: { probeIntervalMs: 50 },
      latest: { maxStalenessMs: 60_000, changeFeed: { enabled: true } },
    });
    const read = accountRead(node);
    const hit = await untilAnswered(p, read);
    expect(versionOf(hit)).toBe(p.app.watermark.current()?.ledgerVersion);
  });

  it('never answers a view', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], { routing: { probeIntervalMs: 50 }, ...FEED });
    await untilAnswered(p, accountRead(node));
    for (let i = 0; i < 3; i++) {
      const view = await viewJson(p.url, '0x1::sim::add', ['1', '2']);
      expect(view.headers['x-cache']).toBe('MISS');
    }
  });

  it('is free for a tenant, as every hit is', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], {
      routing: { probeIntervalMs: 50 },
      ...FEED,
      tenants: { anonymous: { nodeUnitsPerMinute: 100 }, costs: { accounts: 40 } },
    });
    const read = accountRead(node);
    await untilAnswered(p, read);
    // Spent on node calls, a tenant still gets every answer the feed gives.
    for (let i = 0; i < 20; i++) expect((await readLatest(p.url, read)).status).toBe(200);
  });

  it("a request's purge at a version removes what the feed would serve for the same latest read", async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], {
      admin: { host: '127.0.0.1', port: await freePort() },
      routing: { probeIntervalMs: 50 },
      ...FEED,
    });
    const read = accountRead(node);
    const at = versionOf(await readLatest(p.url, read));
    await untilAnswered(p, read);
    const purged = await call(p.app.adminUrl()!, '/cache/purge', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        request: { method: 'GET', path: `${read.path}?ledger_version=${at}`, headers: { accept: read.accept } },
      }),
    });
    expect(purged.status).toBe(200);
    expect((await readLatest(p.url, read)).headers['x-cache']).toBe('MISS');
  });

  it('answers nothing a purge removed until a node refreshes it', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], { routing: { probeIntervalMs: 50 }, ...FEED });
    const read = accountRead(node);
    await untilAnswered(p, read);
    await p.app.purge({ scope: 'all' }, { shared: false });
    expect((await readLatest(p.url, read)).headers['x-cache']).toBe('MISS');
    await untilAnswered(p, read);
  });

  it('tells why a covered latest read went to a node: nothing stored to judge, then written since', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const p = await proxy([node], { routing: { probeIntervalMs: 50 }, ...FEED });
    const forwards = (reason: string) =>
      metricValue(p.app, 'ledger_proxy_feed_forwards_total', { route: 'account', reason });
    await until(async () => (await metricValue(p.app, 'ledger_proxy_feed_covering')) === 1, 5000, 'the feed covering');
    const read = accountRead(node, 'application/x-bcs');
    expect((await readLatest(p.url, read)).headers['x-cache']).toBe('MISS');
    expect(await forwards('not_stored')).toBe(1);
    await untilAnswered(p, read);
    // The ledger moves to the next version that writes the account's Account resource.
    const model = node.writes!;
    const key = model.universe.keys.find((k) => k.kind === 'account' && read.path.endsWith(k.owner))!;
    const now = node.ledger.info().ledgerVersion;
    let written = now + 1n;
    while (model.lastWriteAt(key, written) !== written) written++;
    node.ledger.advance(Number(written - now));
    await until(
      async () => (await metricValue(p.app, 'ledger_proxy_feed_version')) >= Number(written),
      5000,
      `the feed past version ${written}`,
    );
    const reply = await readLatest(p.url, read);
    expect(reply.headers['x-cache']).toBe('MISS');
    expect(await forwards('written')).toBe(1);
    expect(await forwards('behind')).toBe(0);
  });

  it('answers a 404 of absent state as a hit at the newest version, the bytes a node gives pinned there', async () => {
    const node = await sparseSim(UNIVERSE, { startVersion: 2000n });
    const model = node.writes!;
    // The ledger moves to a version where a table item is absent, and stays absent for 20 versions.
    const items = model.universe.keys.filter((k) => k.kind === 'table_item');
    const absentFor20 = (k: SimUniverseKey, v: bigint) =>
      model.stateAt(k, v) === null && (model.lastWriteAt(k, v + 20n) ?? -1n) <= v;
    let from = node.ledger.info().ledgerVersion;
    while (!items.some((k) => absentFor20(k, from))) from++;
    node.ledger.advance(Number(from - node.ledger.info().ledgerVersion));
    const request = simKeyRequests(items.find((k) => absentFor20(k, from))!).find((r) => r.path.endsWith('/raw_item'))!;
    const absent = {
      label: 'raw_item',
      ...request,
      body: JSON.stringify(request.body),
      accept: 'application/x-bcs' as const,
    };
    const p = await proxy([node], { routing: { probeIntervalMs: 50 }, ...FEED });
    await until(async () => (await metricValue(p.app, 'ledger_proxy_feed_covering')) === 1, 5000, 'the feed covering');
    const first = await readLatest(p.url, absent);
    expect([first.status, first.headers['x-cache']]).toEqual([404, 'MISS']);
    node.ledger.advance(10);
    const moved = versionOf(first) + 10n;
    await until(
      async () => (await metricValue(p.app, 'ledger_proxy_feed_version')) >= Number(moved),
      5000,
      `the feed at version ${moved}`,
    );
    const hit = await untilAnswered(p, absent);
    const at = versionOf(hit);
    expect(at).toBeGreaterThan(versionOf(first));
    expect(hit.body.toString()).toContain(`Ledger version(${at})`);
    const pinned = await call(node.url, `${absent.path}?ledger_version=${at}`, {
      method: 'POST',
      headers: { accept: absent.accept, 'content-type': 'application/json' },
      body: absent.body,
    });
    expect([hit.status, hit.body]).toEqual([pinned.status, pinned.body]);
  });
});
