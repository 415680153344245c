// A node whose feed pages verify and lie (feedForged: versions that wrote keys shown
// writing nothing, every hash made to match). Its hashes cannot tell: alone, its pages
// let stale answers through as the latest. With cache.verify each page is taken only
// once a second node sent the same bytes, so the lie is never taken, and the feed
// goes on once the nodes agree again. Every reply is held to the honest node's answer
// pinned at the reply's version.
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { SimNode } from '../../src/sim/index.js';
import { COVERED, hitShare, latestReads, newTally, readAndCompare, type Tally } from '../helpers/change-feed.js';
import { metricValue } from '../helpers/metrics.js';
import { proxy, sparseSim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const UNIVERSE = { accounts: 6, objects: 2, tables: 1, tableKeys: 4, writeRate: 0.04 };
const FORGED_VERSIONS = 12n;

const checks = (app: App, outcome: string): Promise<number> =>
  metricValue(app, 'ledger_proxy_feed_page_checks_total', { outcome });

/**
 * Sparse sims of one ledger, a proxy following the feed in front of them (the first
 * listed is asked first), warmed so covered reads are hits. Replies are held to the last
 * node's pinned answers: a forged feed page leaves a node's own pinned answers true.
 */
async function following(count: number, verify: 'off' | 'always') {
  const nodes: SimNode[] = [];
  for (let i = 0; i < count; i++) nodes.push(await sparseSim(UNIVERSE, { startVersion: 3000n }));
  const { app, url } = await proxy(nodes, {
    routing: { probeIntervalMs: 50 },
    latest: { changeFeed: { enabled: true } },
    cache: { verify: { mode: verify } },
  });
  const honest = nodes[count - 1]!;
  const reads = latestReads(honest).filter((r) => (COVERED as readonly string[]).includes(r.label));
  await until(() => app.watermark.current() !== null, 5000, 'a watermark');
  const advance = (): void => {
    for (const node of nodes) node.ledger.advance(1);
  };
  const round = async (tally: Tally): Promise<void> => {
    advance();
    await readAndCompare(honest, [url], reads, tally);
  };
  const warm = newTally();
  await readAndCompare(honest, [url], reads, warm);
  await round(warm);
  await round(warm);
  expect(warm.differences).toEqual([]);
  return { nodes, app, round };
}

describe('a node whose feed pages verify and lie', () => {
  it('alone, with cache.verify off: its pages are taken, and answers go stale (what the check is for)', async () => {
    const { nodes, round } = await following(1, 'off');
    const from = nodes[0]!.ledger.info().ledgerVersion + 1n;
    nodes[0]!.faults.set({ mode: 'feedForged', range: { from, to: from + FORGED_VERSIONS } });
    const during = newTally();
    for (let i = 0n; i < FORGED_VERSIONS && during.differences.length === 0; i++) await round(during);
    expect(during.differences.length).toBeGreaterThan(0);
  });

  it('beside an honest node, with cache.verify always: no page of its is taken, no stale answer, and the feed goes on after', async () => {
    const { nodes, app, round } = await following(2, 'always');
    expect(await checks(app, 'agreed')).toBeGreaterThan(0);
    const liar = nodes[0]!;
    const from = liar.ledger.info().ledgerVersion + 1n;
    liar.faults.set({ mode: 'feedForged', range: { from, to: from + FORGED_VERSIONS } });
    const during = newTally();
    for (let i = 0n; i < FORGED_VERSIONS; i++) await round(during);
    expect(during.differences).toEqual([]);
    expect(await checks(app, 'disagreed')).toBeGreaterThan(0);
    liar.faults.clear();
    const after = newTally();
    for (let i = 0; i < 6; i++) await round(after);
    expect(after.differences).toEqual([]);
    await until(async () => (await metricValue(app, 'ledger_proxy_feed_covering')) === 1, 5000, 'the feed covering');
    const last = newTally();
    await round(last);
    expect(last.differences).toEqual([]);
    expect(hitShare(last, COVERED)).toBeGreaterThan(0.3);
  });
});
