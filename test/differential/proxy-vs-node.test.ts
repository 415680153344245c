// The proxy against the node it fronts, over a seeded random stream
// of reads while the node's ledger advances and prunes (see harness.ts for the
// stream, the comparison and the allowed differences). Sizes: CI a few thousand
// requests; LONG=1 (npm run test:long) 100,000. Replay with DIFF_SEED=<seed>.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimNode } from '../../src/sim/index.js';
import { LONG, seedFrom, startStack, type Stack } from '../helpers/fuzz-stack.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { formatReport, runDifferential, type Report } from './harness.js';

const SEED = seedFrom('DIFF_SEED');
const TOTAL = Number(process.env.DIFF_REQUESTS ?? (LONG ? 100_000 : 4_000));
const REDIS_TOTAL = Number(process.env.DIFF_REDIS_REQUESTS ?? (LONG ? 25_000 : 1_500));
const CONCURRENCY = 16;
/** Small, so that versions get pruned all through the run. */
const PRUNE_WINDOW = 200n;
const START = 1000n;
/** Probes often, so the proxy learns of prunes while versions near the line are still asked for. */
const ROUTING = { probeIntervalMs: 50 };

function expectClean(r: Report, total: number): void {
  expect(r.requests).toBe(total);
  expect(r.compared).toBe(total);
  expect(r.wrong, r.wrongExamples.join('\n')).toBe(0);
  expect(r.backwards, r.backwardsExamples.join('\n')).toBe(0);
  // The run went through the cases it is meant to: pruning happened, and so did cache hits.
  expect(r.versions.oldestLast).toBeGreaterThan(START);
  expect((r.byCache.get('HIT memory') ?? 0) + (r.byCache.get('HIT redis') ?? 0)).toBeGreaterThan(0);
  // Every route family was drawn and answered at least once.
  for (const family of ['raw_item', 'view', 'accounts', 'tables', 'transactions', 'blocks']) {
    expect(
      [...r.byStatus.keys()].some((k) => k.startsWith(`${family} 200`)),
      family,
    ).toBe(true);
  }
}

describe('the proxy answers as the node does (memory cache)', () => {
  let stack: Stack;
  let oracle: SimNode;

  beforeAll(async () => {
    stack = await startStack({
      sim: { startVersion: START, pruneWindow: PRUNE_WINDOW },
      overrides: { routing: ROUTING },
    });
    oracle = await startSim({ startVersion: START, pruneWindow: 10n ** 15n, gzip: false });
  });

  afterAll(async () => {
    await stack?.close();
    await oracle?.close();
  });

  it(
    `${TOTAL} requests, ${CONCURRENCY} in flight, while the ledger advances and prunes`,
    async () => {
      console.log(
        `[differential memory] DIFF_SEED=${SEED} requests=${TOTAL} (replay: DIFF_SEED=${SEED} npx vitest run test/differential)`,
      );
      const report = await runDifferential({
        seed: SEED,
        total: TOTAL,
        concurrency: CONCURRENCY,
        proxies: [stack.url],
        node: stack.node,
        oracle,
        advanceEvery: 8,
        maxAdvance: 2,
      });
      console.log(formatReport('memory', report));
      expectClean(report, TOTAL);
    },
    LONG ? 900_000 : 120_000,
  );
});

describe('the proxy answers as the node does (two proxies sharing Redis, a tiny memory tier)', () => {
  const redis = useRedisServer();
  let stack: Stack;
  let second: Stack;
  let oracle: SimNode;

  beforeAll(async () => {
    // 16 KiB of memory tier: most repeats are served from Redis, and what one proxy
    // fetched the other finds there.
    const cache = { memory: { maxBytes: 16_384 }, redis: { url: redis.url, keyPrefix: `diff-${SEED}:` } };
    stack = await startStack({
      sim: { startVersion: START, pruneWindow: PRUNE_WINDOW },
      overrides: { routing: ROUTING, cache },
    });
    second = await startStack({
      overrides: { routing: ROUTING, cache, upstreams: [{ url: stack.node.url, name: 'node0' }] },
    });
    oracle = await startSim({ startVersion: START, pruneWindow: 10n ** 15n, gzip: false });
  });

  afterAll(async () => {
    await second?.close();
    await stack?.close();
    await oracle?.close();
  });

  it(
    `${REDIS_TOTAL} requests over two proxies, ${CONCURRENCY} in flight`,
    async () => {
      const report = await runDifferential({
        seed: SEED ^ 0x5eed,
        total: REDIS_TOTAL,
        concurrency: CONCURRENCY,
        proxies: [stack.url, second.url],
        node: stack.node,
        oracle,
        advanceEvery: 8,
        maxAdvance: 2,
      });
      console.log(formatReport('redis', report));
      expectClean(report, REDIS_TOTAL);
      expect(report.byCache.get('HIT redis') ?? 0).toBeGreaterThan(0);
    },
    LONG ? 900_000 : 120_000,
  );
});

describe('the proxy answers as the nodes do (two nodes at different versions)', () => {
  const BEHIND = 5n;
  let lagging: SimNode;
  let stack: Stack;
  let oracle: SimNode;

  beforeAll(async () => {
    lagging = await startSim({ startVersion: START - BEHIND, pruneWindow: PRUNE_WINDOW, gzip: true });
    stack = await startStack({
      sim: { startVersion: START, pruneWindow: PRUNE_WINDOW },
      overrides: { routing: ROUTING },
      moreNodes: [lagging.url],
    });
    oracle = await startSim({ startVersion: START, pruneWindow: 10n ** 15n, gzip: false });
  });

  afterAll(async () => {
    await stack?.close();
    await lagging?.close();
    await oracle?.close();
  });

  it(
    `${REDIS_TOTAL} requests, ${CONCURRENCY} in flight: no client sees the latest version go back`,
    async () => {
      const report = await runDifferential({
        seed: SEED ^ 0x2a0de,
        total: REDIS_TOTAL,
        concurrency: CONCURRENCY,
        proxies: [stack.url],
        node: stack.node,
        oracle,
        advanceEvery: 8,
        maxAdvance: 2,
        lagging: { node: lagging, behind: BEHIND },
      });
      console.log(formatReport('two nodes', report));
      expectClean(report, REDIS_TOTAL);
      // Both nodes took reads: the run is about routing between them.
      expect(lagging.counters.byRoute.raw_item + lagging.counters.byRoute.view).toBeGreaterThan(0);
    },
    LONG ? 900_000 : 120_000,
  );
});
