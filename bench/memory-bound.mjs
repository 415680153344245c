// The sizing rule, measured on the whole process: the CLI (`node dist/main.js`,
// log level info, stdout drained) in front of the sim, at each cache.memory.maxBytes
// given, under the memory-bound test's soak of unique keys (bench/lib/soak.mjs)
// until the tier's share has been filled `--fills` times over and for at least
// `--min-seconds`; RSS from /proc every 500 ms. One size at a time, never beside another measurement: run it on a quiet
// machine (`uptime`). Needs `npm run build`.
//
//   node bench/memory-bound.mjs [--sizes 32,256,1024] [--fills 3] [--min-seconds 60] [--max-minutes 20]
//
// Prints one line per size and writes bench/results/memory-bound.json.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { memoryShares } from '../dist/config/memory-shares.js';
import { startSim } from '../dist/sim/index.js';
import { freePort, startCliProxy } from './lib/cli-proxy.mjs';
import { peakBetween, residentBytes, sampleRss, soak, SOAK_FIRST_VERSION, statedOverheadBytes } from './lib/soak.mjs';

const MiB = 1024 * 1024;
const CONNECTIONS = 16;
/** Keys read first, to learn what a key is charged before the tier is full. */
const PROBE_KEYS = 4000;
/** About what a latest answer of the soak (resources, or a 404) and a spelling are charged. */
const LATEST_ANSWER_BYTES = 900;
const SPELLING_BYTES = 1600;
/** The sim serves versions up to here: more keys than any run reads. */
const MAX_KEYS = 4_000_000;

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '32,256,1024' },
    fills: { type: 'string', default: '3' },
    'min-seconds': { type: 'string', default: '60' },
    'max-minutes': { type: 'string', default: '20' },
  },
});
const sizes = values.sizes.split(',').map((s) => Number(s) * MiB);
const fills = Number(values.fills);
const minMs = Number(values['min-seconds']) * 1000;
const maxMs = Number(values['max-minutes']) * 60_000;
const sizingPage = readFileSync(new URL('../docs/operations/deploy.md', import.meta.url), 'utf8');
const overhead = statedOverheadBytes(sizingPage);

async function tierBytes(adminPort) {
  const res = await fetch(`http://127.0.0.1:${adminPort}/metrics`);
  const line = /^ledger_proxy_cache_bytes\{tier="memory"\} (\d+)$/m.exec(await res.text());
  return Number(line?.[1] ?? Number.NaN);
}

const idle = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes) => Math.round((bytes / MiB) * 10) / 10;

async function measure(maxBytes) {
  const sim = await startSim({
    startVersion: BigInt(SOAK_FIRST_VERSION + MAX_KEYS),
    pruneWindow: BigInt(2 * MAX_KEYS),
  });
  const adminPort = await freePort();
  const proxy = await startCliProxy({
    config: {
      upstreams: [{ url: sim.url, name: 'sim' }],
      admin: { host: '127.0.0.1', port: adminPort },
      cache: { memory: { maxBytes } },
      latest: { staleIfErrorMs: 60_000 },
    },
  });
  try {
    await idle(2000);
    const idleRss = residentBytes(proxy.pid);
    const shares = memoryShares(maxBytes, { keepsLatestAnswers: true });
    const rss = sampleRss(proxy.pid, 500);
    const started = performance.now();
    const probe = await soak(proxy.info.url, { connections: CONNECTIONS, maxKeys: PROBE_KEYS, durationMs: maxMs });
    const perKey = (await tierBytes(adminPort)) / probe.keys;
    // The tier filled `fills` times over, and the other shares at least once (with a
    // margin): one key in eight is a latest read; seven in eight keep a spelling.
    const keys = Math.min(
      MAX_KEYS,
      Math.ceil(
        Math.max(
          (fills * shares.tier) / perKey,
          (1.25 * 8 * shares.latestAnswers) / LATEST_ANSWER_BYTES,
          (1.25 * 8 * shares.spellings) / (7 * SPELLING_BYTES),
        ),
      ),
    );
    const rest = await soak(proxy.info.url, {
      connections: CONNECTIONS,
      maxKeys: keys - probe.keys,
      durationMs: maxMs - (performance.now() - started),
      from: probe.keys,
    });
    // Small sizes fill in seconds: go on with new keys for the minimum time.
    const more = await soak(proxy.info.url, {
      connections: CONNECTIONS,
      maxKeys: MAX_KEYS - keys,
      durationMs: minMs - (performance.now() - started),
      from: probe.keys + rest.keys,
    });
    for (const [status, n] of Object.entries(more.byStatus)) rest.byStatus[status] = (rest.byStatus[status] ?? 0) + n;
    rest.keys += more.keys;
    const samples = rss.stop();
    const soakMs = performance.now() - started;
    const tierAtEnd = await tierBytes(adminPort);
    await idle(10_000);
    const peak = peakBetween(samples, 0, 1);
    const bound = 1.3 * maxBytes + overhead;
    return {
      maxBytesMiB: mib(maxBytes),
      sharesMiB: { tier: mib(shares.tier), spellings: mib(shares.spellings), latestAnswers: mib(shares.latestAnswers) },
      keys: probe.keys + rest.keys,
      chargedPerKeyBytes: Math.round(perKey),
      keysPerSecond: Math.round(((probe.keys + rest.keys) * 1000) / soakMs),
      soakSeconds: Math.round(soakMs / 1000),
      byStatus: Object.fromEntries(
        Object.keys({ ...probe.byStatus, ...rest.byStatus }).map((s) => [
          s,
          (probe.byStatus[s] ?? 0) + (rest.byStatus[s] ?? 0),
        ]),
      ),
      tierAtEndMiB: mib(tierAtEnd),
      idleRssMiB: mib(idleRss),
      peakRssMiB: mib(peak),
      middleThirdPeakMiB: mib(peakBetween(samples, 1 / 3, 2 / 3)),
      lastThirdPeakMiB: mib(peakBetween(samples, 2 / 3, 1)),
      peakByTenthMiB: Array.from({ length: 10 }, (_, i) => mib(peakBetween(samples, i / 10, (i + 1) / 10))),
      rssAfter10sIdleMiB: mib(residentBytes(proxy.pid)),
      overheadMeasuredMiB: mib(peak - 1.3 * maxBytes),
      boundMiB: mib(bound),
      withinBound: peak <= bound,
      logLines: proxy.logLines(),
    };
  } finally {
    await proxy.stop();
    await sim.close();
  }
}

const [load1] = os.loadavg();
console.log(
  `memory bound: rule RSS ≤ 1.3 × maxBytes + ${mib(overhead)} MiB; load average ${load1.toFixed(2)} on ${os.cpus().length} CPUs`,
);
const results = [];
for (const maxBytes of sizes) {
  const result = await measure(maxBytes);
  results.push(result);
  console.log(JSON.stringify(result));
}
const report = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model,
  loadAverageAtStart: load1,
  fills,
  connections: CONNECTIONS,
  statedOverheadMiB: mib(overhead),
  results,
};
writeFileSync(new URL('./results/memory-bound.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
