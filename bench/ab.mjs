// node bench/ab.mjs --base=DIR [--routes=raw_item,view_bcs] [--rounds=6] [--keys=10000] [--node-args=--flag,…]
// A/B of two builds of the proxy: this checkout's dist/ against DIR's (a checkout
// of another commit, built, with its own bench/proc/proxy.mjs), both answering
// memory hits of the same Zipf keys, in alternating rounds on the server CPU, as
// scenario 1 runs proxy and ceiling. Prints this build's req/s ÷ the base's per
// route: a change to the hit path is judged by it before the full bench.
// --node-args: node flags for this build's proxy only (to judge a runtime setting).
import { resolve } from 'node:path';
import { compare, hitRound, interleaved, prime } from './scenarios/hit-throughput.mjs';
import { Services } from './lib/services.mjs';
import { HIT_ROUTES, routeItems } from './lib/routes.mjs';

const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const base = arg('base');
if (!base) {
  console.error('usage: node bench/ab.mjs --base=DIR [--routes=a,b] [--rounds=N] [--keys=N]');
  process.exit(2);
}
const routeIds = arg('routes', HIT_ROUTES.map((r) => r.id).join(',')).split(',');
const mode = { rounds: Number(arg('rounds', '6')), measureS: 3, warmS: 2, hitConnections: 50 };
const keys = Number(arg('keys', '10000'));
const nodeArgs = ['--expose-gc', ...(arg('node-args', '') || '').split(',').filter(Boolean)];
const log = (msg) => console.log(msg);

const services = new Services();
try {
  const load = await services.load();
  const sim = await services.sim({ versionsPerSecond: 0, startVersion: '100000' });
  const version = BigInt((await sim.call('ledger')).ledgerVersion);
  const config = { cache: { memory: { maxBytes: 256 * 1024 * 1024 } } };
  const next = await services.proxy(sim.info.url, config, { name: 'this build', nodeArgs });
  const old = await services.proxy(sim.info.url, config, {
    name: 'base',
    script: resolve(base, 'bench/proc/proxy.mjs'),
  });
  const pairs = [];
  for (const id of routeIds) {
    const route = HIT_ROUTES.find((r) => r.id === id);
    const items = routeItems(route, keys, version);
    const t = (p, name) => ({
      name: `${name} ${id}`,
      route: id,
      items,
      version: String(version),
      url: p.info.url,
      pid: p.info.pid,
    });
    const pair = [t(next, 'this'), t(old, 'base')];
    for (const x of pair) await prime(load, x, 'HIT/memory');
    pairs.push(pair);
  }
  const spec = hitRound(mode);
  for (const t of pairs.flat()) await load.call('blast', { ...spec(t), durationS: mode.warmS });
  const ctx = { load, mode, log, sim, quiet: async () => undefined };
  const runs = await interleaved(ctx, pairs, spec, (t) => ({ server: t.pid }));
  for (const [a, b] of pairs) {
    const c = compare(runs, a.name, b.name);
    console.log(
      `${a.route}: this ÷ base ${c.ratio.toFixed(3)} (rounds ${c.perRound.join(' ')}; ${c.rps[a.name]} vs ${c.rps[b.name]} req/s; µs CPU/request ${c.serverCpuMicrosPerRequest[a.name]} vs ${c.serverCpuMicrosPerRequest[b.name]})`,
    );
  }
} finally {
  await services.stopAll();
}
