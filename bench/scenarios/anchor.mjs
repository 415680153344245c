// Scenario 1n: the anchor users would pick. nginx with proxy_cache (lib/nginx.mjs,
// proc/nginx.mjs) in front of the same sim, one per route as the proxies are,
// holding the same keys, measured in scenario 1's alternating rounds beside the
// proxy, the ceiling and the keyed ceiling. One worker, pinned to the proxy's CPU.
// It runs where nginx is installed (on the PATH or /usr/sbin/nginx) and is skipped,
// with the reason in the table, where it is not.
import { call } from '../lib/http.mjs';
import { findNginx, nginxVersion } from '../lib/nginx.mjs';
import { round } from '../lib/procstat.mjs';
import { meets } from '../lib/report.mjs';

/** Items compared byte for byte with the sim's answers before measuring, spread over the route's keys. */
const CHECKED = 32;

/** { bin, version } when nginx is here, else { skipped: why }. */
export function anchorAvailable() {
  const bin = findNginx();
  if (bin === null) return { skipped: 'nginx is not installed (not on the PATH, no /usr/sbin/nginx)' };
  const version = nginxVersion(bin);
  if (version === null) return { skipped: `${bin} -v did not run` };
  return { bin, version };
}

/**
 * Starts the route's nginx, fills its cache with the route's items (every one
 * then answered X-Cache: HIT) and checks its answers are the sim's (status and
 * body). Returns the handle and the load target.
 */
export async function startAnchor(ctx, { anchor, route, items, version, prime }) {
  const { services, sim, load } = ctx;
  const handle = await services.nginx({ bin: anchor.bin, upstream: sim.info.url });
  const target = {
    name: `nginx ${route.id}`,
    route: route.id,
    items,
    version: String(version),
    url: handle.info.url,
    pid: handle.info.pid,
  };
  const served = await prime(load, target, 'HIT', { headers: ['x-cache'] });
  for (let i = 0; i < CHECKED; i++) {
    const item = items[Math.floor((i * (items.length - 1)) / (CHECKED - 1))];
    const request = route.request(item, version);
    const direct = await call(sim.info.url, request);
    const cached = await call(handle.info.url, request);
    if (direct.status !== cached.status || !direct.body.equals(cached.body) || cached.headers['x-cache'] !== 'HIT')
      throw new Error(
        `${route.id} item ${item}: nginx answered ${cached.status} (${cached.body.length} B, X-Cache ${cached.headers['x-cache']}), the sim ${direct.status} (${direct.body.length} B)`,
      );
  }
  return { handle, target, served };
}

/**
 * The rows of scenario 1n: per route, memory hit ÷ nginx (its target in lib/routes.mjs)
 * beside the proxy ÷ keyed ceiling of the same rounds; one skipped row without nginx.
 * `measured`: per route { proxy, keyed, nginx } load targets.
 */
export function anchorRows({ anchor, hitRoutes, measured, runs, compare, common }) {
  if (anchor.skipped)
    return [
      {
        id: 'memory-hit-vs-nginx',
        title: '1n. Memory hit vs nginx proxy_cache',
        measured: null,
        unit: 'ratio',
        target: { op: '>=', value: 1 },
        pass: null,
        skipped: anchor.skipped,
        display: `skipped: ${anchor.skipped}`,
        raw: { skipped: anchor.skipped },
      },
    ];
  return hitRoutes.map((route) => {
    const { proxy, keyed, nginx } = measured[route.id];
    const cmp = compare(runs, proxy.name, nginx.name);
    const vsKeyed = compare(runs, proxy.name, keyed.name);
    const target = { op: '>=', value: route.anchor };
    const nodeCalls = runs[nginx.name].reduce((s, x) => s + x.nodeCalls, 0);
    const micros = cmp.serverCpuMicrosPerRequest;
    // Per server CPU-second: the load generator cannot saturate nginx, so req/s says what it sent, not what each server can.
    const ratio = cmp.perServerCpuSecondRatio ?? cmp.ratio;
    return {
      id: `memory-hit-vs-nginx-${route.id}`,
      title: `1n. Memory hit vs nginx proxy_cache, per server CPU-second: ${route.title}`,
      measured: round(ratio, 3),
      unit: 'ratio',
      target,
      pass: meets(ratio, target) && nodeCalls === 0,
      display:
        `${round(ratio, 3)} (CPU µs per request ${micros[proxy.name] ?? '?'} vs ${micros[nginx.name] ?? '?'}; ` +
        `req/s ratio ${round(cmp.ratio, 3)}, ${cmp.headlineFrom}; ${Math.round(cmp.rps[proxy.name])} vs ${Math.round(cmp.rps[nginx.name])} req/s` +
        `${nodeCalls ? `; ${nodeCalls} reads reached the node: not all hits` : ''}. Proxy ÷ keyed ceiling ${round(vsKeyed.ratio, 3)})`,
      raw: {
        ...common,
        route: route.id,
        nginx: {
          binary: anchor.bin,
          version: anchor.version,
          workers: 1,
          cacheKey: 'POST: $request_uri|$request_body; GET: $request_uri',
        },
        ...cmp,
        proxyRatioToKeyed: round(vsKeyed.ratio, 3),
        nodeCallsDuringMeasurement: nodeCalls,
        runs: { [nginx.name]: runs[nginx.name] },
      },
    };
  });
}
