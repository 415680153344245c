// Scenario 5: coalescing. n identical requests at once, with a 'slow' fault on the
// sim so they overlap: pinned misses (single-flight per cache key) and latest
// reads (single-flight per canonical request), for raw_item and view.
// Target: one node call per burst. The connections are opened before each burst,
// and the report says whether every reply came within one slow answer of the first.
import { call } from '../lib/http.mjs';
import { address, itemKey, rawItem, viewJson } from '../lib/requests.mjs';

const SLOW_MS = 500;
/** Answered by the proxy itself (404, no node call): opens the burst's connections beforehand. */
const WARM_PATH = '/bench-connection-warmup';

export async function burstCoalescing(ctx) {
  const { services, load, sim, mode, log, version } = ctx;
  const proxy = await services.proxy(sim.info.url, {}, { name: 'proxy-memory' });
  // Two table items the sim holds (asked of the sim itself), so the bursts carry real answers.
  const keys = [];
  for (let i = 0xbad000; keys.length < 2; i++) {
    if ((await call(sim.info.url, rawItem(itemKey(i), null))).status === 200) keys.push(itemKey(i));
  }
  const bursts = [
    { name: 'raw_item pinned miss', route: 'raw_item', req: rawItem(keys[0], version) },
    { name: 'raw_item latest', route: 'raw_item', req: rawItem(keys[1], null) },
    { name: 'view pinned miss', route: 'view', req: viewJson(address(0xc0ffee), version) },
    { name: 'view latest', route: 'view', req: viewJson(address(0xc0ffef), null) },
  ];
  const out = [];
  for (const b of bursts) {
    await sim.call('fault', { mode: 'slow', delayMs: SLOW_MS, routes: [b.route] });
    const before = (await sim.call('counters')).byRoute[b.route];
    const r = await load.call('burst', {
      url: proxy.info.url,
      path: b.req.path,
      headers: b.req.headers,
      body: b.req.body.toString('utf8'),
      n: mode.burst,
      warmPath: WARM_PATH,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const calls = (await sim.call('counters')).byRoute[b.route] - before;
    await sim.call('clearFaults');
    // All replies within one slow answer of each other: the requests overlapped at the node call.
    const overlapped = r.lastReplyMs - r.firstReplyMs < SLOW_MS;
    log(
      `  ${b.name}: ${mode.burst} requests -> ${calls} node call(s), X-Cache ${JSON.stringify(r.byCache)}, status ${JSON.stringify(r.byStatus)}, replies ${r.firstReplyMs.toFixed(0)}–${r.lastReplyMs.toFixed(0)} ms${overlapped ? '' : ' (NOT all overlapping: the burst spread over more than the slow answer)'}`,
    );
    out.push({
      burst: b.name,
      requests: mode.burst,
      nodeCalls: calls,
      xCache: r.byCache,
      status: r.byStatus,
      firstReplyMs: Math.round(r.firstReplyMs),
      lastReplyMs: Math.round(r.lastReplyMs),
      overlapped,
    });
  }
  await services.stop(proxy);

  const pinned = out.filter((b) => b.burst.includes('pinned'));
  const latest = out.filter((b) => b.burst.includes('latest'));
  const row = (id, title, list) => {
    const worst = Math.max(...list.map((b) => b.nodeCalls));
    return {
      id,
      title,
      measured: worst,
      unit: 'node calls/burst',
      target: { op: '<=', value: 1 },
      pass: list.every((b) => b.nodeCalls === 1 && (b.status['200'] ?? 0) === b.requests),
      // every reply a 200: one answer shared, nobody shed or failed
      display:
        list.map((b) => `${b.burst.split(' ')[0]}: ${b.nodeCalls}`).join(', ') +
        ` (per ${mode.burst} requests${list.every((b) => b.overlapped) ? '' : '; a burst did not overlap within the slow answer, so a second call is expected'})`,
      raw: { slowMs: SLOW_MS, connectionsOpenedFirst: true, bursts: list },
    };
  };
  return [
    row('burst-pinned', '5a. Coalescing: 100 identical pinned misses', pinned),
    row('burst-latest', '5b. Coalescing: 100 identical latest reads', latest),
  ];
}
