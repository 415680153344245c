// The proxy in its own process, built with buildApp from dist/ as main.ts does.
// BENCH_PARAMS: { config, logLevel } merged over a bench base (127.0.0.1:0, admin off).
// The log level is the proxy's default, info, unless a scenario says otherwise; the
// log lines go to stdout as main.ts writes them (the bench points stdout at a file).
// Calls: stats (memory tier, RSS), settle (GC, then memory figures), shutdown (closes the app, so --cpu-prof is written).
import pino from 'pino';
import { buildApp } from '../../dist/app.js';
import { parseConfig } from '../../dist/config/index.js';
import { childParams, serveRpc } from '../lib/child.mjs';

const { config: overrides = {}, logLevel = 'info' } = childParams();
const config = parseConfig({
  server: { host: '127.0.0.1', port: 0 },
  admin: { port: 0 },
  log: { level: logLevel },
  ...overrides,
});
const app = await buildApp(config, { logger: pino({ level: logLevel }) });
const url = await app.listen();

serveRpc(
  {
    stats: () => ({ memory: app.memory.stats(), rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed }),
    /** After a few GCs: process memory and the memory tier's size (needs --expose-gc). */
    async settle() {
      for (let i = 0; i < 3; i++) {
        globalThis.gc?.();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const m = process.memoryUsage();
      return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, memory: app.memory.stats() };
    },
    shutdown: () => app.close(),
  },
  { url, pid: process.pid },
);
