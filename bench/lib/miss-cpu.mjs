// CPU per miss: latest raw_item reads of a new key each (every one forwarded to the
// node, none coalesced), 8 connections at full speed, through several servers in
// rotating rounds, each server's CPU (all its threads) read from /proc. Steadier on
// a shared machine than a miss's latency, and what that latency follows when the
// sim shares the server's CPU. Used by bench/miss-ab.mjs and scenario 3d.
import { cpuMeter } from './procstat.mjs';
import { itemKey, rawItem } from './requests.mjs';

/** the connections each run uses */
export const MISS_CPU_CONNECTIONS = 8;
/** keys set aside for each run: more than any server here answers in a run */
export const KEYS_PER_RUN = 1_000_000;

/**
 * One run of `seconds` at full speed on `url`: latest raw_item reads of a new key
 * each, from `firstKey` on (KEYS_PER_RUN set aside), on MISS_CPU_CONNECTIONS.
 * Resolves with the load generator's result.
 */
export function fullSpeedMisses(load, url, seconds, firstKey) {
  const sample = rawItem(itemKey(0), null);
  return load.call('run', {
    url,
    path: sample.path,
    headers: sample.headers,
    body: sample.body.toString('utf8'),
    connections: MISS_CPU_CONNECTIONS,
    duration: seconds,
    workload: { kind: 'distinctLatest', start: firstKey },
  });
}

/**
 * `servers`: [{ name, url, pid }]. Keys from `firstKey` on must not have been asked
 * of them before. Each server first answers `warmS` seconds unmeasured (none at 0), then each
 * round runs each server for `seconds`, the order rotating. Returns, by name,
 * { misses, cpuMicrosPerMiss } (cpuMicrosPerMiss null where /proc is missing).
 */
export async function cpuPerMiss(load, servers, { rounds, seconds, firstKey, warmS = 2 }) {
  let nextKey = firstKey;
  const run = (url, duration) => {
    const start = nextKey;
    nextKey += KEYS_PER_RUN;
    return fullSpeedMisses(load, url, duration, start);
  };
  if (warmS > 0) for (const s of servers) await run(s.url, warmS);
  const totals = new Map(servers.map((s) => [s.name, { misses: 0, cpuS: 0, metered: true }]));
  for (let i = 0; i < rounds; i++) {
    const order = [...servers.slice(i % servers.length), ...servers.slice(0, i % servers.length)];
    for (const s of order) {
      const meter = cpuMeter({ server: s.pid });
      const started = performance.now();
      const r = await run(s.url, seconds);
      const wallS = (performance.now() - started) / 1000;
      if (r.errors + r.timeouts > 0) throw new Error(`${s.name}: ${r.errors} errors, ${r.timeouts} timeouts`);
      const t = totals.get(s.name);
      const used = meter().server;
      t.misses += r.completed;
      if (used === null) t.metered = false;
      else t.cpuS += used * wallS;
    }
  }
  return Object.fromEntries(
    [...totals].map(([name, t]) => [
      name,
      { misses: t.misses, cpuMicrosPerMiss: t.metered && t.misses > 0 ? (t.cpuS / t.misses) * 1e6 : null },
    ]),
  );
}
