import pino from 'pino';
import { buildApp } from '/work/wt/feed-core/dist/app.js';
import { parseConfig } from '/work/wt/feed-core/dist/config/index.js';
import { startSim } from '/work/wt/feed-core/dist/sim/index.js';
import { makeWorkload } from '/work/wt/feed-core/bench/lib/workloads.mjs';
import { request } from 'undici';
const sim = await startSim({ port: 0, versionsPerSecond: 20, startVersion: 100000n, writes: { model: 'sparse', accounts: 400, objects: 8, tables: 4, tableKeys: 100, writeRate: 0.02 } });
const app = await buildApp(parseConfig({ server: { host: '127.0.0.1', port: 0 }, admin: { port: 0 }, upstreams: [{ url: sim.url, name: 'sim' }], routing: { probeIntervalMs: 250 }, latest: { changeFeed: { enabled: true } }, log: { level: 'silent' } }), { logger: pino({ level: 'silent' }) });
const url = await app.listen();
const u = sim.writes.universe;
const setup = makeWorkload({ kind: 'walletWrites', accounts: u.accounts, tables: u.tables, tableKeys: u.tableKeys, s: 1.0, pinnedShare: 0.8, version: '100000', seed: 3 });
const end = Date.now() + Number(process.argv[2] ?? 15000);
const xc = {};
async function client() { while (Date.now() < end) { const r = setup({ headers: {} }); const res = await request(url + r.path, { method: r.method, headers: r.headers, body: r.body }); await res.body.arrayBuffer(); const c = res.headers['x-cache']; xc[c] = (xc[c] ?? 0) + 1; } }
await Promise.all(Array.from({ length: 16 }, client));
console.log(JSON.stringify(globalThis.__fs), JSON.stringify(xc), JSON.stringify(setup.stats));
await app.close(); await sim.close();
