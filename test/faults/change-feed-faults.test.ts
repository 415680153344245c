// The change feed fails closed (SPEC-feed rule 4): a page with a wrong hash, an
// unknown variant that cannot be delimited, a gap, a pruned start or a lagging
// node never yields a stale answer. While the fault lasts the feed stops claiming
// and latest reads are forwarded; once it is gone the feed starts afresh and
// answers again. Every reply is held to the sim's answer pinned at its header version.
import { describe, expect, it } from 'vitest';
import type { SimFault, SimNode } from '../../src/sim/index.js';
import { COVERED, hitShare, latestReads, newTally, readAndCompare, type Tally } from '../helpers/change-feed.js';
import { metricValue } from '../helpers/metrics.js';
import { proxy, sparseSim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const UNIVERSE = { accounts: 6, objects: 2, tables: 1, tableKeys: 4, writeRate: 0.04 };

/** A sparse sim and a proxy following its feed, warmed so covered reads are hits. */
async function following() {
  const node = await sparseSim(UNIVERSE, { startVersion: 3000n });
  const { app, url } = await proxy([node], {
    routing: { probeIntervalMs: 50 },
    latest: { changeFeed: { enabled: true } },
  });
  const reads = latestReads(node).filter((r) => (COVERED as readonly string[]).includes(r.label));
  await until(() => app.watermark.current() !== null, 5000, 'a watermark');
  const warm = newTally();
  await readAndCompare(node, [url], reads, warm);
  node.ledger.advance(1);
  await readAndCompare(node, [url], reads, warm);
  expect(warm.differences).toEqual([]);
  return { node, app, url, reads };
}

/** Rounds of one version each, every covered read held to the node. */
async function rounds(node: SimNode, url: string, reads: ReturnType<typeof latestReads>, n: number): Promise<Tally> {
  const tally = newTally();
  for (let i = 0; i < n; i++) {
    node.ledger.advance(1);
    await readAndCompare(node, [url], reads, tally);
  }
  return tally;
}

const FAULTS: Array<{ name: string; fault: Omit<SimFault, 'range'>; reason: string | string[] }> = [
  { name: 'a wrong transaction hash', fault: { mode: 'feedTransactionHash' }, reason: 'transaction_hash' },
  { name: 'a wrong state change hash', fault: { mode: 'feedStateChangeHash' }, reason: 'state_change_hash' },
  {
    name: 'an unknown TransactionInfo variant',
    fault: { mode: 'feedUnknownVariant', variant: 'transaction_info' },
    reason: 'unknown_variant',
  },
  {
    name: 'an unknown WriteOp variant',
    fault: { mode: 'feedUnknownVariant', variant: 'write_op' },
    reason: 'unknown_variant',
  },
  { name: 'a page that skips a version', fault: { mode: 'feedGap', gap: 'skip' }, reason: 'not_contiguous' },
  { name: 'a page that starts one late', fault: { mode: 'feedGap', gap: 'shift' }, reason: 'not_contiguous' },
  { name: 'a pruned start (410)', fault: { mode: 'feedPruned' }, reason: 'pruned' },
  {
    name: 'a pruned start as older nodes answer it (500)',
    fault: { mode: 'feedPruned', status: 500 },
    reason: 'pruned',
  },
];

describe('the change feed fails closed', () => {
  for (const { name, fault, reason } of FAULTS) {
    it(`${name}: no stale answer, reads forwarded while it lasts, answers again after`, async () => {
      const { node, app, url, reads } = await following();
      const from = node.ledger.info().ledgerVersion + 1n;
      node.faults.set({ ...fault, range: { from, to: from + 3n } } as SimFault);
      const during = await rounds(node, url, reads, 4);
      expect(during.differences).toEqual([]);
      const reasons = Array.isArray(reason) ? reason : [reason];
      await until(
        async () => {
          let stops = 0;
          for (const r of reasons) stops += await metricValue(app, 'ledger_proxy_feed_stops_total', { reason: r });
          return stops > 0;
        },
        5000,
        `a stop for ${reasons.join(' or ')}`,
      );
      node.faults.clear();
      // After the fault: the feed starts afresh, and once a node has refreshed the
      // answers it judges them again.
      const after = await rounds(node, url, reads, 6);
      expect(after.differences).toEqual([]);
      expect(await metricValue(app, 'ledger_proxy_feed_covering')).toBe(1);
      const last = await rounds(node, url, reads, 1);
      expect(last.differences).toEqual([]);
      expect(hitShare(last, COVERED)).toBeGreaterThan(0.3);
    });
  }

  for (const variant of ['authenticator', 'event'] as const) {
    it(`an unknown ${variant} variant is delimited by hash: the feed goes on, exact`, async () => {
      const { node, app, url, reads } = await following();
      const from = node.ledger.info().ledgerVersion + 1n;
      node.faults.set({ mode: 'feedUnknownVariant', variant, range: { from, to: from + 5n } } as SimFault);
      const during = await rounds(node, url, reads, 6);
      expect(during.differences).toEqual([]);
      expect(await metricValue(app, 'ledger_proxy_feed_stops_total')).toBe(0);
      expect(await metricValue(app, 'ledger_proxy_feed_delimited_total')).toBeGreaterThan(0);
      expect(hitShare(during, COVERED)).toBeGreaterThan(0.3);
    });
  }

  it("a hundred versions at once with an unknown authenticator, past one page's search budget: the feed goes on, exact", async () => {
    const { node, app, url, reads } = await following();
    const from = node.ledger.info().ledgerVersion + 1n;
    const to = from + 99n;
    node.faults.set({ mode: 'feedUnknownVariant', variant: 'authenticator', range: { from, to } } as SimFault);
    node.ledger.advance(100);
    await until(
      async () => (await metricValue(app, 'ledger_proxy_feed_version')) >= Number(to),
      20_000,
      `the feed past version ${to}`,
    );
    expect(await metricValue(app, 'ledger_proxy_feed_stops_total')).toBe(0);
    expect(await metricValue(app, 'ledger_proxy_feed_delimited_total')).toBeGreaterThan(40);
    const after = await rounds(node, url, reads, 2);
    expect(after.differences).toEqual([]);
  });

  it('a node that lags serves what it has; nothing beyond is claimed', async () => {
    const { node, url, reads } = await following();
    const from = node.ledger.info().ledgerVersion + 1n;
    node.faults.set({ mode: 'feedLag', versions: 3n, range: { from, to: from + 10n } } as SimFault);
    const during = await rounds(node, url, reads, 5);
    expect(during.differences).toEqual([]);
  });
});
