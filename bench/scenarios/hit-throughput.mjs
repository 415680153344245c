// Scenarios 1 and 2: hit throughput, measured side by side in alternating rounds
// (the order within each pair flips every round), each run a fixed time at a fixed
// connection count, with the load generator of lib/rawload.mjs.
//   1 (one row per route of lib/routes.mjs): the proxy, at its default log level
//     (info), answering memory hits of KEYS distinct cached keys drawn with Zipf
//     popularity, ÷ a bare node:http server (proc/ceiling.mjs) answering the bytes
//     and header list of one real hit reply of that route, to the same requests.
//     Each route has a proxy of its own (default memory settings), holding that
//     route's KEYS keys: one proxy holding every route's keys would measure the
//     routes against each other (its spelling cache holds about 30,000).
//     Beside them, the keyed ceiling (proc/keyed-ceiling.mjs): the ceiling plus one
//     Map lookup of the request's bytes among the route's keys, each with its own
//     copy of the reply. It does what no cache can skip, and nothing else: its
//     ratio to the ceiling is what a cache on node:http can reach at best.
//   1n (scenarios/anchor.mjs, where nginx is installed): nginx with proxy_cache in
//     front of the same sim, one per route holding the route's keys, in the same rounds.
//   1s: the socket limit (proc/socket-limit.mjs), a plain net.Server writing the same
//     reply as one prepared buffer per request, in the same rounds: per server
//     CPU-second, the proxy's hits ÷ it.
//   2: a proxy whose memory tier is off (maxBytes 1) answering the same raw_item
//     keys from Redis ÷ the memory proxy, both cycling through the keys in order:
//     identical concurrent Redis lookups would share one GET (single-flight) and
//     flatter Redis, so no key repeats within a cycle.
// The sim must see no call while they run.
import { call, cannedReply, replyHeaderList } from '../lib/http.mjs';
import { cpuMeter, round } from '../lib/procstat.mjs';
import { HIT_ROUTES, routeItems } from '../lib/routes.mjs';
import { meets } from '../lib/report.mjs';
import { zipfTopShare } from '../lib/workloads.mjs';
import { anchorAvailable, anchorRows, startAnchor } from './anchor.mjs';

const CEILING_TARGET = { op: '>=', value: 0.9 };
/** Memory hits per server CPU-second at least 0.7 of a plain net.Server writing the same prepared reply. */
const SOCKET_LIMIT_TARGET = { op: '>=', value: 0.7 };
const REDIS_TARGET = { op: '>=', value: 0.6 };
/** Hits with tenants on (every request counted, shared through Redis) within 5% of the same hits without. */
const RATE_LIMITED_TARGET = { op: '>=', value: 0.95 };
/** The anonymous tenant's limits: far above the bench's load, so every request is counted and served. */
const TENANT_LIMITS = {
  tenants: { anonymous: { requestsPerSecond: 1_000_000_000, nodeUnitsPerMinute: 1_000_000_000 } },
};
const ZIPF_S = 1.0;
const SEED = 14;

/** Reads that reached the node, on any route but GET /v1 (the proxy's health probes). */
export const upstreamReads = (counters) =>
  Object.entries(counters.byRoute).reduce((n, [route, count]) => (route === 'ledger_info' ? n : n + count), 0);

export const median = (values) => {
  const v = [...values].sort((x, y) => x - y);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

/**
 * Sends every distinct request once (misses that fill), then checks every one is now served as `expect`
 * (the values of `headers` joined by '/': X-Cache/X-Cache-Tier unless given).
 */
export async function prime(
  load,
  target,
  expect,
  { eachConnection = false, headers = ['x-cache', 'x-cache-tier'] } = {},
) {
  const base = {
    url: target.url,
    route: target.route,
    items: target.items,
    version: target.version,
    order: 'cycle',
    once: true,
  };
  const filled = await load.call('blast', { ...base, connections: eachConnection ? 8 : 32, eachConnection });
  // A fill reaches Redis after its reply is written: on a busy machine the first check can
  // outrun the last writes, so the check is repeated (a few times, a moment apart) before it fails.
  let served;
  let bad;
  for (let attempt = 1; ; attempt++) {
    const check = await load.call('blast', {
      ...base,
      connections: eachConnection ? 8 : 32,
      eachConnection,
      countHeaders: headers,
    });
    served = check.headerCounts;
    bad = Object.entries(served).filter(([k]) => k !== expect.toLowerCase());
    if (bad.length === 0 || attempt === 5) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  if (bad.length > 0 || Object.keys(filled.statuses).some((s) => s !== '200')) {
    throw new Error(
      `${target.name}: priming answered ${JSON.stringify(filled.statuses)}, then served ${JSON.stringify(served)} (expected all ${expect})`,
    );
  }
  return served;
}

/** Runs `pairs` ([a, b] targets) in rounds, alternating which of a pair goes first; returns runs by target name. */
/**
 * The load of one hit round on a target, for `mode`: its keys in Zipf order (unless the
 * target names another), `mode`'s connections, and its measuring time.
 */
export const hitRound = (mode) => (t) => ({
  url: t.url,
  route: t.route,
  items: t.items,
  version: t.version,
  order: t.order ?? 'zipf',
  s: ZIPF_S,
  seed: SEED,
  connections: mode.hitConnections,
  durationS: t.warm ? mode.warmS : mode.measureS,
});

export async function interleaved(ctx, pairs, spec, meterPids) {
  const { load, mode, log, sim } = ctx;
  const runs = {};
  for (let r = 0; r < mode.rounds; r++) {
    for (const pair of pairs) {
      for (const t of r % 2 === 0 ? pair : [...pair].reverse()) {
        await ctx.quiet(`hit ${t.name} round ${r + 1}`);
        // A server idle since its last round (a minute in a full run) starts cold:
        // a short run first, so each round measures it warm, ceilings alike.
        if (mode.roundWarmS) await load.call('blast', { ...spec(t), durationS: mode.roundWarmS });
        const logsBefore = t.logLines?.() ?? null;
        const nodeBefore = upstreamReads(await sim.call('counters'));
        const meter = cpuMeter({ ...meterPids(t), load: load.info.pid });
        const res = await load.call('blast', spec(t));
        const cpu = meter();
        // reads that reached the node during this run: a hit run must have none
        const nodeCalls = upstreamReads(await sim.call('counters')) - nodeBefore;
        const bad = Object.entries(res.statuses).filter(([s]) => s !== '200');
        if (res.errors > 0 || bad.length > 0)
          throw new Error(`${t.name}: ${res.errors} connection errors, statuses ${JSON.stringify(res.statuses)}`);
        const logLines = logsBefore === null ? null : t.logLines() - logsBefore;
        (runs[t.name] ??= []).push({
          round: r + 1,
          rps: round(res.rps, 1),
          completed: res.completed,
          durationS: round(res.durationS, 3),
          cpu,
          logLines,
          nodeCalls,
          reconnects: res.reconnects,
        });
        log(
          `  round ${r + 1} ${t.name.padEnd(22)} ${String(Math.round(res.rps)).padStart(6)} req/s (CPU: ${Object.entries(
            cpu,
          )
            .map(([k, v]) => `${k} ${v ?? '?'}`)
            .join(', ')})${logLines ? `, ${logLines} log lines` : ''}${nodeCalls ? `, ${nodeCalls} NODE CALLS` : ''}`,
        );
      }
    }
  }
  return runs;
}

/** Requests completed per second over `rounds`. */
const rateOver = (rounds) => rounds.reduce((s, x) => s + x.completed, 0) / rounds.reduce((s, x) => s + x.durationS, 0);

/** The mean over `rounds` of `cores(round)`, a CPU use in cores; null when no round has one. */
function meanCores(rounds, cores) {
  const v = rounds.map(cores).filter((x) => typeof x === 'number');
  return v.length ? v.reduce((s, x) => s + x, 0) / v.length : null;
}

/** CPU µs per request over `rounds`, from each round's use in cores (`cores(round)`): their mean over the rounds' rate. */
export function cpuMicrosPerRequest(rounds, cores) {
  const used = meanCores(rounds, cores);
  return used ? round((1e6 * used) / rateOver(rounds), 2) : null;
}

/** Throughput over all rounds, per-round ratios, and how many rounds had both servers saturated. */
export function compare(runs, a, b, cpuKey = 'server', saturatedAt = 0.9) {
  const rate = (n) => rateOver(runs[n]);
  const perRound = runs[a].map((x, i) => x.rps / runs[b][i].rps);
  const coresOf = (x) => x.cpu[cpuKey];
  const cpu = (n) => meanCores(runs[n], coresOf);
  const perCpu = (n) => (cpu(n) ? rate(n) / cpu(n) : null);
  // Rounds where both servers ran flat out: only there is req/s each server's capacity
  // rather than what other processes left it. The headline uses them when there are any.
  const saturatedRounds = perRound.filter(
    (_, i) => runs[a][i].cpu[cpuKey] >= saturatedAt && runs[b][i].cpu[cpuKey] >= saturatedAt,
  );
  return {
    ratio: median(saturatedRounds.length > 0 ? saturatedRounds : perRound),
    ratioAllRounds: round(median(perRound), 3),
    headlineFrom:
      saturatedRounds.length > 0
        ? `median of the ${saturatedRounds.length} of ${perRound.length} rounds with both servers saturated`
        : `median of ${perRound.length} rounds, none with both servers saturated (other processes took CPU, or the load generator could not keep one busy)`,
    perRound: perRound.map((x) => round(x, 3)),
    ratioOfTotals: round(rate(a) / rate(b), 3),
    rps: { [a]: round(rate(a), 1), [b]: round(rate(b), 1) },
    serverCpu: { [a]: round(cpu(a), 3), [b]: round(cpu(b), 3) },
    serverCpuMicrosPerRequest: {
      [a]: cpuMicrosPerRequest(runs[a], coresOf),
      [b]: cpuMicrosPerRequest(runs[b], coresOf),
    },
    perServerCpuSecondRatio: perCpu(a) && perCpu(b) ? round(perCpu(a) / perCpu(b), 3) : null,
    roundsBothSaturated: runs[a].filter((x, i) => x.cpu[cpuKey] >= saturatedAt && runs[b][i].cpu[cpuKey] >= saturatedAt)
      .length,
  };
}

export async function hitThroughput(ctx) {
  const { services, load, sim, mode, log, version, routeIds } = ctx;
  const hitRoutes = routeIds ? HIT_ROUTES.filter((r) => routeIds.includes(r.id)) : HIT_ROUTES;
  const keys = mode.hitKeys;
  const v = String(version);

  const redis = await services.redis();
  /** The memory proxies by route id: each route's own (scenario 1), and raw_item's for scenario 2. */
  const memProxies = {};
  const memory = { maxBytes: 256 * 1024 * 1024 };
  const memProxy = (id) => services.proxy(sim.info.url, { cache: { memory } }, { name: `proxy-memory-${id}` });
  const redisProxy = await services.proxy(
    sim.info.url,
    { cache: { memory: { maxBytes: 1 }, redis: { url: redis.url } } },
    { name: 'proxy-redis' },
  );

  const pairs = [];
  const routeInfo = {};
  const ceilings = [];
  const anchor = anchorAvailable();
  if (anchor.skipped) log(`  nginx anchor (1n) skipped: ${anchor.skipped}`);
  /** Per route, the load targets scenario 1n compares: { proxy, keyed, nginx }. */
  const anchored = {};
  /** Per route, the load targets scenario 1s compares: { proxy, limit }. */
  const socketLimits = {};
  for (const route of hitRoutes) {
    const items = routeItems(route, keys, version);
    const proxy = (memProxies[route.id] = await memProxy(route.id));
    const proxyT = {
      name: `proxy ${route.id}`,
      route: route.id,
      items,
      version: v,
      url: proxy.info.url,
      pid: proxy.info.pid,
      logLines: proxy.logLines,
    };
    const served = await prime(load, proxyT, 'HIT/memory');
    // One real hit reply of this route: the ceiling answers exactly it.
    const hit = await call(proxy.info.url, route.request(items[0], version));
    if (hit.headers['x-cache'] !== 'HIT' || hit.headers['x-cache-tier'] !== 'memory')
      throw new Error(`${route.id}: not a memory hit: ${JSON.stringify(hit.headers)}`);
    const canned = cannedReply(hit);
    const ceiling = await services.ceiling(canned);
    ceilings.push(ceiling);
    const again = await call(ceiling.info.url, route.request(items[0], version));
    if (
      again.status !== hit.status ||
      !again.body.equals(hit.body) ||
      JSON.stringify(replyHeaderList(again.headers)) !== JSON.stringify(canned.headers)
    ) {
      throw new Error(`${route.id}: the ceiling's reply differs from the proxy's hit`);
    }
    const ceilingT = {
      name: `node:http ${route.id}`,
      route: route.id,
      items,
      version: v,
      url: ceiling.info.url,
      pid: ceiling.info.pid,
    };
    const keyed = await services.keyedCeiling({
      ...canned,
      route: route.id,
      keys,
      version: v,
    });
    ceilings.push(keyed);
    const keyedAgain = await call(keyed.info.url, route.request(items[items.length - 1], version));
    if (keyedAgain.status !== hit.status || !keyedAgain.body.equals(hit.body))
      throw new Error(`${route.id}: the keyed ceiling does not hold the route's keys`);
    const keyedT = {
      name: `keyed node:http ${route.id}`,
      route: route.id,
      items,
      version: v,
      url: keyed.info.url,
      pid: keyed.info.pid,
    };
    const limit = await services.socketLimit(canned);
    ceilings.push(limit);
    const limitAgain = await call(limit.info.url, route.request(items[0], version));
    if (limitAgain.status !== hit.status || !limitAgain.body.equals(hit.body))
      throw new Error(`${route.id}: the socket limit's reply differs from the proxy's hit`);
    const limitT = {
      name: `socket limit ${route.id}`,
      route: route.id,
      items,
      version: v,
      url: limit.info.url,
      pid: limit.info.pid,
    };
    socketLimits[route.id] = { proxy: proxyT, limit: limitT };
    const group = [proxyT, ceilingT, keyedT, limitT];
    if (!anchor.skipped) {
      const nginx = await startAnchor(ctx, { anchor, route, items, version, prime });
      ceilings.push(nginx.handle);
      group.push(nginx.target);
      anchored[route.id] = { proxy: proxyT, keyed: keyedT, nginx: nginx.target };
      log(
        `  ${route.id}: nginx ${anchor.version} primed, served as ${JSON.stringify(nginx.served)}, answers are the sim's`,
      );
    }
    pairs.push(group);
    routeInfo[route.id] = {
      route,
      items: items.length,
      served,
      reply: { status: hit.status, bytes: hit.body.length, headers: canned.headers },
    };
    log(
      `  ${route.id}: ${items.length} keys primed, served as ${JSON.stringify(served)}; reply ${hit.body.length} B, ${canned.headers.length} headers`,
    );
  }
  const rawItems = routeItems(HIT_ROUTES[0], keys, version);
  // The memory side of scenario 2: raw_item's own proxy, or one of its own when scenario 1 left raw_item out.
  const rawId = HIT_ROUTES[0].id;
  const primed = memProxies[rawId] !== undefined;
  const rawProxy = (memProxies[rawId] ??= await memProxy(rawId));
  const memCycle = {
    name: 'memory raw_item cycle',
    route: rawId,
    items: rawItems,
    version: v,
    url: rawProxy.info.url,
    pid: rawProxy.info.pid,
    order: 'cycle',
  };
  if (!primed) await prime(load, memCycle, 'HIT/memory');
  const redisCycle = {
    name: 'redis raw_item cycle',
    route: HIT_ROUTES[0].id,
    items: rawItems,
    version: v,
    url: redisProxy.info.url,
    pid: redisProxy.info.pid,
    order: 'cycle',
    redis: true,
  };
  const redisServed = await prime(load, redisCycle, 'HIT/redis');
  log(`  redis proxy: ${rawItems.length} keys primed, served as ${JSON.stringify(redisServed)}`);
  pairs.push([redisCycle, memCycle]);

  // 1b: memory hits with tenants on as config/production.example.yaml sets them (every
  // client counted per address, the counts shared through Redis), against raw_item's
  // plain proxy. The limits are set far above the load, so every request is counted and none refused.
  const limitedProxy = await services.proxy(
    sim.info.url,
    { cache: { memory, redis: { url: redis.url } }, ...TENANT_LIMITS },
    { name: 'proxy-rate-limited' },
  );
  const limited = {
    name: 'rate-limited raw_item',
    route: rawId,
    items: rawItems,
    version: v,
    url: limitedProxy.info.url,
    pid: limitedProxy.info.pid,
  };
  await prime(load, limited, 'HIT/memory');
  const unlimited = {
    name: 'not rate-limited raw_item',
    route: rawId,
    items: rawItems,
    version: v,
    url: rawProxy.info.url,
    pid: rawProxy.info.pid,
  };
  pairs.push([limited, unlimited]);

  const spec = hitRound(mode);
  for (const t of pairs.flat()) {
    log(`  warm-up ${t.name} ${mode.warmS}s`);
    await load.call('blast', { ...spec(t), durationS: mode.warmS });
  }
  const runs = await interleaved(ctx, pairs, spec, (t) => ({
    server: t.pid,
    ...(t.redis ? { redis: redis.pid } : {}),
  }));

  for (const c of ceilings) await services.stop(c);
  await services.stop(redisProxy);
  await services.stop(limitedProxy);
  for (const p of Object.values(memProxies)) await services.stop(p);
  await services.stop(redis);

  const common = {
    keys,
    zipf: { s: ZIPF_S, seed: SEED, top1PercentShare: round(zipfTopShare(keys, ZIPF_S, Math.ceil(keys / 100)), 3) },
    logLevel: 'info',
    loadGenerator: 'lib/rawload.mjs (prepared requests, keep-alive, no pipelining)',
    connections: mode.hitConnections,
    rounds: mode.rounds,
    measureSecondsPerRound: mode.measureS,
    warmupSeconds: mode.warmS,
  };
  const results = hitRoutes.map((route, i) => {
    const [p, c, k] = pairs[i];
    const n = anchored[route.id]?.nginx;
    const cmp = compare(runs, p.name, c.name);
    const keyedCmp = compare(runs, k.name, c.name);
    const proxyVsKeyed = compare(runs, p.name, k.name);
    const logLines = runs[p.name].reduce((s, x) => s + (x.logLines ?? 0), 0);
    const nodeCalls = runs[p.name].reduce((s, x) => s + x.nodeCalls, 0);
    return {
      id: `memory-hit-vs-ceiling-${route.id}`,
      title: `1. Memory hit vs node:http ceiling: ${route.title}`,
      measured: round(cmp.ratio, 3),
      unit: 'ratio',
      target: CEILING_TARGET,
      pass: meets(cmp.ratio, CEILING_TARGET) && nodeCalls === 0,
      display:
        `${round(cmp.ratio, 3)} (${cmp.headlineFrom}; ` +
        `${Math.round(cmp.rps[p.name])} vs ${Math.round(cmp.rps[c.name])} req/s over ${routeInfo[route.id].items} Zipf keys; per server CPU-second ${cmp.perServerCpuSecondRatio ?? '?'}; ${logLines} log lines${nodeCalls ? `; ${nodeCalls} reads reached the node: not all hits` : ''}. ` +
        `Keyed ceiling ÷ ceiling ${round(keyedCmp.ratio, 3)}: proxy ÷ keyed ceiling ${round(proxyVsKeyed.ratio, 3)})`,
      raw: {
        ...common,
        route: route.id,
        served: routeInfo[route.id].served,
        reply: routeInfo[route.id].reply,
        ...cmp,
        keyedCeiling: {
          ratioToCeiling: round(keyedCmp.ratio, 3),
          proxyRatioToKeyed: round(proxyVsKeyed.ratio, 3),
          rps: keyedCmp.rps[k.name],
          serverCpuMicrosPerRequest: keyedCmp.serverCpuMicrosPerRequest[k.name],
        },
        logLinesDuringMeasurement: logLines,
        nodeCallsDuringMeasurement: nodeCalls,
        ...(n ? { nginx: { proxyRatioToNginx: round(compare(runs, p.name, n.name).ratio, 3) } } : {}),
        runs: { [p.name]: runs[p.name], [c.name]: runs[c.name], [k.name]: runs[k.name] },
      },
    };
  });
  results.push(...anchorRows({ anchor, hitRoutes, measured: anchored, runs, compare, common }));
  for (const route of hitRoutes) results.push(socketLimitRow(route, socketLimits[route.id], runs, common));
  const limitedCmp = compare(runs, limited.name, unlimited.name);
  const limitedNodeCalls = runs[limited.name].reduce((n, x) => n + x.nodeCalls, 0);
  results.push({
    id: 'rate-limited-hit-vs-hit',
    title:
      '1b. Memory hit with tenants on (production example: counted per client address, shared through Redis) vs without (raw_item)',
    measured: round(limitedCmp.ratio, 3),
    unit: 'ratio',
    target: RATE_LIMITED_TARGET,
    pass: meets(limitedCmp.ratio, RATE_LIMITED_TARGET) && limitedNodeCalls === 0,
    display: `${round(limitedCmp.ratio, 3)} (${limitedCmp.headlineFrom}; ${Math.round(limitedCmp.rps[limited.name])} vs ${Math.round(limitedCmp.rps[unlimited.name])} req/s over ${rawItems.length} Zipf keys; per server CPU-second ${limitedCmp.perServerCpuSecondRatio ?? '?'}${limitedNodeCalls ? `; ${limitedNodeCalls} reads reached the node: not all hits` : ''})`,
    raw: {
      ...common,
      ...TENANT_LIMITS,
      ...limitedCmp,
      nodeCallsDuringMeasurement: limitedNodeCalls,
      runs: { [limited.name]: runs[limited.name], [unlimited.name]: runs[unlimited.name] },
    },
  });
  const cmp = compare(runs, redisCycle.name, memCycle.name);
  const redisNodeCalls = [redisCycle, memCycle].reduce(
    (n, t) => n + runs[t.name].reduce((s, x) => s + x.nodeCalls, 0),
    0,
  );
  results.push({
    id: 'redis-hit-vs-memory-hit',
    title: '2. Redis-tier hit vs memory-tier hit (raw_item)',
    measured: round(cmp.ratio, 3),
    unit: 'ratio',
    target: REDIS_TARGET,
    pass: meets(cmp.ratio, REDIS_TARGET) && redisNodeCalls === 0,
    display: `${round(cmp.ratio, 3)} (${cmp.headlineFrom}; ${Math.round(cmp.rps[redisCycle.name])} vs ${Math.round(cmp.rps[memCycle.name])} req/s cycling over ${rawItems.length} keys; per server CPU-second ${cmp.perServerCpuSecondRatio ?? '?'}${redisNodeCalls ? `; ${redisNodeCalls} reads reached the node: not all hits` : ''})`,
    raw: {
      ...common,
      served: redisServed,
      ...cmp,
      nodeCallsDuringMeasurement: redisNodeCalls,
      runs: { [redisCycle.name]: runs[redisCycle.name], [memCycle.name]: runs[memCycle.name] },
    },
  });
  return results;
}

/** 1s: a route's memory hits ÷ the socket limit (proc/socket-limit.mjs), per server CPU-second. */
function socketLimitRow(route, { proxy, limit }, runs, common) {
  const cmp = compare(runs, proxy.name, limit.name);
  const ratio = cmp.perServerCpuSecondRatio ?? cmp.ratio;
  const micros = cmp.serverCpuMicrosPerRequest;
  return {
    id: `memory-hit-vs-socket-limit-${route.id}`,
    title: `1s. Memory hit vs the socket limit (a plain net.Server writing the prepared reply), per server CPU-second: ${route.title}`,
    measured: round(ratio, 3),
    unit: 'ratio',
    target: SOCKET_LIMIT_TARGET,
    pass: meets(ratio, SOCKET_LIMIT_TARGET),
    display: `${round(ratio, 3)} (${micros[proxy.name]} vs ${micros[limit.name]} CPU µs per reply; req/s ratio ${round(cmp.ratio, 3)}, ${cmp.headlineFrom})`,
    raw: {
      ...common,
      route: route.id,
      ...cmp,
      runs: { [proxy.name]: runs[proxy.name], [limit.name]: runs[limit.name] },
    },
  };
}
