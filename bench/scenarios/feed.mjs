// Scenario 4c: the wallet workload over a ledger that writes (the sim's sparse
// model: one key in fifty written per version, a few hot ones), twice on fresh
// proxies: latest.changeFeed off, then on. Reports node calls with the feed ÷ node
// calls without it (its own page calls included), and the share of the latest reads
// of covered routes (an account, its coin store, a raw_item) answered without a
// node. Views, a fifth and more of the reads, are always forwarded. 4e, what
// following the feed costs a hit, is feed-hits.mjs.
import { cpuMeter, round } from '../lib/procstat.mjs';
import { WALLET_WRITES_MIX } from '../lib/workloads.mjs';
import { meets } from '../lib/report.mjs';
import { exactlyAnswerable } from '../lib/feed-oracle.mjs';

/** A sim whose ledger moves on and writes as it goes. */
export const FEED_SIM_PARAMS = {
  versionsPerSecond: 20,
  startVersion: '100000',
  writes: { model: 'sparse', accounts: 400, objects: 8, tables: 4, tableKeys: 100, writeRate: 0.02 },
};

const NODE_CALLS_TARGET = { op: '<=', value: 0.6 };
const ANSWERED_TARGET = { op: '>=', value: 0.8 };
const ZIPF_S = 1.0;
const PINNED_SHARE = 0.8;

const nodeCalls = (c) => c.total;

export async function feedWorkload(ctx) {
  const { sim, log } = ctx;
  const universe = await sim.call('universe');
  const off = await feedRun(ctx, universe, false);
  const on = await feedRun(ctx, universe, true);
  const ratio = on.nodeCalls / on.clientCalls / (off.nodeCalls / off.clientCalls);
  const answered = on.feedAnswers / on.generated.latestCovered;
  const oracle = on.oracle;
  const ceiling = oracle.answerable / oracle.reads;
  const ofAllowed = oracle.answered / oracle.answerable;
  const forwards = Object.entries(on.feedForwards)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  log(
    `  feed off: ${off.nodeCalls} node calls for ${off.clientCalls} client calls; on: ${on.nodeCalls} (${on.pages} of them feed pages) for ${on.clientCalls}; ${on.feedAnswers} of ${on.generated.latestCovered} covered latest reads answered from the feed; of the ${oracle.reads} replies the load saw, ${oracle.answered} hits where an exact proxy could answer ${oracle.answerable} (lib/feed-oracle.mjs); the rest went to a node: ${forwards}`,
  );
  const raw = { mix: WALLET_WRITES_MIX, pinnedShare: PINNED_SHARE, zipfS: ZIPF_S, sim: FEED_SIM_PARAMS, off, on };
  return [
    {
      id: 'feed-node-calls',
      title: '4c. Wallet workload over writes, latest.changeFeed on: node calls per client call ÷ feed off',
      measured: round(ratio, 3),
      unit: '× feed off',
      target: NODE_CALLS_TARGET,
      pass: meets(ratio, NODE_CALLS_TARGET),
      display: `${ratio.toFixed(3)} (${on.nodeCalls} node calls, ${on.pages} of them pages, for ${on.clientCalls} client calls; ${off.nodeCalls} for ${off.clientCalls} with the feed off)`,
      raw,
    },
    {
      id: 'feed-answered',
      title: '4d. Covered latest reads answered without a node (latest.changeFeed on)',
      measured: round(answered, 3),
      unit: 'share',
      target: ANSWERED_TARGET,
      pass: meets(answered, ANSWERED_TARGET),
      display: `${answered.toFixed(3)} (${on.feedAnswers} of ${on.generated.latestCovered} latest reads of an account, a coin store or a raw_item; an exact oracle could answer ${ceiling.toFixed(3)} of the same reads, and the proxy answered ${ofAllowed.toFixed(3)} of what exactness allows; the rest went to a node: ${forwards})`,
      raw,
    },
  ];
}

async function feedRun(ctx, universe, enabled) {
  const { services, load, sim, mode, log, version } = ctx;
  const name = enabled ? 'proxy-feed-on' : 'proxy-feed-off';
  const proxy = await services.proxy(sim.info.url, {
    routing: { probeIntervalMs: 250 },
    latest: { changeFeed: { enabled } },
  });
  const spec = (duration, seed) => ({
    traceId: `${name}-${seed}`,
    url: proxy.info.url,
    path: '/v1',
    connections: mode.walletConnections,
    duration,
    workload: {
      kind: 'walletWrites',
      ...universe,
      s: ZIPF_S,
      pinnedShare: PINNED_SHARE,
      version: String(version),
      seed,
      observeCovered: enabled,
    },
    countHeader: 'x-cache',
  });
  log(`  ${name}: warm-up ${mode.walletWarmS}s`);
  const warm = await load.call('run', spec(mode.walletWarmS, 1));
  await ctx.quiet(name);
  const c1 = await sim.call('counters');
  const counts1 = feedCounts(await proxy.call('metrics'));
  const meter = cpuMeter({ proxy: proxy.info.pid, sim: sim.info.pid, load: load.info.pid });
  const measured = await load.call('run', spec(mode.walletMeasureS, 2));
  const cpu = meter();
  const c2 = await sim.call('counters');
  const counts2 = feedCounts(await proxy.call('metrics'));
  await services.stop(proxy);
  if (measured.errors + measured.timeouts > 0)
    throw new Error(`${name}: ${measured.errors} errors, ${measured.timeouts} timeouts`);
  return {
    clientCalls: measured.sent,
    nodeCalls: nodeCalls(c2) - nodeCalls(c1),
    pages: (c2.byRoute.feed ?? 0) - (c1.byRoute.feed ?? 0),
    feedAnswers: counts2.answers - counts1.answers,
    feedForwards: forwardsBetween(counts1, counts2),
    oracle: enabled ? exactlyAnswerable(FEED_SIM_PARAMS.writes, warm.observed, measured.observed) : null,
    generated: measured.workloadStats,
    xCache: measured.headerCounts,
    statusCodes: measured.statusCodes,
    cpu,
  };
}

/**
 * From a /metrics text: ledger_proxy_feed_answers_total summed over its routes, and
 * ledger_proxy_feed_forwards_total summed by reason.
 */
function feedCounts(text) {
  const counts = { answers: 0, forwards: {} };
  for (const line of text.split('\n')) {
    const value = Number(line.split(' ').at(-1));
    if (line.startsWith('ledger_proxy_feed_answers_total{')) counts.answers += value;
    else if (line.startsWith('ledger_proxy_feed_forwards_total{')) {
      const reason = /reason="([^"]+)"/.exec(line)?.[1] ?? '?';
      counts.forwards[reason] = (counts.forwards[reason] ?? 0) + value;
    }
  }
  return counts;
}

/** What `after` counts more than `before`, reason by reason. */
function forwardsBetween(before, after) {
  const out = {};
  for (const [reason, n] of Object.entries(after.forwards)) out[reason] = n - (before.forwards[reason] ?? 0);
  return out;
}
