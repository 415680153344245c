// Scenario 6a: a proxy built with buildApp whose memory tier is filled through
// app.memory.set with small answers shaped like raw_item hits (lib/entries.mjs).
// BENCH_PARAMS: { simUrl, maxBytes }. Calls: keyFunction, fill, shutdown.
import pino from 'pino';
import { buildApp } from '../../dist/app.js';
import { parseConfig } from '../../dist/config/index.js';
import { childParams, serveRpc } from '../lib/child.mjs';
import { entry, entryBytes, KEY_FUNCTIONS, keyOf, readRequest, VERSION } from '../lib/entries.mjs';
import { itemKey, rawItem } from '../lib/requests.mjs';

const { simUrl, maxBytes } = childParams();
const config = parseConfig({
  server: { host: '127.0.0.1', port: 0 },
  admin: { port: 0 },
  log: { level: 'warn' },
  upstreams: [{ url: simUrl, name: 'sim' }],
  cache: { memory: { maxBytes } },
});
const app = await buildApp(config, { logger: pino({ level: 'warn' }) });
const baseUrl = await app.listen();

async function settle() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

/** Which key function the memory tier really uses: one real miss through the listener (cached reads are answered by the raw responder, not fastify's inject), then look it up. */
async function detectKeyFunction() {
  const probe = 0xfffffff;
  const r = rawItem(itemKey(probe), VERSION);
  const reply = await fetch(new URL(r.path, baseUrl), { method: 'POST', headers: r.headers, body: r.body });
  await reply.arrayBuffer();
  // the node's chain id is in the key; the reply says it (vendor-prefixed header)
  const chainId = Number([...reply.headers].find(([k]) => k.endsWith('-chain-id'))?.[1]);
  for (const [name, fn] of Object.entries(KEY_FUNCTIONS)) {
    if (app.memory.get(keyOf(fn, readRequest(probe), VERSION, chainId)) !== undefined) return name;
  }
  throw new Error(
    `the memory tier's key is none of ${Object.keys(KEY_FUNCTIONS).join(', ')}: update bench/lib/entries.mjs`,
  );
}
const keyFunction = await detectKeyFunction();
app.memory.delete(keyOf(KEY_FUNCTIONS[keyFunction], readRequest(0xfffffff), VERSION));

serveRpc(
  {
    /** Inserts `count` entries (numbered from `from`); returns memory before and after (after GC). */
    async fill({ from = 0, count }) {
      const before = await settle();
      const statsBefore = app.memory.stats();
      const keyFn = KEY_FUNCTIONS[keyFunction];
      const started = performance.now();
      for (let i = from; i < from + count; i++) {
        const [key, answer] = entry(i, keyFn);
        app.memory.set(key, answer);
      }
      const ms = performance.now() - started;
      const after = await settle();
      return { ms, before, after, statsBefore, statsAfter: app.memory.stats() };
    },
    shutdown: () => app.close(),
  },
  { pid: process.pid, keyFunction, entryBytes: entryBytes(0, KEY_FUNCTIONS[keyFunction]) },
);
