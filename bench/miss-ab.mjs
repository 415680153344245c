// node bench/miss-ab.mjs [--base=DIR] [--rounds=4]
// The miss path's CPU: latest raw_item reads of a new key each (every one
// forwarded to the sim), 8 connections, through this checkout's proxy, the base
// build's (DIR: a checkout of another commit, built) and the bare forwarder
// (proc/forwarder.mjs), in rotating rounds. Prints each server's CPU µs per miss
// (all its threads, from /proc): steadier than scenario 3's latencies on a shared
// machine, and what those latencies follow, since the sim shares the server's CPU.
import { resolve } from 'node:path';
import { cpuMeter } from './lib/procstat.mjs';
import { itemKey, rawItem } from './lib/requests.mjs';
import { Services, SERVER_CPU } from './lib/services.mjs';

const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const base = arg('base');
const rounds = Number(arg('rounds', '4'));
const MEASURE_S = 3;

const services = new Services();
try {
  const load = await services.load();
  const sim = await services.sim({ versionsPerSecond: 0, startVersion: '100000' }, { cpu: SERVER_CPU });
  const servers = [{ name: 'this build', handle: await services.proxy(sim.info.url, {}, { name: 'this build' }) }];
  if (base)
    servers.push({
      name: 'base',
      handle: await services.proxy(sim.info.url, {}, { name: 'base', script: resolve(base, 'bench/proc/proxy.mjs') }),
    });
  servers.push({ name: 'forwarder', handle: await services.forwarder(sim.info.url) });

  const sample = rawItem(itemKey(0), null);
  let nextKey = 1_000_000;
  const run = (url, duration) => {
    const start = nextKey;
    nextKey += 1_000_000;
    return load.call('run', {
      url,
      path: sample.path,
      headers: sample.headers,
      body: sample.body.toString('utf8'),
      connections: 8,
      duration,
      workload: { kind: 'distinctLatest', start },
    });
  };
  for (const s of servers) await run(s.handle.info.url, 2);
  const totals = new Map(servers.map((s) => [s.name, { misses: 0, cpuS: 0 }]));
  for (let i = 0; i < rounds; i++) {
    const order = [...servers.slice(i % servers.length), ...servers.slice(0, i % servers.length)];
    for (const s of order) {
      const meter = cpuMeter({ server: s.handle.info.pid });
      const started = performance.now();
      const r = await run(s.handle.info.url, MEASURE_S);
      const wallS = (performance.now() - started) / 1000;
      if (r.errors + r.timeouts > 0) throw new Error(`${s.name}: ${r.errors} errors, ${r.timeouts} timeouts`);
      const t = totals.get(s.name);
      t.misses += r.completed;
      t.cpuS += meter().server * wallS;
    }
  }
  const perMiss = (name) => (totals.get(name).cpuS / totals.get(name).misses) * 1e6;
  for (const s of servers)
    console.log(
      `${s.name.padEnd(10)} ${perMiss(s.name).toFixed(1)} CPU µs per miss (${totals.get(s.name).misses} misses)`,
    );
  if (base)
    console.log(`this build ÷ base: ${(perMiss('this build') / perMiss('base')).toFixed(3)} of the CPU per miss`);
} finally {
  await services.stopAll();
}
