// A bounded soak of unique keys (the memory-bound test and bench/memory-bound.mjs),
// and a sampler of a process's resident set. Closed loop over a few keep-alive
// connections to 127.0.0.1 only; it stops by itself at its key count or deadline.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

/** The oldest version the soak's keys read: the sim must keep it (and reach SOAK_FIRST_VERSION + keys). */
export const SOAK_FIRST_VERSION = 1_000_000;

const HANDLE = '0x' + 'ab'.repeat(32);
const address = (i) => '0x' + (i + 1).toString(16).padStart(64, '0');

/**
 * The i-th key: a pinned transaction (about 1.1 KiB: a gzip copy is kept), a block
 * with its transactions (about 4.6 KiB), a raw table item (a few dozen bytes), an
 * account's resources (about 0.5 KiB, or a 404); one in eight is a latest read of
 * resources instead (kept among the latest answers). Every key is new.
 */
function soakRead(i) {
  const headers = { 'accept-encoding': 'gzip' };
  const version = SOAK_FIRST_VERSION + i;
  if (i % 8 === 7) return { kind: 'latest', method: 'GET', path: `/v1/accounts/${address(i)}/resources`, headers };
  switch (i % 4) {
    case 0:
      return { kind: 'transaction', method: 'GET', path: `/v1/transactions/by_version/${version}`, headers };
    case 1:
      return {
        kind: 'block',
        method: 'GET',
        path: `/v1/blocks/by_height/${Math.floor(version / 4)}?with_transactions=true`,
        headers,
      };
    case 2:
      return {
        kind: 'raw_item',
        method: 'POST',
        path: `/v1/tables/${HANDLE}/raw_item?ledger_version=${version}`,
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: JSON.stringify({ key: '0x' + i.toString(16).padStart(8, '0') }),
      };
    default:
      return {
        kind: 'resources',
        method: 'GET',
        path: `/v1/accounts/${address(i)}/resources?ledger_version=${version}`,
        headers,
      };
  }
}

/** How many of keys [0, n) are latest reads (each reaches the node twice; pinned ones once). */
export function latestKeysBelow(n) {
  return Math.floor(n / 8);
}

/**
 * Reads keys from, from + 1, … twice each (the second read is a hit, so its
 * spelling is kept) over `connections` connections, until `maxKeys` keys or
 * `durationMs`. Resolves with what was read and how it was answered.
 */
export async function soak(url, { connections, maxKeys, durationMs, from = 0 }) {
  if (!url.startsWith('http://127.0.0.1:')) throw new Error('the soak only targets 127.0.0.1');
  const pool = new Pool(url, { connections, pipelining: 1 });
  const report = { keys: 0, byStatus: {}, second: {}, elapsedMs: 0 };
  const started = performance.now();
  const deadline = started + durationMs;
  let next = from;
  const send = async (read) => {
    const res = await pool.request({ method: read.method, path: read.path, headers: read.headers, body: read.body });
    await res.body.dump({ limit: Number.POSITIVE_INFINITY });
    report.byStatus[res.statusCode] = (report.byStatus[res.statusCode] ?? 0) + 1;
    return String(res.headers['x-cache']);
  };
  const worker = async () => {
    while (next < from + maxKeys && performance.now() < deadline) {
      const read = soakRead(next++);
      await send(read);
      const cache = await send(read);
      report.second[cache] = (report.second[cache] ?? 0) + 1;
      report.keys++;
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    report.elapsedMs = performance.now() - started;
    await pool.close();
  }
  return report;
}

/** A process's resident set in bytes (/proc/<pid>/status VmRSS). */
export function residentBytes(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** Samples `pid`'s resident set every `everyMs` until stopped. */
export function sampleRss(pid, everyMs) {
  const samples = [];
  const started = performance.now();
  const take = () => samples.push({ at: performance.now() - started, bytes: residentBytes(pid) });
  take();
  const timer = setInterval(take, everyMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** The largest sample of those taken in [from, to) of the run's span (fractions of it). */
export function peakBetween(samples, from, to) {
  const span = samples[samples.length - 1].at;
  const within = samples.filter((s) => s.at >= from * span && (to >= 1 || s.at < to * span));
  return Math.max(...within.map((s) => s.bytes));
}

/** The sizing rule docs/operations/deploy.md states, "RSS ≤ 1.3 × cache.memory.maxBytes + N MiB": N, in bytes. */
export function statedOverheadBytes(pageText) {
  const rule = /RSS ≤ 1\.3 × `cache\.memory\.maxBytes` \+ (\d+) MiB/.exec(pageText);
  if (rule === null)
    throw new Error('docs/operations/deploy.md states no sizing rule "RSS ≤ 1.3 × `cache.memory.maxBytes` + N MiB"');
  return Number(rule[1]) * 1024 * 1024;
}
