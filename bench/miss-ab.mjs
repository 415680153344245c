// node bench/miss-ab.mjs [--base=DIR] [--rounds=4]
// The miss path's CPU: latest raw_item reads of a new key each (every one
// forwarded to the sim), 8 connections, through this checkout's proxy, the base
// build's (DIR: a checkout of another commit, built) and the bare forwarder
// (proc/forwarder.mjs), in rotating rounds. Prints each server's CPU µs per miss
// (all its threads, from /proc): steadier than scenario 3's latencies on a shared
// machine, and what those latencies follow, since the sim shares the server's CPU.
import { resolve } from 'node:path';
import { cpuPerMiss } from './lib/miss-cpu.mjs';
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

  const got = await cpuPerMiss(
    load,
    servers.map((s) => ({ name: s.name, url: s.handle.info.url, pid: s.handle.info.pid })),
    { rounds, seconds: MEASURE_S, firstKey: 1_000_000 },
  );
  const perMiss = (name) => got[name].cpuMicrosPerMiss;
  for (const s of servers)
    console.log(
      `${s.name.padEnd(10)} ${perMiss(s.name)?.toFixed(1) ?? '?'} CPU µs per miss (${got[s.name].misses} misses)`,
    );
  if (base)
    console.log(`this build ÷ base: ${(perMiss('this build') / perMiss('base')).toFixed(3)} of the CPU per miss`);
} finally {
  await services.stopAll();
}
