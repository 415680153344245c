// The whole process within the sizing rule of docs/operations/deploy.md: the real CLI, with a small
// cache.memory.maxBytes, in front of the sim, under a soak of unique keys of every
// answer size (gzip copies made, spellings kept on hits, latest answers kept for
// stale-if-error), its resident set sampled from /proc all along.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  latestKeysBelow,
  peakBetween,
  sampleRss,
  soak,
  SOAK_FIRST_VERSION,
  statedOverheadBytes,
} from '../../bench/lib/soak.mjs';
import { memoryShares } from '../../src/config/memory-shares.js';
import { configFile, startCli, useCliBuild } from '../helpers/cli.js';
import { freePort, sim } from '../helpers/proxy.js';

useCliBuild();

const MiB = 1024 * 1024;
const MAX_BYTES = 32 * MiB;
/** Sending stops by then, whatever the key count. */
const SOAK_MS = 30_000;
/** More keys than the soak sends in SOAK_MS even on a fast machine. */
const MAX_KEYS = 250_000;

function config(port: number, adminPort: number, nodeUrl: string): string {
  return [
    `server: { host: 127.0.0.1, port: ${port} }`,
    `admin: { host: 127.0.0.1, port: ${adminPort} }`,
    `upstreams: [ { url: "${nodeUrl}", name: sim } ]`,
    `cache: { memory: { maxBytes: ${MAX_BYTES} } }`,
    'latest: { staleIfErrorMs: 60000 }',
    'log: { level: warn }',
    '',
  ].join('\n');
}

async function tierBytes(adminPort: number): Promise<number> {
  const res = await request(`http://127.0.0.1:${adminPort}/metrics`);
  const line = /^ledger_proxy_cache_bytes\{tier="memory"\} (\d+)$/m.exec(await res.body.text());
  if (line === null) throw new Error('no ledger_proxy_cache_bytes{tier="memory"} in /metrics');
  return Number(line[1]);
}

const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;

describe('memory bound', () => {
  it('RSS stays within 1.3 × maxBytes + the stated overhead under a soak of unique keys, and stops growing', {
    timeout: 90_000,
  }, async () => {
    const node = await sim({ startVersion: BigInt(SOAK_FIRST_VERSION + MAX_KEYS), pruneWindow: BigInt(2 * MAX_KEYS) });
    const [port, adminPort] = [await freePort(), await freePort()];
    const cli = await startCli(configFile('memory-bound.yaml', config(port, adminPort, node.url)), port);
    const nodeCalls = (): number => node.counters.total - node.counters.byRoute.ledger_info;
    const before = nodeCalls();

    const rss = sampleRss(cli.child.pid!, 200);
    const report = await soak(cli.url, { connections: 16, maxKeys: MAX_KEYS, durationMs: SOAK_MS });
    const samples = rss.stop();

    // The soak did what it says: every key new, read once from the node and once
    // more from memory (latest reads reach the node both times)...
    const latestKeys = latestKeysBelow(report.keys);
    const pinnedKeys = report.keys - latestKeys;
    expect(report.second.HIT).toBe(pinnedKeys);
    expect(nodeCalls() - before).toBe(pinnedKeys + 2 * latestKeys);
    // ...and filled the tier's share, so it evicted all along.
    expect(await tierBytes(adminPort)).toBeGreaterThan(
      0.9 * memoryShares(MAX_BYTES, { keepsLatestAnswers: true }).tier,
    );

    const bound =
      1.3 * MAX_BYTES +
      statedOverheadBytes(readFileSync(resolve(import.meta.dirname, '../../docs/operations/deploy.md'), 'utf8'));
    const [all, middle, last] = [
      peakBetween(samples, 0, 1),
      peakBetween(samples, 1 / 3, 2 / 3),
      peakBetween(samples, 2 / 3, 1),
    ];
    const figures = `${report.keys} keys in ${(report.elapsedMs / 1000).toFixed(1)} s; RSS peak ${mib(all)}, middle third ${mib(middle)}, last third ${mib(last)}; bound ${mib(bound)}`;
    expect(all, figures).toBeLessThanOrEqual(bound);
    // Not growing: over its first minute RSS settles upwards by about 8 MiB (malloc
    // and compiled code), and each collection moves it by a few MiB, so the last
    // third's peak may pass the middle third's by a sixteenth of the bound (about
    // 12 MiB) and no more. A leak of what a key keeps (a spelling or an answer, 1 to
    // 7 KiB) passes that many times over in the 30,000 keys or more of a third.
    expect(last, figures).toBeLessThanOrEqual(middle + bound / 16);
  });
});
