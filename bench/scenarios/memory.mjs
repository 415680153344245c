// Scenario 6: memory. 6a: a proxy process whose memory tier is filled directly
// (app.memory.set) with 1M small entries until full (maxBytes such that the tier's
// share is what 1M such entries are charged); RSS after GC vs the sizing
// rule, 1.3 × maxBytes + its fixed overhead.
// 6b: the same tier filled the real way, by pinned misses over HTTP (the bodies
// are what the node client hands over): retained bytes per entry vs charged bytes.
import { readFileSync } from 'node:fs';
import { SPELLINGS_SHARE } from '../../dist/config/memory-shares.js';
import { round } from '../lib/procstat.mjs';
import { rawItem } from '../lib/requests.mjs';
import { meets } from '../lib/report.mjs';
import { statedOverheadBytes } from '../lib/soak.mjs';

const RETAINED_TARGET = { op: '<=', value: 1.3, formula: 'the 1.3 slope of 6a' };

const MiB = 1024 * 1024;

export async function memoryFootprint(ctx) {
  const { services, load, sim, mode, log, version } = ctx;

  // --- 6a: direct fill
  const entries = mode.memoryEntries;
  // A first process tells the key the memory tier uses and what one entry is charged;
  // the second gets the maxBytes whose tier share (the spellings take theirs) is
  // what `entries` such entries are charged.
  const probe = await services.memfill({ simUrl: sim.info.url, maxBytes: 1024 * 1024 });
  const { entryBytes, keyFunction } = probe.info;
  await services.stop(probe);
  const maxBytes = Math.ceil((entries * entryBytes) / (1 - SPELLINGS_SHARE));
  const filler = await services.memfill({ simUrl: sim.info.url, maxBytes });
  // 10% more than fit: the tier ends full, having evicted the oldest.
  const fill = await filler.call('fill', { count: Math.round(entries * 1.1) });
  await services.stop(filler);
  const rss = fill.after.rss;
  const overhead = statedOverheadBytes(
    readFileSync(new URL('../../docs/operations/deploy.md', import.meta.url), 'utf8'),
  );
  const targetBytes = 1.3 * maxBytes + overhead;
  log(
    `  direct fill: ${fill.statsAfter.entries} entries (${entryBytes} B charged each) in ${Math.round(fill.ms)} ms; maxBytes ${(maxBytes / MiB).toFixed(1)} MiB, RSS ${(rss / MiB).toFixed(1)} MiB (before fill ${(fill.before.rss / MiB).toFixed(1)} MiB), target ${(targetBytes / MiB).toFixed(1)} MiB`,
  );

  // --- 6b: fill by HTTP misses, then compare retained vs charged bytes per entry
  const count = mode.httpFillEntries;
  const proxy = await services.proxy(sim.info.url, {}, { name: 'proxy-memory' });
  const sample = rawItem('0x00', version);
  const spec = (start, duration, _amount) => ({
    url: proxy.info.url,
    path: sample.path,
    headers: sample.headers,
    body: sample.body.toString('utf8'),
    connections: 32,
    duration,
    workload: { kind: 'distinctPinned', start, version: String(version) },
  });
  // Warm the process (JIT, pools, buffers) with other keys first, so the delta is the entries.
  await load.call('run', spec(50_000_000, mode.warmS));
  const before = await proxy.call('settle');
  let filled = 0;
  let start = 0;
  const deadline = Date.now() + 60_000;
  while (filled < count && Date.now() < deadline) {
    const r = await load.call('run', spec(start, Math.max(1, Math.min(10, (count - filled) / 4000))));
    start += r.sent + 100;
    filled = (await proxy.call('stats')).memory.entries - before.memory.entries;
  }
  const after = await proxy.call('settle');
  await services.stop(proxy);
  const added = after.memory.entries - before.memory.entries;
  const charged = (after.memory.bytes - before.memory.bytes) / added;
  // Live bytes (V8 heap + ArrayBuffer backing stores, after GC) per entry: precise at
  // this count, where RSS also moves with heap sizing and the load itself.
  const perEntry = {
    live: (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / added,
    heapUsed: (after.heapUsed - before.heapUsed) / added,
    arrayBuffers: (after.arrayBuffers - before.arrayBuffers) / added,
    rss: (after.rss - before.rss) / added,
  };
  const directLive =
    (fill.after.heapUsed + fill.after.arrayBuffers - fill.before.heapUsed - fill.before.arrayBuffers) /
    fill.statsAfter.entries;
  const retainedRatio = perEntry.live / charged;
  log(
    `  HTTP fill: ${added} entries, charged ${charged.toFixed(0)} B/entry; live per entry ${perEntry.live.toFixed(0)} B (heap ${perEntry.heapUsed.toFixed(0)} B, ArrayBuffers ${perEntry.arrayBuffers.toFixed(0)} B; RSS ${perEntry.rss.toFixed(0)} B); direct fill: live ${directLive.toFixed(0)} B per ${entryBytes} B charged`,
  );

  return [
    {
      id: 'memory-rss',
      title: `6a. RSS with the memory tier full of ${(fill.statsAfter.entries / 1e6).toFixed(2)}M small entries`,
      measured: round(rss / MiB, 1),
      unit: 'MiB',
      target: {
        op: '<=',
        value: round(targetBytes / MiB, 1),
        formula: `1.3 × maxBytes + ${round(overhead / MiB, 0)} MiB`,
      },
      pass: rss <= targetBytes,
      display: `${(rss / MiB).toFixed(1)} MiB (maxBytes ${(maxBytes / MiB).toFixed(1)} MiB)`,
      raw: {
        method:
          'app.memory.set in a proxy process built with buildApp; requests from parseRawItem; compact 8-byte bodies; inserted 1.1 × entries',
        keyFunction,
        maxBytes,
        entryBytesCharged: entryBytes,
        entriesHeld: fill.statsAfter.entries,
        chargedBytes: fill.statsAfter.bytes,
        inserted: Math.round(entries * 1.1),
        fillMs: Math.round(fill.ms),
        before: fill.before,
        after: fill.after,
        rssPerEntryBytes: round((fill.after.rss - fill.before.rss) / fill.statsAfter.entries, 1),
        targetBytes,
      },
    },
    {
      id: 'memory-http-retained',
      title: '6b. Entries filled by real misses: live bytes vs charged',
      measured: round(retainedRatio, 3),
      unit: '× charged',
      target: RETAINED_TARGET,
      pass: meets(retainedRatio, RETAINED_TARGET),
      display: `${retainedRatio.toFixed(2)}× (${perEntry.live.toFixed(0)} B live vs ${charged.toFixed(0)} B charged, of which ArrayBuffers ${perEntry.arrayBuffers.toFixed(0)} B; direct fill ${(directLive / entryBytes).toFixed(2)}×)`,
      raw: {
        method:
          'distinct pinned raw_item misses over HTTP through the proxy; heapUsed + arrayBuffers after GC, before and after',
        entriesAdded: added,
        chargedBytesPerEntry: round(charged, 1),
        bytesPerEntry: Object.fromEntries(Object.entries(perEntry).map(([k, v]) => [k, round(v, 1)])),
        directFillLiveBytesPerEntry: round(directLive, 1),
        // What 6a's tier would cost if its entries had been filled this way (a projection, not a measurement).
        projectedRssAt6aMaxBytesMiB: round((fill.before.rss + maxBytes * retainedRatio) / MiB, 1),
        before,
        after,
      },
    },
  ];
}
