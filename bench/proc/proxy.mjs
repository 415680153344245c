// The proxy in its own process, built with buildApp from dist/ as main.ts does.
// BENCH_PARAMS: { config, logLevel, plantMicros, dist } merged over a bench base (127.0.0.1:0, admin off).
// dist: the build to run (a directory holding its app.js; this checkout's dist/ by
// default), such as the speed guard's baseline (lib/baseline.mjs).
// plantMicros (the speed guard's --plant): every memory-tier hit first spins this many
// µs of CPU, a costlier build made to order, to prove the guard catches it. The
// proxy's own code never reads it: this process wraps the tier's get from outside.
// The log level is the proxy's default, info, unless a scenario says otherwise; the
// log lines go to stdout as main.ts writes them, through the same buffered destination
// (the bench drains that pipe and counts the lines).
// Calls: cpu (µs used so far), stats (memory tier, RSS), metrics (the /metrics text), settle (GC, then memory figures), profileStart /
// profileStop({ file }) (a V8 CPU profile of just that window, through node:inspector),
// shutdown (closes the app, so --cpu-prof is written).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { childParams, cpuMicros, serveRpc } from '../lib/child.mjs';

const { config: overrides = {}, logLevel = 'info', plantMicros = 0, dist } = childParams();
const built = dist === undefined ? new URL('../../dist/', import.meta.url) : pathToFileURL(`${dist}/`);
const from = (path) => import(new URL(path, built).href);
const [{ buildApp }, { MemoryStore }, { parseConfig }, { bufferedLogDestination }] = await Promise.all([
  from('app.js'),
  from('cache/memory.js'),
  from('config/index.js'),
  from('process/log.js'),
]);
if (plantMicros > 0) plantOnHits(plantMicros);
const config = parseConfig({
  server: { host: '127.0.0.1', port: 0 },
  admin: { port: 0 },
  log: { level: logLevel },
  ...overrides,
});
const app = await buildApp(config, { logger: pino({ level: logLevel }, bufferedLogDestination()) });
const url = await app.listen();
let session;

serveRpc(
  {
    stats: () => ({
      memory: app.memory.stats(),
      rss: process.memoryUsage().rss,
      heapUsed: process.memoryUsage().heapUsed,
    }),
    cpu: cpuMicros,
    /** The proxy's /metrics text. */
    metrics: async () => (await app.metrics.render()).body,
    /** After a few GCs: process memory and the memory tier's size (needs --expose-gc). */
    async settle() {
      for (let i = 0; i < 3; i++) {
        globalThis.gc?.();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const m = process.memoryUsage();
      return {
        rss: m.rss,
        heapUsed: m.heapUsed,
        heapTotal: m.heapTotal,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
        memory: app.memory.stats(),
      };
    },
    async profileStart() {
      session ??= new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    },
    async profileStop({ file }) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
    },
    shutdown: () => app.close(),
  },
  { url, pid: process.pid },
);

/**
 * Every hit of the memory tier first does `micros` µs of work: a loop whose speed is
 * measured in CPU time when the process starts, so the work costs what code of that
 * cost would, on a busy machine too (a spin on the wall clock costs less CPU there).
 * The speed is the fastest of twenty short trials: another process sharing the CPU
 * slows a trial, and two proxies calibrated in different moments would otherwise
 * plant different work.
 */
function plantOnHits(micros) {
  let sink = 0;
  const work = (loops) => {
    for (let i = 0; i < loops; i++) sink = (sink + i * 31) ^ (sink >>> 3);
    return sink;
  };
  work(1e6);
  const trial = 5e6;
  let fastest = Infinity;
  for (let i = 0; i < 20; i++) {
    const started = process.cpuUsage();
    work(trial);
    const { user, system } = process.cpuUsage(started);
    fastest = Math.min(fastest, user + system);
  }
  const loops = Math.max(1, Math.round((trial / fastest) * micros));
  const get = MemoryStore.prototype.get;
  MemoryStore.prototype.get = function plantedGet(key) {
    const found = get.call(this, key);
    if (found !== undefined) work(loops);
    return found;
  };
}
