// Scenario 3: what the proxy adds to a forwarded read. Latest raw_item reads of a
// new key each time (so every one is forwarded, never coalesced) at a fixed
// moderate rate, straight to the sim and through the proxy, in alternating rounds,
// beside a bare node:http + undici forwarder and (where it is installed) nginx with a
// plain proxy_pass, what an operator would put in front of a node otherwise.
// Latencies are each response's own time (sub-millisecond), not autocannon's 1 ms histogram.
import { cpuPerMiss, fullSpeedMisses, KEYS_PER_RUN, MISS_CPU_CONNECTIONS } from '../lib/miss-cpu.mjs';
import { cpuMeter, round } from '../lib/procstat.mjs';
import { itemKey, rawItem } from '../lib/requests.mjs';
import { percentiles } from '../lib/stats.mjs';
import { meets } from '../lib/report.mjs';
import { anchorAvailable } from './anchor.mjs';

// The targets: a forwarded read adds at most 0.10 ms at p50 and 1 ms at p99.
const P50_TARGET = { op: '<=', value: 0.1 };
const P99_TARGET = { op: '<=', value: 1 };
/** The proxy's added p50 at most nginx proxy_pass's + 0.05 ms. */
const VS_NGINX_TARGET = { op: '<=', value: 0.05 };
/** The proxy's CPU per miss at most 1.3 × the bare forwarder's. */
const CPU_VS_FORWARDER_TARGET = { op: '<=', value: 1.3 };

export async function missOverhead(ctx) {
  const { services, load, sim, mode, log } = ctx;
  const proxy = await services.proxy(sim.info.url, {}, { name: 'proxy-memory' });
  const forwarder = await services.forwarder(sim.info.url);
  const anchor = anchorAvailable();
  const nginx = anchor.skipped ? null : await services.nginx({ bin: anchor.bin, upstream: sim.info.url, cache: false });
  // The forwarder is the floor: what a bare Node server with undici adds, beside the proxy.
  const targets = [
    { name: 'direct', url: sim.info.url },
    { name: 'forwarder', url: forwarder.info.url },
    { name: 'proxy', url: proxy.info.url },
    ...(nginx === null ? [] : [{ name: 'nginx', url: nginx.info.url }]),
  ];
  const sample = rawItem(itemKey(0), null);
  let nextKey = 1_000_000;
  const spec = (url, duration, latencies) => {
    const start = nextKey;
    nextKey += Math.ceil(duration * mode.latencyRate * 2) + 1000;
    return {
      url,
      path: sample.path,
      headers: sample.headers,
      body: sample.body.toString('utf8'),
      connections: mode.latencyConnections,
      overallRate: mode.latencyRate,
      duration,
      workload: { kind: 'distinctLatest', start },
      latencies,
      returnSamples: latencies,
    };
  };

  // Warm-up at full speed (as 3d runs: tens of thousands of misses), so each
  // server is measured as it runs for days, its code compiled by V8's optimising
  // tier: the proxy has far more of it than the forwarder, and at 500 req/s its
  // later rounds read up to 2x faster than its first.
  for (const t of targets) {
    log(`  warm-up ${t.name} ${mode.warmS}s`);
    await fullSpeedMisses(load, t.url, mode.warmS, nextKey);
    nextKey += KEYS_PER_RUN;
  }
  const samples = Object.fromEntries(targets.map((t) => [t.name, []]));
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  let forwarded = 0;
  let proxiedSent = 0;
  for (let i = 0; i < mode.rounds; i++) {
    const order = i % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      await ctx.quiet(`latency ${t.name} round ${i + 1}`);
      const before = (await sim.call('counters')).byRoute.raw_item;
      const meter = cpuMeter({
        sim: sim.info.pid,
        proxy: proxy.info.pid,
        forwarder: forwarder.info.pid,
        ...(nginx === null ? {} : { nginx: nginx.info.pid }),
        load: load.info.pid,
      });
      const r = await load.call('run', spec(t.url, mode.measureS, true));
      const cpu = meter();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const calls = (await sim.call('counters')).byRoute.raw_item - before;
      if (r.errors + r.timeouts > 0) throw new Error(`${t.name}: ${r.errors} errors, ${r.timeouts} timeouts`);
      if (t.name === 'proxy') {
        forwarded += calls;
        proxiedSent += r.sent;
      }
      samples[t.name].push(...r.samples);
      runs[t.name].push({
        round: i + 1,
        completed: r.completed,
        rps: round(r.rps, 1),
        latencyMs: roundAll(r.latencyMs),
        statusCodes: r.statusCodes,
        simCalls: calls,
        cpu,
      });
      log(
        `  round ${i + 1} ${t.name.padEnd(9)} ${Math.round(r.rps)} req/s p50 ${r.latencyMs.p50.toFixed(3)} ms p99 ${r.latencyMs.p99.toFixed(3)} ms (other processes CPU ${cpu.others ?? '?'})`,
      );
    }
  }
  // 3d: CPU per miss at full speed (lib/miss-cpu.mjs), each server warmed up above.
  const cpu = await cpuPerMiss(
    load,
    [
      { name: 'proxy', url: proxy.info.url, pid: proxy.info.pid },
      { name: 'forwarder', url: forwarder.info.url, pid: forwarder.info.pid },
    ],
    { rounds: mode.rounds, seconds: mode.measureS, firstKey: nextKey, warmS: 0 },
  );
  await services.stop(proxy);
  await services.stop(forwarder);
  if (nginx !== null) await services.stop(nginx);

  const direct = percentiles(samples.direct);
  const proxied = percentiles(samples.proxy);
  const floor = percentiles(samples.forwarder);
  const addedP50 = proxied.p50 - direct.p50;
  const addedP99 = proxied.p99 - direct.p99;
  const floorP50 = floor.p50 - direct.p50;
  const floorP99 = floor.p99 - direct.p99;
  const viaNginx = nginx === null ? null : percentiles(samples.nginx);
  const nginxP50 = viaNginx === null ? null : viaNginx.p50 - direct.p50;
  const raw = {
    rate: mode.latencyRate,
    connections: mode.latencyConnections,
    rounds: mode.rounds,
    measureSecondsPerRound: mode.measureS,
    request: 'latest raw_item (JSON body, BCS answer), a new key per request',
    directMs: roundAll(direct),
    proxyMs: roundAll(proxied),
    forwarderMs: roundAll(floor),
    addedMs: { p50: round(addedP50, 4), p99: round(addedP99, 4), mean: round(proxied.mean - direct.mean, 4) },
    forwarderAddedMs: { p50: round(floorP50, 4), p99: round(floorP99, 4), mean: round(floor.mean - direct.mean, 4) },
    ...(viaNginx === null
      ? { nginx: anchor.skipped }
      : {
          nginx: anchor.version,
          nginxMs: roundAll(viaNginx),
          nginxAddedMs: { p50: round(nginxP50, 4), p99: round(viaNginx.p99 - direct.p99, 4) },
        }),
    forwardedPerProxiedRequest: round(proxiedSent ? forwarded / proxiedSent : null, 4),
    runs,
  };
  return [
    {
      id: 'miss-added-p50',
      title: '3a. Miss path: added p50 latency (proxy vs direct)',
      measured: round(addedP50, 3),
      unit: 'ms',
      target: P50_TARGET,
      pass: meets(addedP50, P50_TARGET),
      display: `${signed(addedP50)} ms (${proxied.p50.toFixed(3)} vs ${direct.p50.toFixed(3)}; a bare node:http + undici forwarder ${signed(floorP50)})`,
      raw,
    },
    {
      id: 'miss-added-p99',
      title: '3b. Miss path: added p99 latency (proxy vs direct)',
      measured: round(addedP99, 3),
      unit: 'ms',
      target: P99_TARGET,
      pass: meets(addedP99, P99_TARGET),
      display: `${signed(addedP99)} ms (${proxied.p99.toFixed(3)} vs ${direct.p99.toFixed(3)}; bare forwarder ${signed(floorP99)})`,
      raw: { see: 'miss-added-p50' },
    },
    vsNginxRow(addedP50, nginxP50, anchor),
    cpuVsForwarderRow(cpu, mode),
  ];
}

/** 3c: the proxy's added p50 less nginx proxy_pass's, in the same rounds; skipped without nginx. */
function vsNginxRow(addedP50, nginxP50, anchor) {
  const row = { id: 'miss-added-p50-vs-nginx', title: '3c. Miss path: added p50 beyond nginx proxy_pass', unit: 'ms' };
  if (nginxP50 === null)
    return {
      ...row,
      measured: null,
      target: VS_NGINX_TARGET,
      pass: null,
      skipped: anchor.skipped,
      display: `skipped: ${anchor.skipped}`,
      raw: { skipped: anchor.skipped },
    };
  const beyond = addedP50 - nginxP50;
  return {
    ...row,
    measured: round(beyond, 3),
    target: VS_NGINX_TARGET,
    pass: meets(beyond, VS_NGINX_TARGET),
    display: `${signed(beyond)} ms (the proxy adds ${signed(addedP50)}, nginx ${anchor.version} proxy_pass ${signed(nginxP50)})`,
    raw: { see: 'miss-added-p50' },
  };
}

/** 3d: the proxy's CPU per miss ÷ the forwarder's, at full speed. */
function cpuVsForwarderRow(cpu, mode) {
  const row = {
    id: 'miss-cpu-vs-forwarder',
    title: '3d. Miss path: CPU per miss, proxy ÷ the bare forwarder',
    unit: 'ratio',
    target: CPU_VS_FORWARDER_TARGET,
  };
  const proxy = cpu.proxy.cpuMicrosPerMiss;
  const floor = cpu.forwarder.cpuMicrosPerMiss;
  const raw = { rounds: mode.rounds, measureSecondsPerRound: mode.measureS, connections: MISS_CPU_CONNECTIONS, ...cpu };
  if (proxy === null || floor === null)
    return { ...row, measured: null, pass: null, display: 'not measured: no CPU figures (/proc)', raw };
  const ratio = round(proxy / floor, 3);
  return {
    ...row,
    measured: ratio,
    pass: meets(ratio, CPU_VS_FORWARDER_TARGET),
    display: `${ratio} (${proxy.toFixed(1)} vs ${floor.toFixed(1)} CPU µs per miss, ${MISS_CPU_CONNECTIONS} connections at full speed, the sim on the servers' CPU)`,
    raw,
  };
}

/** A difference with its sign: a quick run's few samples can put the proxy below direct. */
function signed(ms) {
  return `${ms < 0 ? '-' : '+'}${Math.abs(ms).toFixed(3)}`;
}

function roundAll(obj) {
  return Object.fromEntries(
    Object.entries(obj).map(([k, v]) => [k, typeof v === 'number' && !Number.isInteger(v) ? round(v, 4) : v]),
  );
}
