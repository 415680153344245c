// cache.verify: a pinned answer is stored only once a second node answered the same
// bytes at its version. Two sims in front of one proxy, one of them lying
// (wrongBody) or configured differently; what reached each sim, X-Cache on a
// repeat, ledger_proxy_verify_total and the log say what happened.
import { describe, expect, it } from 'vitest';
import { SIM_MODULE_ADDRESS, type SimNode } from '../../src/sim/index.js';
import { cacheOf, hex, itemAt, PRESENT_KEYS } from '../helpers/cache.js';
import { metricValue } from '../helpers/metrics.js';
import type { App } from '../../src/app.js';
import { call, capturedLog, proxy, rawItem, sim, QUIET } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const START = 1_000_004n;
const AT = START - 10n;
const KEY = PRESENT_KEYS[0];

function verifying(mode: 'off' | 'sample' | 'always', sampleRatio?: number): Record<string, unknown> {
  return { ...QUIET, cache: { verify: { mode, ...(sampleRatio === undefined ? {} : { sampleRatio }) } } };
}

const checks = (app: App, outcome: string): Promise<number> =>
  metricValue(app, 'ledger_proxy_verify_total', { outcome });
const allChecks = (app: App): Promise<number> => metricValue(app, 'ledger_proxy_verify_total');
const itemCalls = (node: SimNode): number => node.counters.byRoute.raw_item;

async function settled(app: App, outcome: string, count = 1): Promise<void> {
  await until(async () => (await checks(app, outcome)) === count, 5000, `${count} check(s) ${outcome}`);
}

describe('cache.verify: always', () => {
  it('two nodes that agree: the reply does not wait for the second; the answer is stored once it answered the same bytes', async () => {
    const first = await sim({ startVersion: START });
    const second = await sim({ startVersion: START });
    const { app, url } = await proxy([first, second], verifying('always'));
    second.faults.set({ mode: 'slow', delayMs: 1000, routes: ['raw_item'] });

    const miss = await rawItem(url, hex(KEY), { version: AT });
    expect([miss.status, cacheOf(miss)]).toEqual([200, 'MISS']);
    expect(miss.body.equals(itemAt(KEY, AT))).toBe(true);
    expect(await allChecks(app), 'the reply came before the second node answered').toBe(0);
    expect(cacheOf(await rawItem(url, hex(KEY), { version: AT })), 'not stored while the check runs').toBe('MISS');

    await settled(app, 'agreed');
    const calls = [itemCalls(first), itemCalls(second)];
    expect(calls[1], 'one second call: a check of the same key already running stores nothing').toBe(1);
    const hit = await rawItem(url, hex(KEY), { version: AT });
    expect(cacheOf(hit)).toBe('HIT memory');
    expect(hit.body.equals(miss.body)).toBe(true);
    expect([itemCalls(first), itemCalls(second)]).toEqual(calls);
    expect(await checks(app, 'disagreed')).toBe(0);
  });

  it('a second node that answers other bytes: not stored, counted and logged with both nodes; no node is blamed', async () => {
    const honest = await sim({ startVersion: START });
    const liar = await sim({ startVersion: START });
    const { logger, lines } = capturedLog();
    const { app, url } = await proxy([honest, liar], verifying('always'), { logger });
    liar.faults.set({ mode: 'wrongBody', routes: ['raw_item'] });

    const first = await rawItem(url, hex(KEY), { version: AT });
    expect(first.body.equals(itemAt(KEY, AT)), 'the first node answers the client').toBe(true);
    await settled(app, 'disagreed');
    const again = await rawItem(url, hex(KEY), { version: AT });
    expect(cacheOf(again)).toBe('MISS');
    await settled(app, 'disagreed', 2);
    expect([itemCalls(honest), itemCalls(liar)]).toEqual([2, 2]);
    expect(await checks(app, 'agreed')).toBe(0);

    const logged = lines.filter(
      (l) => l.msg === 'two nodes answered one read differently: the answer is not stored (cache.verify)',
    );
    expect(logged[0]).toMatchObject({
      level: 40,
      family: 'raw_item',
      route: 'raw_item',
      version: String(AT),
      first: 'node0',
      second: 'node1',
      differs: 'body',
    });
    expect(await metricValue(app, 'ledger_proxy_upstream_misbehaving_total')).toBe(0);
    expect(app.pool.nodes.map((n) => app.pool.health(n))).toEqual(['healthy', 'healthy']);
  });

  it('when the node asked first lies: the client gets its answer as a miss, and it is not stored', async () => {
    const liar = await sim({ startVersion: START });
    const honest = await sim({ startVersion: START });
    const { app, url } = await proxy([liar, honest], verifying('always'));
    liar.faults.set({ mode: 'wrongBody', routes: ['raw_item'] });
    const lie = await rawItem(url, hex(KEY), { version: AT });
    expect(lie.body.equals(itemAt(KEY, AT))).toBe(false);
    await settled(app, 'disagreed');
    liar.faults.clear();
    const truth = await rawItem(url, hex(KEY), { version: AT });
    expect(cacheOf(truth)).toBe('MISS');
    expect(truth.body.equals(itemAt(KEY, AT))).toBe(true);
    await settled(app, 'agreed');
    expect(cacheOf(await rawItem(url, hex(KEY), { version: AT }))).toBe('HIT memory');
  });

  it('a latest answer is stored at its header version only once another node answered the same there', async () => {
    const first = await sim({ startVersion: START });
    const second = await sim({ startVersion: START });
    const { app, url } = await proxy([first, second], verifying('always'));
    const latest = await rawItem(url, hex(KEY));
    expect(latest.headers['x-node-ledger-version']).toBe(String(START));
    await settled(app, 'agreed');
    expect(second.counters.requests.filter((r) => r.url.includes('raw_item')).map((r) => r.url)).toEqual([
      `/v1/tables/${'0x' + 'ab'.repeat(32)}/raw_item?ledger_version=${START}`,
    ]);
    expect(cacheOf(await rawItem(url, hex(KEY), { version: START }))).toBe('HIT memory');

    second.faults.set({ mode: 'wrongBody', routes: ['raw_item'] });
    await rawItem(url, hex(PRESENT_KEYS[1]));
    await settled(app, 'disagreed');
    expect(cacheOf(await rawItem(url, hex(PRESENT_KEYS[1]), { version: START }))).toBe('MISS');
  });

  it('a latest answer is kept for stale replies only once another node answered the same at its version', async () => {
    const first = await sim({ startVersion: START });
    const second = await sim({ startVersion: START });
    const { app, url } = await proxy([first, second], {
      ...verifying('always'),
      latest: { maxStalenessMs: 60_000 },
    });
    second.faults.set({ mode: 'wrongBody', routes: ['raw_item'] });
    expect(cacheOf(await rawItem(url, hex(KEY)))).toBe('MISS');
    await settled(app, 'disagreed');
    expect(cacheOf(await rawItem(url, hex(KEY))), 'an answer two nodes disagree on is not replayed').toBe('MISS');
    await settled(app, 'disagreed', 2);
    expect(cacheOf(await rawItem(url, hex(KEY), { version: START }))).toBe('MISS');

    second.faults.clear();
    expect(cacheOf(await rawItem(url, hex(KEY)))).toBe('MISS');
    await settled(app, 'agreed');
    const stale = await rawItem(url, hex(KEY));
    expect(cacheOf(stale), 'an answer another node agreed on is replayed within the bound').toBe('STALE');
    expect(stale.body.equals(itemAt(KEY, START))).toBe(true);
  });

  it('nodes whose config renders a page differently (max page size) never agree on it: not stored; a page both render alike is', async () => {
    const first = await sim({ startVersion: START });
    const second = await sim({ startVersion: START, maxPageSize: 3 });
    const { app, url } = await proxy([first, second], verifying('always'));
    const path = `/v1/accounts/${SIM_MODULE_ADDRESS}/resources?ledger_version=${AT}`;
    expect(cacheOf(await call(url, path))).toBe('MISS');
    await settled(app, 'disagreed');
    expect(cacheOf(await call(url, path))).toBe('MISS');
    expect(cacheOf(await call(url, `${path}&limit=3`))).toBe('MISS');
    await settled(app, 'agreed');
    expect(cacheOf(await call(url, `${path}&limit=3`))).toBe('HIT memory');
  });

  it('with one node: a warning at start, and nothing is stored (unverified)', async () => {
    const only = await sim({ startVersion: START });
    const { logger, lines } = capturedLog();
    const { app, url } = await proxy([only], verifying('always'), { logger });
    expect(
      lines.find(
        (l) => l.level === 40 && String(l.msg).startsWith("cache.verify.mode is 'always' but only one upstream"),
      ),
    ).toMatchObject({ mode: 'always', upstreams: 1 });
    for (let i = 0; i < 2; i++) expect(cacheOf(await rawItem(url, hex(KEY), { version: AT }))).toBe('MISS');
    await settled(app, 'unverified', 2);
    expect(itemCalls(only)).toBe(2);
  });

  it('a second node that fails: unverified, not stored, and the client got its answer', async () => {
    const first = await sim({ startVersion: START });
    const second = await sim({ startVersion: START });
    const { app, url } = await proxy([first, second], verifying('always'));
    second.faults.set({ mode: 'status500', routes: ['raw_item'] });
    const reply = await rawItem(url, hex(KEY), { version: AT });
    expect(reply.status).toBe(200);
    await settled(app, 'unverified');
    expect(cacheOf(await rawItem(url, hex(KEY), { version: AT }))).toBe('MISS');
  });
});

describe('cache.verify: sample and off', () => {
  it('sample with sampleRatio 0 is off: stored at once, no second call, nothing counted', async () => {
    const first = await sim({ startVersion: START });
    const second = await sim({ startVersion: START });
    const { app, url } = await proxy([first, second], verifying('sample', 0));
    await rawItem(url, hex(KEY), { version: AT });
    expect(cacheOf(await rawItem(url, hex(KEY), { version: AT }))).toBe('HIT memory');
    expect([itemCalls(first), itemCalls(second), await allChecks(app)]).toEqual([1, 0, 0]);
  });

  it('sample with sampleRatio 1 is always: a liar second node keeps the answer out', async () => {
    const honest = await sim({ startVersion: START });
    const liar = await sim({ startVersion: START });
    const { app, url } = await proxy([honest, liar], verifying('sample', 1));
    liar.faults.set({ mode: 'wrongBody', routes: ['raw_item'] });
    await rawItem(url, hex(KEY), { version: AT });
    await settled(app, 'disagreed');
    expect(cacheOf(await rawItem(url, hex(KEY), { version: AT }))).toBe('MISS');
    liar.faults.clear();
    await settled(app, 'agreed');
    expect(cacheOf(await rawItem(url, hex(KEY), { version: AT }))).toBe('HIT memory');
  });

  it('off (the default): one node call, stored at once, the second node never asked', async () => {
    const first = await sim({ startVersion: START });
    const liar = await sim({ startVersion: START });
    const { app, url } = await proxy([first, liar], QUIET);
    liar.faults.set({ mode: 'wrongBody', routes: ['raw_item'] });
    await rawItem(url, hex(KEY), { version: AT });
    await rawItem(url, hex(KEY));
    expect(cacheOf(await rawItem(url, hex(KEY), { version: AT }))).toBe('HIT memory');
    expect(cacheOf(await rawItem(url, hex(KEY), { version: START }))).toBe('HIT memory');
    expect([itemCalls(first), itemCalls(liar), await allChecks(app)]).toEqual([2, 0, 0]);
  });
});
