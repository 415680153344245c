// node bench/inproc-hit.mjs [--base=DIR] [--routes=raw_item,view_bcs] [--rounds=4] [--keys=1000] [--count=200000]
// The proxy's own CPU per memory hit, without sockets: each build (this checkout's
// dist/, and DIR's when given) runs in a process of its own, with a sim, primes the
// route's keys over HTTP, then feeds raw requests to a lane connection over a fake
// socket (a Duplex that takes the replies) and reads process.cpuUsage() over `count`
// hits, five times (the median is printed). No syscalls and no load generator: the
// figure is what the entry, the read path, the writer and the lane's parser cost, which
// moves less with other load on a shared machine than scenario 1 does. Builds alternate,
// the order flipping each round.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { startInProcess } from './lib/inproc.mjs';

const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const keys = Number(arg('keys', '1000'));
const count = Number(arg('count', '200000'));

if (arg('child') !== undefined) await child(arg('child'), arg('route'));
else parent();

function parent() {
  const builds = [here, ...(arg('base') ? [resolve(arg('base'))] : [])];
  const routes = arg('routes', 'raw_item,view_json,view_bcs,resource').split(',');
  const rounds = Number(arg('rounds', '4'));
  const got = new Map();
  for (let round = 0; round < rounds; round++)
    for (const route of routes)
      for (const build of round % 2 ? [...builds].reverse() : builds) {
        const run = spawnSync(
          process.execPath,
          [
            fileURLToPath(import.meta.url),
            `--child=${build}`,
            `--route=${route}`,
            `--keys=${keys}`,
            `--count=${count}`,
          ],
          { encoding: 'utf8' },
        );
        if (run.status !== 0) throw new Error(`${build} ${route}: ${run.stderr}`);
        const us = Number(run.stdout.trim());
        console.log(`  round ${round + 1} ${build === here ? 'this' : 'base'} ${route}: ${us.toFixed(2)} µs`);
        got.set(`${build}|${route}`, [...(got.get(`${build}|${route}`) ?? []), us]);
      }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const route of routes) {
    const mine = median(got.get(`${here}|${route}`));
    const line = `${route}: this ${mine.toFixed(2)} µs CPU per hit`;
    if (builds.length === 1) console.log(line);
    else {
      const base = median(got.get(`${builds[1]}|${route}`));
      console.log(`${line}, base ${base.toFixed(2)} (this ÷ base ${(mine / base).toFixed(3)}; medians over rounds)`);
    }
  }
}

async function child(root, routeId) {
  const proxy = await startInProcess(root, routeId, keys);
  const feed = (n) => {
    for (let i = 0; i < n; i++) proxy.send(proxy.requests[i % proxy.requests.length].bytes);
  };
  feed(50_000);
  proxy.expectHits(50_000);
  const samples = [];
  for (let i = 0; i < 5; i++) {
    const start = process.cpuUsage();
    feed(count);
    const used = process.cpuUsage(start);
    samples.push((used.user + used.system) / count);
  }
  console.log(samples.sort((a, b) => a - b)[2]);
  await proxy.close();
  process.exit(0);
}
