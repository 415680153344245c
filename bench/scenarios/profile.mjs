// Hot paths under `node --cpu-prof`: a proxy profiled for its whole run while the
// load generator drives one path; the profile goes to bench/results/<name>.cpuprofile
// (git-ignored) and its top self-time functions, packages and the inclusive time of
// the proxy's own functions into latest.json.
//   memory-hit: one pinned raw_item memory hit, 50 connections, as fast as it goes
//   miss:       latest raw_item reads of a new key each (always forwarded to the sim)
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { summarizeProfile } from '../lib/cpuprofile.mjs';
import { call } from '../lib/http.mjs';
import { cpuMeter, round } from '../lib/procstat.mjs';
import { itemKey, rawItem } from '../lib/requests.mjs';

const PATHS = {
  'memory-hit': { connections: (mode) => mode.hitConnections, workload: () => undefined },
  miss: { connections: () => 8, workload: (start) => ({ kind: 'distinctLatest', start }) },
};

export async function profilePath(ctx, path) {
  const { services, load, sim, mode, log, version, root } = ctx;
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  const name = `${path}.cpuprofile`;
  rmSync(`${dir}${name}`, { force: true });
  const proxy = await services.proxy(sim.info.url, {}, { name: `proxy-profiled-${path}`, nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', name] });
  let req;
  for (let i = 1; i < 64 && !req; i++) {
    if ((await call(proxy.info.url, rawItem(itemKey(i), version))).status === 200) req = rawItem(itemKey(i), version);
  }
  if (path === 'memory-hit' && (await call(proxy.info.url, req)).headers['x-cache-tier'] !== 'memory') throw new Error('profile: not a memory hit');
  const how = PATHS[path];
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
  await ctx.quiet(`profile ${path}`);
  const meter = cpuMeter({ server: proxy.info.pid });
  const r = await load.call('run', spec(mode.profileS, 20_000_000));
  const cpu = meter();
  await services.stop(proxy); // a clean exit writes the profile
  const summary = summarizeProfile(`${dir}${name}`, { root: root.replace(/\/$/, ''), top: 25 });
  log(`  ${path}: ${Math.round(r.rps)} req/s under the profiler; ${summary.busyMs} ms busy, idle ${summary.idlePercent}%`);
  return { path, ...summary, file: `bench/results/${name}`, rpsUnderProfiler: round(r.rps, 1), connections: how.connections(mode), seconds: mode.profileS, cpu };
}
