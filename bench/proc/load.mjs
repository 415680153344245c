// The load generator, in its own process (pinned apart from the servers when
// possible). Calls:
//   run(spec)   one autocannon run, bounded by `duration` seconds
//   blast(spec) many distinct prepared requests (lib/rawload.mjs): the hit scenarios
//   burst(spec) n identical requests at once on n connections (undici), for coalescing
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { childParams, serveRpc } from '../lib/child.mjs';
import { percentiles } from '../lib/stats.mjs';
import { makeWorkload } from '../lib/workloads.mjs';
import { blast as rawBlast, sequence, wireRequest } from '../lib/rawload.mjs';
import { hitRoute } from '../lib/routes.mjs';
import { oracleNodeCalls } from '../lib/oracle.mjs';

childParams();

/**
 * spec: { url, path, method, headers, body (string | {base64}), connections, duration,
 *         overallRate?, workload? (see workloads.mjs), latencies?: record each response's time,
 *         countHeader?: count the values of this response header (or of several, joined by '/') }
 */
const traces = new Map();

async function run(spec) {
  const body =
    typeof spec.body === 'object' && spec.body !== null ? Buffer.from(spec.body.base64, 'base64') : spec.body;
  const headerCounts = {};
  // countHeader: one header name, or several whose values are counted joined by '/'
  const countHeaders = spec.countHeader === undefined ? [] : [spec.countHeader].flat().map((h) => h.toLowerCase());
  const countHeader = countHeaders.length > 0;
  const base = {
    method: spec.method ?? 'POST',
    path: spec.path,
    headers: spec.headers ?? {},
    body,
  };
  let requests;
  let workloadStats;
  let observe;
  let observed;
  if (spec.workload) {
    const setupRequest = makeWorkload(spec.workload);
    workloadStats = setupRequest.stats;
    observe = setupRequest.observe;
    observed = setupRequest.observed;
    if (spec.traceId && setupRequest.trace) traces.set(spec.traceId, setupRequest.trace);
    requests = [{ ...base, setupRequest }];
  } else {
    requests = [{ ...base }];
  }
  if (countHeader || observe) {
    requests[0].onResponse = (status, _body, context, headers) => {
      const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
      observe?.(status, context, lower);
      if (!countHeader) return;
      const value = countHeaders.map((h) => (lower[h] === undefined ? '(none)' : String(lower[h]))).join('/');
      headerCounts[value] = (headerCounts[value] ?? 0) + 1;
    };
  }
  const latencies = [];
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections ?? 50,
    pipelining: 1,
    duration: spec.duration,
    timeout: 10,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    requests,
  });
  if (spec.latencies) instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  const result = await instance;
  return {
    durationS: result.duration,
    completed: result.requests.total,
    sent: result.requests.sent,
    rps: result.requests.total / result.duration,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, v.count])),
    // autocannon's own histogram has 1 ms resolution; precise ones come from `latencies`
    latencyMs: spec.latencies
      ? percentiles(latencies)
      : { mean: result.latency.mean, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    ...(spec.latencies && spec.returnSamples ? { samples: latencies } : {}),
    ...(countHeader ? { headerCounts } : {}),
    // counts of generated requests by kind (includes the first, built before the run starts)
    ...(workloadStats ? { workloadStats } : {}),
    // what the workload kept of each response it observes (walletWrites' covered reads)
    ...(observe ? { observed } : {}),
  };
}

/**
 * spec: { url, path, method, headers, body, n, warmPath }: n requests sent at once
 * on n connections. The n connections are opened first (n concurrent GETs of
 * warmPath, which the server answers itself), so the burst's requests leave
 * together instead of waiting on n TCP handshakes.
 */
async function burst(spec) {
  const dispatcher = new Agent({ connections: spec.n, pipelining: 1 });
  try {
    await Promise.all(
      Array.from({ length: spec.n }, async () => {
        const res = await request(spec.url + spec.warmPath, { method: 'GET', dispatcher });
        await res.body.arrayBuffer();
      }),
    );
    const started = performance.now();
    const replies = await Promise.all(
      Array.from({ length: spec.n }, async () => {
        const res = await request(spec.url + spec.path, {
          method: spec.method ?? 'POST',
          headers: spec.headers,
          body: spec.body,
          dispatcher,
        });
        await res.body.arrayBuffer();
        return {
          status: res.statusCode,
          cache: String(res.headers['x-cache'] ?? '(none)'),
          ms: performance.now() - started,
        };
      }),
    );
    const byCache = {};
    const byStatus = {};
    for (const r of replies) {
      byCache[r.cache] = (byCache[r.cache] ?? 0) + 1;
      byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    }
    const times = replies.map((r) => r.ms).sort((a, b) => a - b);
    return {
      n: spec.n,
      ms: performance.now() - started,
      firstReplyMs: times[0],
      lastReplyMs: times[times.length - 1],
      byCache,
      byStatus,
    };
  } finally {
    await dispatcher.close();
  }
}

const prepared = new Map();

/**
 * spec: { url, route (lib/routes.mjs id), items (item numbers), version, order: 'zipf' | 'cycle',
 *         s?, seed?, connections, durationS?, once?, eachConnection?, countHeaders? }
 * The requests and their order are built once per (url, route, items, version, order).
 */
async function blast(spec) {
  const id = JSON.stringify([
    spec.url,
    spec.route,
    spec.items.length,
    spec.items[0],
    spec.items.at(-1),
    spec.version,
    spec.order,
    spec.s,
    spec.seed,
  ]);
  let p = prepared.get(id);
  if (!p) {
    const route = hitRoute(spec.route);
    const host = new URL(spec.url).host;
    const requests = spec.items.map((item) => wireRequest(host, route.request(item, spec.version)));
    p = { requests, seq: sequence({ order: spec.order, n: requests.length, s: spec.s, seed: spec.seed }) };
    prepared.set(id, p);
  }
  const seq = spec.once && spec.order !== 'cycle' ? sequence({ order: 'cycle', n: p.requests.length }) : p.seq;
  return rawBlast({ ...spec, requests: p.requests, seq });
}

/** The oracle's node calls (lib/oracle.mjs) for the traces recorded under `traceIds` (then forgotten). */
function oracle({ traceIds, windowMs, inflightMs }) {
  const list = traceIds.map((id) => traces.get(id));
  if (list.some((t) => !t)) throw new Error(`no trace recorded for ${traceIds.join(', ')}`);
  for (const id of traceIds) traces.delete(id);
  return oracleNodeCalls(list, { windowMs, inflightMs });
}

serveRpc({ run, burst, blast, oracle }, { pid: process.pid });
