// Scenario 7: memory-hit throughput with server.workers: 2 ÷ with 1, both proxies
// started by the CLI (`node dist/main.js --config`, log level info) and pinned to
// both CPUs, measured in alternating rounds with the Zipf raw_item hit workload of
// scenario 1. The load generator (one process, pinned to CPU 1) shares a CPU with
// the proxy: on a 2-CPU machine two workers can have at most what the load
// generator leaves, and the figures say how the CPUs were shared.
import { round } from '../lib/procstat.mjs';
import { CAN_PIN } from '../lib/child.mjs';
import { HIT_ROUTES, routeItems } from '../lib/routes.mjs';
import { meets } from '../lib/report.mjs';
import { compare, hitRound, interleaved, median, prime } from './hit-throughput.mjs';

const SCALING_TARGET = { op: '>=', value: 1.6 };
/** One worker's process counts as having had a whole CPU at this use. */
const SATURATED = 0.85;

export async function workerScaling(ctx) {
  const { services, load, sim, mode, log, version } = ctx;
  const route = HIT_ROUTES[0];
  const items = routeItems(route, mode.hitKeys, version);
  const cpu = CAN_PIN ? '0,1' : undefined;
  const targets = [];
  for (const workers of [2, 1]) {
    const proxy = await services.cliProxy(sim.info.url, { workers, cpu });
    const t = {
      name: `${workers} worker${workers > 1 ? 's' : ''}`,
      workers,
      proxy,
      route: route.id,
      items,
      version: String(version),
      url: proxy.info.url,
      logLines: proxy.logLines,
    };
    // Each worker has its own memory tier: every one of 8 connections sends every key once.
    const served = await prime(load, t, 'HIT/memory', { eachConnection: true });
    log(
      `  ${t.name}: pids ${proxy.pids().join(', ')}; ${items.length} keys primed in every worker, served as ${JSON.stringify(served)}`,
    );
    targets.push(t);
  }
  const spec = hitRound(mode);
  for (const t of targets) await load.call('blast', { ...spec(t), durationS: mode.warmS });
  const meterPids = (t) =>
    Object.fromEntries(
      t.proxy.pids().map((pid, i) => [i === 0 ? (t.workers > 1 ? 'primary' : 'server') : `worker${i}`, pid]),
    );
  const runs = await interleaved(ctx, [targets], spec, meterPids);
  // The proxy's CPU: all its processes together.
  for (const r of Object.values(runs).flat())
    r.cpu.proxyTotal = round(
      Object.entries(r.cpu)
        .filter(([k]) => k !== 'load' && k !== 'others')
        .reduce((s, [, v]) => s + (v ?? 0), 0),
      3,
    );
  for (const t of targets) await services.stop(t.proxy);

  const cmp = compare(runs, targets[0].name, targets[1].name, 'proxyTotal', 0);
  const meanOf = (name, key) => round(runs[name].reduce((s, x) => s + (x.cpu[key] ?? 0), 0) / runs[name].length, 2);
  const [two, one] = targets.map((t) => t.name);
  // Only rounds where the single worker had a whole CPU say what one worker can do:
  // when other processes took its CPU, 2 vs 1 measures the machine, not the workers.
  const valid = runs[one]
    .map((x, i) => (x.cpu.proxyTotal >= SATURATED ? runs[two][i].rps / x.rps : null))
    .filter((x) => x !== null);
  const measured = valid.length > 0 ? median(valid) : cmp.ratio;
  const how =
    valid.length > 0
      ? `median of the ${valid.length} of ${cmp.perRound.length} rounds where 1 worker had ≥ ${SATURATED} CPU`
      : `NOT MEASURABLE here: 1 worker never had ${SATURATED} CPU (other processes took it); median of all ${cmp.perRound.length} rounds`;
  return {
    id: 'workers-2-vs-1',
    title: '7. Hit throughput, server.workers 2 vs 1 (raw_item)',
    measured: round(measured, 3),
    unit: 'ratio',
    target: SCALING_TARGET,
    pass: valid.length > 0 && meets(measured, SCALING_TARGET),
    display:
      `${round(measured, 3)} (${how}; totals ${Math.round(cmp.rps[two])} vs ${Math.round(cmp.rps[one])} req/s; per proxy CPU-second ${cmp.perServerCpuSecondRatio ?? '?'}; ` +
      `CPU used: 2 workers ${meanOf(two, 'proxyTotal')} + load generator ${meanOf(two, 'load')}, 1 worker ${meanOf(one, 'proxyTotal')} + load generator ${meanOf(one, 'load')}, of ${CAN_PIN ? 2 : '?'} CPUs: the load generator shares them)`,
    raw: {
      keys: items.length,
      validRounds: valid.length,
      ratiosOfValidRounds: valid.map((x) => round(x, 3)),
      connections: mode.hitConnections,
      rounds: mode.rounds,
      measureSecondsPerRound: mode.measureS,
      pinning: cpu ? { proxies: cpu, load: 1 } : null,
      ...cmp,
      runs,
    },
  };
}
