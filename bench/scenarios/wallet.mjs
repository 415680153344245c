// Scenario 4: a wallet-like workload against a fresh proxy (memory tier only, as
// `npm start`): Zipf-ranked items over 100k, 80% pinned at one version and 20%
// latest, spread over raw_item (BCS), view JSON->JSON and view BCS->BCS. After a
// warm-up, node calls (at the sim) over the measured window ÷ the node calls an
// oracle (lib/oracle.mjs: infinite cache, perfect coalescing, the same staleness
// window) makes for the same requests, recorded as they were sent.
import { cpuMeter, round } from '../lib/procstat.mjs';
import { call } from '../lib/http.mjs';
import { rawItem } from '../lib/requests.mjs';
import { median } from './hit-throughput.mjs';
import { zipfTopShare } from '../lib/workloads.mjs';
import { meets } from '../lib/report.mjs';

const WALLET_TARGET = { op: '<=', value: 1.05 };

const ITEMS = 100_000;
const ZIPF_S = 1.0;
const PINNED_SHARE = 0.8;

const reads = (c) => c.byRoute.raw_item + c.byRoute.view;

/**
 * The workload twice on fresh proxies: with the defaults (every latest read is
 * forwarded, as api.md says) and with `latest.maxStalenessMs: 1000`, the wallet
 * load-shedding setting (docs/caching.md, "Load shedding for wallets").
 */
export async function walletWorkload(ctx) {
  const defaults = await walletRun(ctx, {
    id: 'wallet-upstream-per-call',
    title: "4. Wallet workload: node calls ÷ the oracle's",
    config: {},
    windowMs: 0,
    name: 'proxy-memory',
  });
  const stale = await walletRun(ctx, {
    id: 'wallet-upstream-per-call-staleness',
    title: "4b. Wallet workload, latest.maxStalenessMs: 1000: node calls ÷ the oracle's",
    config: { latest: { maxStalenessMs: 1000 } },
    windowMs: 1000,
    name: 'proxy-staleness',
  });
  return [defaults, stale];
}

async function walletRun(ctx, variant) {
  const { services, load, sim, mode, log, version } = ctx;
  const proxy = await services.proxy(sim.info.url, variant.config, { name: variant.name });
  const sample = rawItem('0x00', version);
  const workload = { kind: 'wallet', items: ITEMS, s: ZIPF_S, pinnedShare: PINNED_SHARE, version: String(version) };
  // How long a node call takes: the oracle's in-flight (coalescing) time. The median
  // of sequential direct calls to the sim, from the orchestrator.
  const times = [];
  for (let i = 0; i < 100; i++) {
    const t0 = performance.now();
    await call(sim.info.url, rawItem('0x01', null));
    times.push(performance.now() - t0);
  }
  const inflightMs = median(times);
  const traceId = (phase) => `${variant.id}-${phase}`;
  const spec = (duration, seed, phase) => ({
    traceId: traceId(phase),
    url: proxy.info.url,
    path: sample.path,
    headers: sample.headers,
    body: sample.body.toString('utf8'),
    connections: mode.walletConnections,
    duration,
    workload: { ...workload, seed },
    countHeader: 'x-cache',
  });

  const c0 = reads(await sim.call('counters'));
  log(`  warm-up ${mode.walletWarmS}s`);
  const warm = await load.call('run', spec(mode.walletWarmS, 1, 'warm'));
  await new Promise((resolve) => setTimeout(resolve, 200));
  await ctx.quiet('wallet');
  const c1 = reads(await sim.call('counters'));
  const meter = cpuMeter({ proxy: proxy.info.pid, sim: sim.info.pid, load: load.info.pid });
  // A different seed: the same distribution, not a replay of the warm-up's sequence.
  const measured = await load.call('run', spec(mode.walletMeasureS, 2, 'measured'));
  const cpu = meter();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const c2 = reads(await sim.call('counters'));
  const stats = await proxy.call('stats');
  await services.stop(proxy);
  const oracle = await load.call('oracle', {
    traceIds: [traceId('warm'), traceId('measured')],
    windowMs: variant.windowMs,
    inflightMs,
  });
  const vsOracle = (c2 - c1) / oracle.nodeCalls;

  if (measured.errors + measured.timeouts > 0)
    throw new Error(`wallet: ${measured.errors} errors, ${measured.timeouts} timeouts`);
  const upstreamPerCall = (c2 - c1) / measured.sent;
  const hits = measured.headerCounts.HIT ?? 0;
  const answered = Object.values(measured.headerCounts).reduce((a, b) => a + b, 0);
  // Latest reads are always forwarded (coalesced only when identical ones overlap),
  // so the latest share bounds node calls per client call from below.
  const generated = measured.workloadStats;
  const latestShare = generated.latest / (generated.latest + generated.pinned);
  const pinnedHitRatio = hits / generated.pinned;
  log(
    `  measured ${Math.round(measured.rps)} req/s, ${c2 - c1} node calls (oracle ${oracle.nodeCalls}: ${oracle.pinnedCalls} pinned, ${oracle.latestCalls} latest) for ${measured.sent} client calls (latest share ${latestShare.toFixed(3)}, pinned hit ratio ${pinnedHitRatio.toFixed(3)}), X-Cache ${JSON.stringify(measured.headerCounts)}`,
  );
  const stale = measured.headerCounts.STALE ?? 0;
  return {
    id: variant.id,
    title: variant.title,
    measured: round(vsOracle, 3),
    unit: '× oracle',
    target: WALLET_TARGET,
    pass: meets(vsOracle, WALLET_TARGET),
    display:
      `${vsOracle.toFixed(3)} (${c2 - c1} node calls vs the oracle's ${oracle.nodeCalls} for the same ${oracle.reads} reads; ${upstreamPerCall.toFixed(3)} per client call; latest reads are ${latestShare.toFixed(2)} of calls` +
      (stale > 0 ? `, ${(stale / generated.latest).toFixed(2)} of them answered stale` : ', each forwarded') +
      `; pinned hit ratio ${pinnedHitRatio.toFixed(2)})`,
    raw: {
      config: variant.config,
      items: ITEMS,
      zipfS: ZIPF_S,
      top1000Share: round(zipfTopShare(ITEMS, ZIPF_S, 1000), 4),
      pinnedShare: PINNED_SHARE,
      pinnedVersion: String(version),
      mix: { raw_item_bcs: 0.5, view_json_json: 0.25, view_bcs_bcs: 0.25 },
      connections: mode.walletConnections,
      warmup: { seconds: mode.walletWarmS, clientCalls: warm.sent, nodeCalls: c1 - c0, xCache: warm.headerCounts },
      measured: {
        seconds: measured.durationS,
        rps: round(measured.rps, 1),
        clientCalls: measured.sent,
        completed: measured.completed,
        nodeCalls: c2 - c1,
        nodeCallsPerClientCall: round(upstreamPerCall, 4),
        xCache: measured.headerCounts,
        hitRatio: round(answered ? hits / answered : null, 4),
        generated,
        pinnedHitRatio: round(pinnedHitRatio, 4),
        statusCodes: measured.statusCodes,
        latencyMs: measured.latencyMs,
        cpu,
      },
      latestShare: round(latestShare, 4),
      oracle: {
        ...oracle,
        windowMs: variant.windowMs,
        inflightMs: round(inflightMs, 3),
        definition: 'bench/lib/oracle.mjs',
      },
      nodeCallsVsOracle: round(vsOracle, 4),
      memoryTier: stats.memory,
    },
  };
}
