// Scenarios 1 and 2: hit throughput, measured side by side in alternating rounds
// (the order rotates each round), each run a fixed time at a fixed connection count.
//   ceiling        fastify, one constant route, the same reply bytes and headers as a memory hit
//   memory         the proxy answering that one pinned raw_item memory hit
//   memory-keys    the proxy answering memory hits cycling over KEYS distinct pinned items
//   redis-keys     a proxy whose memory tier is off (maxBytes 1), the same KEYS items from Redis
// 1 = memory / ceiling. 2 = redis-keys / memory-keys: distinct keys, because identical
// concurrent Redis lookups would share one GET (single-flight) and flatter Redis.
// The sim must see no call while they run.
import { call, stableHeaders } from '../lib/http.mjs';
import { cpuMeter, round } from '../lib/procstat.mjs';
import { itemKey, rawItem } from '../lib/requests.mjs';
import { meets } from '../lib/report.mjs';

const CEILING_TARGET = { op: '>=', value: 0.9 };
const REDIS_TARGET = { op: '>=', value: 0.6 };

const KEYS = 1000;

const upstreamReads = (counters) => counters.byRoute.raw_item + counters.byRoute.view;

/** `n` table item keys the sim holds (asked of the sim itself), so hits carry real answers. */
async function presentKeys(simUrl, n) {
  const keys = [];
  for (let i = 1; keys.length < n; i += 64) {
    const batch = Array.from({ length: 64 }, (_, j) => itemKey(i + j));
    const replies = await Promise.all(batch.map((k) => call(simUrl, rawItem(k, null))));
    replies.forEach((r, j) => r.status === 200 && keys.length < n && keys.push(batch[j]));
  }
  return keys;
}

async function fill(url, keys, version) {
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(keys.slice(i, i + 50).map((k) => call(url, rawItem(k, version))));
  }
}

export async function hitThroughput(ctx) {
  const { services, load, sim, mode, log, version } = ctx;

  const keys = await presentKeys(sim.info.url, KEYS);
  const redis = await services.redis();
  const memProxy = await services.proxy(sim.info.url, { cache: { memory: { maxBytes: 256 * 1024 * 1024 } } }, { name: 'proxy-memory' });
  const redisProxy = await services.proxy(sim.info.url, { cache: { memory: { maxBytes: 1 }, redis: { url: redis.url } } }, { name: 'proxy-redis' });

  // Prime both (misses fill memory, resp. Redis), and check each serves from its tier.
  await fill(memProxy.info.url, keys, version);
  await fill(redisProxy.info.url, keys, version);
  const req = rawItem(keys[0], version);
  const memHit = await call(memProxy.info.url, req);
  if (memHit.headers['x-cache'] !== 'HIT' || memHit.headers['x-cache-tier'] !== 'memory') {
    throw new Error(`memory proxy did not answer a memory hit: ${JSON.stringify(memHit.headers)}`);
  }
  const redisHit = await call(redisProxy.info.url, req);
  if (redisHit.headers['x-cache'] !== 'HIT' || redisHit.headers['x-cache-tier'] !== 'redis') {
    throw new Error(`redis proxy did not answer a redis hit: ${JSON.stringify(redisHit.headers)}`);
  }

  // The ceiling answers what the memory hit answers: same status, headers and bytes.
  const ceilingHeaders = stableHeaders(memHit.headers);
  const ceiling = await services.ceiling({
    path: '/v1/tables/:handle/raw_item',
    status: memHit.status,
    headers: ceilingHeaders,
    bodyBase64: memHit.body.toString('base64'),
  });
  const ceilingReply = await call(ceiling.info.url, req);
  const same =
    ceilingReply.status === memHit.status &&
    ceilingReply.body.equals(memHit.body) &&
    JSON.stringify(stableHeaders(ceilingReply.headers)) === JSON.stringify(ceilingHeaders);
  if (!same) throw new Error('the ceiling reply differs from the proxy memory hit');

  const cycle = { kind: 'keyCycle', keys, version: String(version) };
  const targets = [
    { name: 'ceiling', url: ceiling.info.url, pid: ceiling.info.pid },
    { name: 'memory', url: memProxy.info.url, pid: memProxy.info.pid },
    { name: 'memory-keys', url: memProxy.info.url, pid: memProxy.info.pid, workload: cycle },
    { name: 'redis-keys', url: redisProxy.info.url, pid: redisProxy.info.pid, workload: cycle, redis: true },
  ];
  const spec = (t, duration, extra = {}) => ({
    url: t.url,
    path: req.path,
    headers: req.headers,
    body: req.body.toString('utf8'),
    connections: mode.hitConnections,
    duration,
    workload: t.workload,
    ...extra,
  });

  // How the keyed runs are served (a short run that reads each reply's X-Cache headers).
  const served = {};
  for (const t of targets.filter((x) => x.workload)) {
    served[t.name] = (await load.call('run', spec(t, Math.min(1, mode.warmS), { countHeader: ['x-cache', 'x-cache-tier'] }))).headerCounts;
  }
  log(`  served as (X-Cache/X-Cache-Tier): ${JSON.stringify(served)}`);

  for (const t of targets) {
    log(`  warm-up ${t.name} ${mode.warmS}s`);
    await load.call('run', spec(t, mode.warmS));
  }
  const before = upstreamReads(await sim.call('counters'));
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let r = 0; r < mode.rounds; r++) {
    const order = targets.map((_, i) => targets[(i + r) % targets.length]);
    for (const t of order) {
      await ctx.quiet(`hit ${t.name} round ${r + 1}`);
      const meter = cpuMeter({ server: t.pid, load: load.info.pid, ...(t.redis ? { redis: redis.pid } : {}) });
      const res = await load.call('run', spec(t, mode.measureS));
      const cpu = meter();
      const bad = res.errors + res.timeouts + res.non2xx;
      if (bad > 0) throw new Error(`${t.name}: ${res.errors} errors, ${res.timeouts} timeouts, ${res.non2xx} non-2xx`);
      runs[t.name].push({ round: r + 1, rps: round(res.rps, 1), completed: res.completed, durationS: res.durationS, latencyMs: res.latencyMs, cpu });
      log(
        `  round ${r + 1} ${t.name.padEnd(11)} ${String(Math.round(res.rps)).padStart(6)} req/s (CPU: server ${cpu.server ?? '?'}, load ${cpu.load ?? '?'}${cpu.redis !== undefined ? `, redis ${cpu.redis}` : ''}, other processes ${cpu.others ?? '?'})`,
      );
    }
  }
  const upstreamDuring = upstreamReads(await sim.call('counters')) - before;

  // A target's throughput: all its completed requests over all its measured seconds.
  const rate = (name) => runs[name].reduce((s, x) => s + x.completed, 0) / runs[name].reduce((s, x) => s + x.durationS, 0);
  const meanCpu = (name) => {
    const v = runs[name].map((x) => x.cpu.server).filter((x) => x !== null);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  };
  const summary = Object.fromEntries(
    targets.map((t) => {
      const cpu = meanCpu(t.name);
      return [
        t.name,
        {
          rps: round(rate(t.name), 1),
          serverCpu: round(cpu, 3),
          requestsPerServerCpuSecond: cpu ? round(rate(t.name) / cpu, 1) : null,
          serverCpuMicrosPerRequest: cpu ? round((1e6 * cpu) / rate(t.name), 2) : null,
        },
      ];
    }),
  );
  const perCpu = (a, b) => (summary[a].requestsPerServerCpuSecond && summary[b].requestsPerServerCpuSecond ? round(summary[a].requestsPerServerCpuSecond / summary[b].requestsPerServerCpuSecond, 3) : null);
  // The headline ratio: the median over rounds of each round's ratio. A round's two
  // runs are seconds apart, so a burst of other load on the machine hits one round,
  // not the whole figure; the ratio of the totals is kept alongside.
  const perRound = (a, b) => runs[a].map((x, i) => x.rps / runs[b][i].rps);
  // Rounds in which both servers ran flat out (≥ 0.9 CPU): only there is req/s the server's capacity
  // rather than the load generator's share of a busy machine.
  const saturated = (a, b) => runs[a].filter((x, i) => x.cpu.server >= 0.9 && runs[b][i].cpu.server >= 0.9).length;
  const median = (values) => {
    const v = [...values].sort((x, y) => x - y);
    return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };

  await services.stop(ceiling);
  await services.stop(redisProxy);
  await services.stop(memProxy);
  await services.stop(redis);

  const memoryRounds = perRound('memory', 'ceiling');
  const redisRounds = perRound('redis-keys', 'memory-keys');
  const memoryVsCeiling = median(memoryRounds);
  const redisVsMemory = median(redisRounds);
  const common = {
    request: { path: req.path, headers: req.headers, body: req.body.toString('utf8'), replyBytes: memHit.body.length, replyHeaders: ceilingHeaders },
    connections: mode.hitConnections,
    rounds: mode.rounds,
    measureSecondsPerRound: mode.measureS,
    warmupSeconds: mode.warmS,
    upstreamCallsDuringMeasurement: upstreamDuring,
  };
  const pick = (...names) => Object.fromEntries(names.map((n) => [n, summary[n]]));
  const pickRuns = (...names) => Object.fromEntries(names.map((n) => [n, runs[n]]));
  return [
    {
      id: 'memory-hit-vs-ceiling',
      title: '1. Memory-tier hit throughput vs fastify ceiling',
      measured: round(memoryVsCeiling, 3),
      unit: 'ratio',
      target: CEILING_TARGET,
      pass: meets(memoryVsCeiling, CEILING_TARGET) && upstreamDuring === 0,
      display: `${round(memoryVsCeiling, 3)} (median of ${memoryRounds.length} rounds, both servers saturated in ${saturated('memory', 'ceiling')}; totals ${Math.round(summary.memory.rps)} vs ${Math.round(summary.ceiling.rps)} req/s; per server CPU-second ${perCpu('memory', 'ceiling') ?? '?'})`,
      raw: {
        ...common,
        summary: pick('ceiling', 'memory'),
        ratioPerRound: memoryRounds.map((r) => round(r, 3)),
        ratioOfTotals: round(rate('memory') / rate('ceiling'), 3),
        roundsBothServersSaturated: saturated('memory', 'ceiling'),
        perServerCpuSecondRatio: perCpu('memory', 'ceiling'),
        runs: pickRuns('ceiling', 'memory'),
      },
    },
    {
      id: 'redis-hit-vs-memory-hit',
      title: '2. Redis-tier hit throughput vs memory-tier hit',
      measured: round(redisVsMemory, 3),
      unit: 'ratio',
      target: REDIS_TARGET,
      pass: meets(redisVsMemory, REDIS_TARGET) && upstreamDuring === 0,
      display: `${round(redisVsMemory, 3)} (median of ${redisRounds.length} rounds, both servers saturated in ${saturated('redis-keys', 'memory-keys')}; totals ${Math.round(summary['redis-keys'].rps)} vs ${Math.round(summary['memory-keys'].rps)} req/s over ${keys.length} keys; per server CPU-second ${perCpu('redis-keys', 'memory-keys') ?? '?'})`,
      raw: {
        ...common,
        keys: keys.length,
        servedAs: served,
        summary: pick('memory-keys', 'redis-keys'),
        ratioPerRound: redisRounds.map((r) => round(r, 3)),
        ratioOfTotals: round(rate('redis-keys') / rate('memory-keys'), 3),
        roundsBothServersSaturated: saturated('redis-keys', 'memory-keys'),
        perServerCpuSecondRatio: perCpu('redis-keys', 'memory-keys'),
        runs: pickRuns('memory-keys', 'redis-keys'),
      },
    },
  ];
}
