// Hot paths profiled: a proxy profiled (through node:inspector, for the measured
// window only: not its start-up, priming or warm-up) while the load generator
// drives one path; the profile goes to bench/results/<name>.cpuprofile
// (git-ignored) and its top self-time functions, packages and the inclusive time of
// the proxy's own functions into latest.json.
//   memory-hit-<route>: memory hits of each route of lib/routes.mjs, the Zipf keys of scenario 1, 50 connections
//   redis-hit-raw_item: Redis-tier hits of raw_item (memory tier off), cycling through the keys as scenario 2 does
//   miss:               latest raw_item reads of a new key each (always forwarded to the sim)
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { summarizeProfile } from '../lib/cpuprofile.mjs';
import { call } from '../lib/http.mjs';
import { cpuMeter, round } from '../lib/procstat.mjs';
import { itemKey, rawItem } from '../lib/requests.mjs';
import { HIT_ROUTES, hitRoute, routeItems } from '../lib/routes.mjs';
import { prime } from './hit-throughput.mjs';

const PATHS = {
  ...Object.fromEntries(
    HIT_ROUTES.map((r) => [`memory-hit-${r.id}`, { connections: (mode) => mode.hitConnections, route: r.id }]),
  ),
  'redis-hit-raw_item': { connections: (mode) => mode.hitConnections, route: 'raw_item', redis: true },
  miss: { connections: () => 8, workload: (start) => ({ kind: 'distinctLatest', start }) },
};
export const PROFILE_PATHS = Object.keys(PATHS);

export async function profilePath(ctx, path) {
  const { services, load, sim, mode, log, version, root } = ctx;
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  const name = `${path}.cpuprofile`;
  rmSync(`${dir}${name}`, { force: true });
  const how = PATHS[path];
  const redis = how.redis ? await services.redis() : undefined;
  const config = redis ? { cache: { memory: { maxBytes: 1 }, redis: { url: redis.url } } } : {};
  const proxy = await services.proxy(sim.info.url, config, { name: `proxy-profiled-${path}` });
  let req;
  for (let i = 1; i < 64 && !req; i++) {
    if ((await call(proxy.info.url, rawItem(itemKey(i), version))).status === 200) req = rawItem(itemKey(i), version);
  }
  /** Profiles the proxy while `measure` drives it, for the measured window only; then stops it and summarises. */
  const profiled = async (measure) => {
    await ctx.quiet(`profile ${path}`);
    await proxy.call('profileStart');
    const meter = cpuMeter({ server: proxy.info.pid });
    const r = await measure();
    const cpu = meter();
    await proxy.call('profileStop', { file: `${dir}${name}` });
    await services.stop(proxy);
    if (redis) await services.stop(redis);
    const summary = summarizeProfile(`${dir}${name}`, { root: root.replace(/\/$/, ''), top: 25 });
    log(
      `  ${path}: ${Math.round(r.rps)} req/s under the profiler; ${summary.busyMs} ms busy, idle ${summary.idlePercent}%`,
    );
    return {
      path,
      ...summary,
      file: `bench/results/${name}`,
      rpsUnderProfiler: round(r.rps, 1),
      connections: how.connections(mode),
      seconds: mode.profileS,
      cpu,
    };
  };
  if (how.route) {
    const t = {
      name: path,
      url: proxy.info.url,
      route: how.route,
      items: routeItems(hitRoute(how.route), mode.hitKeys, version),
      version: String(version),
    };
    await prime(load, t, redis ? 'HIT/redis' : 'HIT/memory');
    const blast = (durationS) =>
      load.call('blast', {
        ...t,
        order: redis ? 'cycle' : 'zipf',
        s: 1,
        seed: 14,
        connections: how.connections(mode),
        durationS,
      });
    await blast(mode.warmS);
    return profiled(() => blast(mode.profileS));
  }
  const spec = (duration, start) => ({
    url: proxy.info.url,
    path: req.path,
    headers: req.headers,
    body: req.body.toString('utf8'),
    connections: how.connections(mode),
    duration,
    workload: how.workload(start),
  });
  await load.call('run', spec(mode.warmS, 10_000_000));
  return profiled(() => load.call('run', spec(mode.profileS, 20_000_000)));
}
