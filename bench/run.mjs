// npm run bench [-- --quick] [-- --only=hit,one-key,guard,latency,wallet,feed,feed-hits,burst,memory,scaling,tenants,feed-decode,walk,profile] [-- --routes=raw_item,view_bcs] [-- --no-profile] [-- --no-write] [-- --update-budget]
// Runs every scenario against real processes on 127.0.0.1 (see bench/README.md),
// then writes bench/results/latest.json, bench/results/latest.svg and the latest
// results of bench/README.md (quick or --only runs write quick.* / partial.* instead).
// Needs `npm run build` first (the npm script does it). The speed guard (scenarios/guard.mjs)
// fails the run when the proxy's CPU per hit or miss exceeds bench/budget.json by more than
// its tolerance; --update-budget rewrites that file from the run instead.
import { existsSync, mkdirSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CAN_PIN } from './lib/child.mjs';
import { writeReport } from './lib/report.mjs';
import { waitQuiet } from './lib/procstat.mjs';
import { CLIENT_CPU, SERVER_CPU, Services } from './lib/services.mjs';
import { burstCoalescing } from './scenarios/coalescing.mjs';
import { feedDecode } from './scenarios/feed-decode.mjs';
import { cpuGuard } from './scenarios/guard.mjs';
import { hitThroughput } from './scenarios/hit-throughput.mjs';
import { memoryFootprint } from './scenarios/memory.mjs';
import { missOverhead } from './scenarios/miss-latency.mjs';
import { oneKey } from './scenarios/one-key.mjs';
import { PROFILE_PATHS, profilePath } from './scenarios/profile.mjs';
import { tenantShedding } from './scenarios/tenants.mjs';
import { walletWorkload } from './scenarios/wallet.mjs';
import { FEED_SIM_PARAMS, feedWorkload } from './scenarios/feed.mjs';
import { feedHitCost } from './scenarios/feed-hits.mjs';
import { workerScaling } from './scenarios/scaling.mjs';
import { hitWalk } from './scenarios/walk.mjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const only = argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const profile = !argv.includes('--no-profile');
const write = !argv.includes('--no-write');
const updateBudget = argv.includes('--update-budget');
/** Hit routes to measure (scenario 1 and the profiles), by id of lib/routes.mjs; all by default. A run with some is a partial run. */
const routeIds = argv
  .find((a) => a.startsWith('--routes='))
  ?.slice('--routes='.length)
  .split(',');

const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(new URL('../dist/app.js', import.meta.url))) {
  console.error('dist/ is missing: run `npm run build` first (npm run bench does it)');
  process.exit(1);
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });

/** Durations and sizes per mode: full stays around 5 minutes, quick (CI) only proves the bench works: its sizes are too small to judge anything. */
const MODES = {
  full: {
    name: 'full',
    warmS: 2,
    roundWarmS: 1,
    measureS: 3,
    rounds: 5,
    hitConnections: 50,
    hitKeys: 10_000,
    latencyRate: 500,
    latencyConnections: 1,
    walletConnections: 32,
    walletWarmS: 20,
    walletMeasureS: 10,
    burst: 100,
    memoryEntries: 1_000_000,
    httpFillEntries: 30_000,
    profileS: 8,
    quietBudgetS: 90,
  },
  quick: {
    name: 'quick',
    warmS: 0.3,
    measureS: 0.7,
    rounds: 1,
    hitConnections: 50,
    hitKeys: 500,
    latencyRate: 500,
    latencyConnections: 1,
    walletConnections: 32,
    walletWarmS: 1,
    walletMeasureS: 1.5,
    burst: 100,
    memoryEntries: 200_000,
    httpFillEntries: 5_000,
    profileS: 1,
    quietBudgetS: 2,
  },
};
const mode = quick ? MODES.quick : MODES.full;

const SCENARIOS = [
  { id: 'hit', run: hitThroughput },
  { id: 'one-key', run: oneKey },
  { id: 'guard', run: cpuGuard },
  // The sim shares the proxy's CPU here, so straight and proxied calls cross between CPUs equally often.
  { id: 'latency', run: missOverhead, simCpu: SERVER_CPU },
  { id: 'wallet', run: walletWorkload },
  // A ledger that moves on and writes: the change feed's scenario.
  { id: 'feed', run: feedWorkload, simParams: FEED_SIM_PARAMS },
  { id: 'feed-hits', run: feedHitCost, simParams: FEED_SIM_PARAMS },
  { id: 'burst', run: burstCoalescing },
  { id: 'memory', run: memoryFootprint },
  { id: 'scaling', run: workerScaling },
  { id: 'tenants', run: tenantShedding },
  // The change feed's reader alone: no node, no proxy.
  { id: 'feed-decode', run: feedDecode, sim: false },
  // One memory hit stepped through in a process of its own: no node, no load.
  { id: 'walk', run: hitWalk, sim: false },
];

const started = Date.now();
const log = (msg) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}`);

const services = new Services();
const stopping = () => {
  void services.stopAll().finally(() => process.exit(130));
};
process.once('SIGINT', stopping);
process.once('SIGTERM', stopping);

// Before each measurement: wait (bounded per run, then measure anyway) for other
// processes on the machine to quieten, so a shared machine's bursts do not land in
// the figures. Every wait and the level measured are recorded.
// A ledger that stands still, with history enough for 10,000 distinct transactions
// and blocks (the hit routes by version and by height).
const SIM_PARAMS = { versionsPerSecond: 0, startVersion: '100000' };

const quietLog = [];
let quietLeftMs = mode.quietBudgetS * 1000;
async function quiet(label) {
  if (quietLeftMs <= 0) return;
  const r = await waitQuiet({ pids: services.pids(), maxWaitMs: Math.min(quietLeftMs, 15_000) });
  quietLeftMs -= r.waitedMs;
  quietLog.push({ label, ...r });
  if (r.waitedMs > 600)
    log(`  waited ${(r.waitedMs / 1000).toFixed(1)}s for other processes to quieten (now ${r.others ?? '?'} CPU)`);
}

const results = [];
const failures = [];
const profiles = [];
try {
  log(
    `mode ${mode.name}; pinning ${CAN_PIN ? `servers to CPU ${SERVER_CPU}, load/sim/redis to CPU ${CLIENT_CPU}` : 'off'}`,
  );
  const load = await services.load();
  for (const scenario of SCENARIOS) {
    if (only && !only.includes(scenario.id)) continue;
    log(`scenario ${scenario.id}`);
    // A fresh simulated node per scenario that calls one: its counters and ledger start clean.
    const sim =
      scenario.sim === false ? null : await services.sim(scenario.simParams ?? SIM_PARAMS, { cpu: scenario.simCpu });
    const version = sim === null ? null : BigInt((await sim.call('ledger')).ledgerVersion);
    try {
      const out = await scenario.run({ services, load, sim, mode, log, version, root, quiet, routeIds, updateBudget });
      for (const r of [out].flat()) {
        results.push(r);
        log(
          `  => ${r.title}: ${r.display} target ${r.target.op} ${r.target.value} ${r.skipped ? 'SKIPPED' : r.pass ? 'PASS' : 'FAIL'}`,
        );
      }
    } catch (err) {
      failures.push({ scenario: scenario.id, error: err.stack ?? String(err) });
      log(`  !! ${scenario.id} failed: ${err.stack ?? err}`);
    } finally {
      if (sim !== null) await services.stop(sim);
    }
  }
  // Quick mode (CI) proves profiling works on one hit path and the miss path; full runs profile every route.
  const profilePaths = routeIds
    ? PROFILE_PATHS.filter((p) => p === 'miss' || routeIds.some((id) => p.endsWith(`-hit-${id}`)))
    : PROFILE_PATHS;
  for (const path of quick ? [profilePaths[0], 'miss'] : profilePaths) {
    if (!profile || (only && !only.includes('profile'))) break;
    log(`profile: ${path} path (V8 CPU profile of the measured window, through node:inspector)`);
    const sim = await services.sim(SIM_PARAMS);
    try {
      const p = await profilePath(
        { services, load, sim, mode, log, version: BigInt((await sim.call('ledger')).ledgerVersion), root, quiet },
        path,
      );
      profiles.push(p);
      log(
        `  top self time: ${p.top
          .slice(0, 6)
          .map((f) => `${f.function} ${f.selfPercent}%`)
          .join(', ')}`,
      );
    } catch (err) {
      failures.push({ scenario: `profile ${path}`, error: err.stack ?? String(err) });
      log(`  !! profile ${path} failed: ${err.stack ?? err}`);
    } finally {
      await services.stop(sim);
    }
  }
} finally {
  await services.stopAll();
}

const machine = {
  cpus: availableParallelism(),
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryBytes: totalmem(),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  date: new Date().toISOString(),
  pinning: CAN_PIN
    ? { servers: SERVER_CPU, loadSimRedis: CLIENT_CPU, simInLatencyScenario: SERVER_CPU, scalingProxies: '0,1' }
    : null,
  loadGenerator:
    'bench/lib/rawload.mjs for hits and the speed guard (scenarios 1, 1n, 2, 7, G), autocannon for the others; own process',
};
const report = {
  machine,
  mode,
  durationSeconds: Math.round((Date.now() - started) / 100) / 10,
  scenarios: results,
  profiles,
  failures,
  quietWaits: quietLog,
};
if (write) {
  // Only a full run of every scenario replaces the published figures (latest.*, bench/README.md);
  // quick or partial runs write quick.* / partial.* (git-ignored) and leave bench/README.md alone.
  const name = quick ? 'quick' : only || routeIds ? 'partial' : 'latest';
  const { table, written } = writeReport(report, { root, name, readme: name === 'latest' });
  console.log(`\n${table}\n`);
  log(`wrote ${written.join(', ')}`);
}
log(
  `done in ${report.durationSeconds}s: ${results.filter((r) => r.pass).length}/${results.filter((r) => !r.skipped).length} targets met${failures.length ? `, ${failures.length} scenario(s) failed to run` : ''}`,
);
// Targets are reported, not asserted: a missed target is a result. A scenario that could not
// run is an error, and so is the speed guard's budget exceeded.
const guardFailed = results.filter((r) => r.asserted && !r.pass);
if (guardFailed.length > 0)
  log(`speed guard failed: ${guardFailed.map((r) => r.title).join('; ')} (bench/README.md: the speed guard)`);
process.exit(failures.length > 0 || guardFailed.length > 0 ? 1 : 0);
