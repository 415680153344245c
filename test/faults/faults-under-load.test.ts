// Faults under load. A proxy in front of TWO simulated nodes (and its
// own redis-server for the Redis faults) takes a steady mix of pinned and latest
// raw_item and view reads while one thing fails: a node is killed, hangs, answers
// HTML 502, resets connections or slows to seconds; Redis is killed or stalls.
// Every reply must be the model's answer or a 503 internal_error error body: never
// a socket error, a wrong body, another status, or a wait past deadlineMs. Service
// is back to normal within 2 s of the fault ending, no promise rejection goes
// unhandled, and nothing is left open.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { encodeJsonValues, simBalance, simTableItem, type SimNode } from '../../src/sim/index.js';
import { prng } from '../../bench/lib/prng.mjs';
import { PRESENT_KEYS, hex } from '../helpers/cache.js';
import { runLoad, type LoadReply, type LoadReport, type LoadRequest } from '../helpers/load.js';
import { call, capturedLog, HANDLE, proxy, sim, type Reply } from '../helpers/proxy.js';
import { flushAll, type RedisServerHandle, stallRedis, useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { metricValue } from '../helpers/metrics.js';

const ROUTING = {
  attemptTimeoutMs: 300,
  deadlineMs: 1500,
  probeIntervalMs: 100,
  breaker: { failureThreshold: 3, openMs: 500 },
};
/**
 * The routing of the Redis faults, where the nodes are healthy and not what is
 * measured. The sims run in this process: on a machine short of CPU their
 * answers come later than the 300 ms attempt timeout the node faults need, even
 * before any fault, and healthy nodes would be failed (their breakers opened)
 * for the test's own starvation, the 503s then blamed on Redis. Each node call
 * gets the whole deadline instead, which still bounds every reply.
 */
const REDIS_FAULT_ROUTING = { ...ROUTING, attemptTimeoutMs: ROUTING.deadlineMs };
/** Scheduling slack on a 2-core machine running load, proxy and both nodes in one process. */
const MARGIN_MS = 500;
const RPS = 300;
const LOAD_MS = 4500;
const FAULT_AT_MS = 500;
const FAULT_FOR_MS = 1500;
/** Service must be normal again this long after the fault ends. */
const RECOVERY_MS = 2000;

const KEYS = PRESENT_KEYS.slice(0, 4);
const OWNERS = ['0x' + 'cd'.repeat(32), '0x' + '7'.repeat(64)];

// ---------------------------------------------------------------------------
// The request mix and the model of every answer.

const RAW_HEADERS = { 'content-type': 'application/json', accept: 'application/x-bcs' };
const VIEW_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** The version a latest reply says it was read at. */
function readAt(reply: LoadReply): bigint | string {
  const v = reply.headers['x-node-ledger-version'];
  return v !== undefined && /^\d+$/.test(v) ? BigInt(v) : `no x-node-ledger-version header (${String(v)})`;
}

function expectBody(reply: LoadReply, contentType: string, expected: Buffer, what: string): string | null {
  if (!reply.headers['content-type']?.startsWith(contentType))
    return `${what}: content type ${reply.headers['content-type']}`;
  if (!reply.body.equals(expected))
    return `${what}: body ${reply.body.toString('hex')} != model ${expected.toString('hex')}`;
  return null;
}

function rawItemRequest(key: Buffer, version: bigint | null): LoadRequest {
  const q = version === null ? '' : `?ledger_version=${version}`;
  return {
    kind: version === null ? 'raw_item latest' : 'raw_item pinned',
    method: 'POST',
    path: `/v1/tables/${HANDLE}/raw_item${q}`,
    headers: RAW_HEADERS,
    body: JSON.stringify({ key: hex(key) }),
    check(reply) {
      const at = version ?? readAt(reply);
      if (typeof at === 'string') return at;
      const model = simTableItem(HANDLE, key, at);
      if (model === null) return `the model has no item for ${hex(key)} at ${at}`;
      return expectBody(reply, 'application/x-bcs', model, `raw_item ${hex(key)} at ${at}`);
    },
  };
}

function balanceRequest(owner: string, version: bigint | null): LoadRequest {
  const q = version === null ? '' : `?ledger_version=${version}`;
  return {
    kind: version === null ? 'view balance latest' : 'view balance pinned',
    method: 'POST',
    path: `/v1/view${q}`,
    headers: VIEW_HEADERS,
    body: JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [owner] }),
    check(reply) {
      const at = version ?? readAt(reply);
      if (typeof at === 'string') return at;
      return expectBody(
        reply,
        'application/json',
        encodeJsonValues([{ type: 'u64', value: simBalance(owner, at) }]),
        `balance(${owner}) at ${at}`,
      );
    },
  };
}

function addRequest(a: bigint, b: bigint, version: bigint | null): LoadRequest {
  const q = version === null ? '' : `?ledger_version=${version}`;
  return {
    kind: version === null ? 'view add latest' : 'view add pinned',
    method: 'POST',
    path: `/v1/view${q}`,
    headers: VIEW_HEADERS,
    body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: [String(a), String(b)] }),
    check: (reply) =>
      expectBody(reply, 'application/json', encodeJsonValues([{ type: 'u128', value: a + b }]), `add(${a}, ${b})`),
  };
}

/**
 * A third pinned, a third latest, over both endpoints. Pinned versions are drawn
 * from [lo, hi] (both nodes hold them): a wide range keeps misses reaching the
 * nodes, a narrow one keeps hits coming from the cache.
 */
function mix(seed: number, lo: number, hi: number): (i: number) => LoadRequest {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const version = (): bigint => BigInt(lo + Math.floor(rand() * (hi - lo + 1)));
  return () => {
    const r = rand();
    const pinned = rand() < 0.6 ? version() : null;
    if (r < 0.45) return rawItemRequest(pick(KEYS), pinned);
    if (r < 0.8) return balanceRequest(pick(OWNERS), pinned);
    return addRequest(BigInt(Math.floor(rand() * 1000)), BigInt(Math.floor(rand() * 1000)), pinned);
  };
}

/** One read of each kind, straight through `call`, for the recovery poll. */
const PROBE_READS: LoadRequest[] = [
  rawItemRequest(KEYS[0], 977n),
  rawItemRequest(KEYS[1], null),
  balanceRequest(OWNERS[0], 966n),
  balanceRequest(OWNERS[1], null),
  addRequest(40n, 2n, 955n),
  addRequest(2n, 40n, null),
];

async function send(url: string, req: LoadRequest): Promise<Reply> {
  return call(url, req.path, { method: req.method, headers: req.headers, body: req.body });
}

// ---------------------------------------------------------------------------
// The faults.

interface Ctx {
  a: SimNode;
  b: SimNode;
  app: App;
  url: string;
  redis: RedisServerHandle;
  /** the proxy's log lines, parsed: an access line (`request`) per reply, with the ms the proxy took */
  log: Array<Record<string, unknown>>;
}

interface Fault {
  name: string;
  /** the fault is in Redis (the proxy is built with it, and must not answer 503 at all) */
  redis: boolean;
  begin(ctx: Ctx): Promise<void>;
  /** ends the fault; resolves when it is over */
  end(ctx: Ctx): Promise<void>;
}

const nodeFault = (name: string, mode: 'hang' | 'html' | 'reset' | 'slow', delayMs?: number): Fault => ({
  name,
  redis: false,
  begin: async ({ a }) => a.faults.set({ mode, delayMs }),
  end: async ({ a }) => a.faults.clear(),
});

let stalled: Promise<void> | undefined;

const FAULTS: Fault[] = [
  { name: 'a node is killed and restarted', redis: false, begin: ({ a }) => a.stop(), end: ({ a }) => a.restart() },
  nodeFault('a node hangs', 'hang'),
  nodeFault('a node answers HTML 502', 'html'),
  nodeFault('a node resets connections', 'reset'),
  nodeFault('a node slows to 2 s', 'slow', 2000),
  {
    name: 'redis-server is killed and restarted',
    redis: true,
    begin: ({ redis }) => redis.kill(),
    end: ({ redis }) => redis.restart(),
  },
  {
    name: 'Redis stalls (DEBUG SLEEP 1)',
    redis: true,
    begin: async ({ redis }) => {
      stalled = (await stallRedis(redis.url, 1)).awake;
    },
    // The stall ends when DEBUG SLEEP returns (about 1 s after it began).
    end: async () => {
      await stalled;
      stalled = undefined;
    },
  },
];

// ---------------------------------------------------------------------------

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
let resourcesBefore = 0;
const figures: string[] = [];

// Registered before the server's hooks, so they run around them: the count is
// taken before the server starts and checked after it stopped.
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
  resourcesBefore = process.getActiveResourcesInfo().length;
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  // Sockets close asynchronously once their peers are gone; the assertion below names what stayed open.
  const limit = resourcesBefore + 2;
  await until(
    () => process.getActiveResourcesInfo().length <= limit,
    3000,
    'open resources back to their count before the suite',
  ).catch(() => undefined);
  const after = process.getActiveResourcesInfo();
  figures.push(
    `[faults] unhandled rejections: ${unhandled.length}; active resources: ${resourcesBefore} before, ${after.length} after`,
  );
  for (const line of figures) console.log(line);
  expect(unhandled.map(String), 'unhandled rejections').toEqual([]);
  expect(after.length, `open resources: ${resourcesBefore} before, now ${JSON.stringify(after)}`).toBeLessThanOrEqual(
    limit,
  );
});

const redis = useRedisServer();

async function setup(fault: Fault, seed: number): Promise<Ctx> {
  const a = await sim({ versionsPerSecond: 10 });
  const b = await sim({ versionsPerSecond: 10 });
  let overrides: Record<string, unknown> = { routing: ROUTING };
  if (fault.redis) {
    await flushAll(redis.url);
    // A memory tier that holds nothing: every pinned read asks Redis.
    overrides = {
      routing: REDIS_FAULT_ROUTING,
      cache: { memory: { maxBytes: 1 }, redis: { url: redis.url, keyPrefix: `faults${seed}:` } },
    };
  }
  // At debug, every reply has its access line (hits too).
  const { logger, lines } = capturedLog('debug');
  const { app, url } = await proxy([a, b], overrides, { logger });
  if (fault.redis) expect(app.redis!.isReady(), 'the proxy is connected to Redis before the load').toBe(true);
  return { a, b, app, url, redis, log: lines };
}

/** Node calls that served reads (not the health probes). */
const servedReads = (n: SimNode): number => n.counters.byRoute.raw_item + n.counters.byRoute.view;

/**
 * Polls every 50 ms until one round of PROBE_READS is all correct 200s and the
 * fault's component is healthy again (both nodes healthy in the pool; Redis
 * connected and taken into use). Returns the ms until that round was sent (its
 * replies show service normal from then on; how long they took to come back is
 * this process's own latency, which the deadline check bounds), or Infinity past
 * 2× the bound, and how many requests it sent.
 */
async function recovery(ctx: Ctx, fault: Fault): Promise<{ ms: number; sent: number }> {
  const started = performance.now();
  let sent = 0;
  for (;;) {
    const ms = performance.now() - started;
    const healthy = fault.redis
      ? ctx.app.redis!.isHealthy()
      : ctx.app.pool.nodes.every((n) => ctx.app.pool.health(n) === 'healthy');
    const replies = await Promise.all(PROBE_READS.map((r) => send(ctx.url, r)));
    sent += replies.length;
    const allOk = replies.every((reply, i) => reply.status === 200 && PROBE_READS[i].check(reply) === null);
    if (healthy && allOk) return { ms, sent };
    if (performance.now() - started > 2 * RECOVERY_MS) return { ms: Infinity, sent };
    // The poll's pace: it measures the recovery, so it must not flood what it measures.
    await sleep(50);
  }
}

function describeProblems(report: LoadReport): string {
  const bad = report.samples.filter((s) => s.outcome !== 'ok' && s.outcome !== 'unavailable');
  return bad
    .slice(0, 8)
    .map((s) => `${s.kind} @${Math.round(s.sentAt)}ms ${s.outcome} ${s.status ?? ''} ${s.detail ?? ''}`)
    .join('\n');
}

/**
 * The longest any reply took as the proxy timed it, from the request's arrival to
 * its reply: where routing.deadlineMs applies. The load's own timings start
 * before the request is written and end when this process gets round to reading
 * the reply, and on a machine short of CPU they add this process's own wait.
 */
const slowestAtProxy = (ctx: Ctx): number =>
  Math.max(0, ...ctx.log.filter((line) => line.msg === 'request').map((line) => Number(line.ms)));

/** Every reply the proxy counted (ledger_proxy_requests_total, all labels). */
const requestsAnswered = (app: App): Promise<number> => metricValue(app, 'ledger_proxy_requests_total');

describe('faults under load: two nodes (and Redis), a few hundred reads/s', () => {
  FAULTS.forEach((fault, index) => {
    it(fault.name, async () => {
      const ctx = await setup(fault, index + 1);
      // Both nodes take reads before the fault.
      for (const r of PROBE_READS) expect((await send(ctx.url, r)).status).toBe(200);

      const answeredBefore = await requestsAnswered(ctx.app);
      // Node faults: a wide version range, so pinned misses keep reaching the nodes.
      // Redis faults: a narrow one, so pinned reads are mostly Redis hits.
      const load = runLoad({
        url: ctx.url,
        rps: RPS,
        durationMs: LOAD_MS,
        connections: 20,
        next: fault.redis ? mix(index + 1, 950, 1000) : mix(index + 1, 1, 1000),
      });
      const loadStart = performance.now();
      // The fault begins FAULT_AT_MS into the load and is held FAULT_FOR_MS (a Redis stall: its own second).
      await sleep(FAULT_AT_MS);
      await fault.begin(ctx);
      const faultedReadsBefore = servedReads(ctx.a);
      await sleep(fault.name.startsWith('Redis stalls') ? 0 : FAULT_FOR_MS);
      await fault.end(ctx);
      const clearedAt = performance.now() - loadStart;
      const { ms: recoveredIn, sent: recoveryPolls } = await recovery(ctx, fault);
      const faultedReadsAfterRecovery = servedReads(ctx.a);
      const redisReady = fault.redis ? await ctx.app.redis!.whenReady(0) : false;
      const report = await load;

      const statuses = Object.keys(report.byStatus).sort().join(',');
      figures.push(
        `[faults] ${fault.name}: sent ${report.sent} (skipped ${report.skipped} ticks: all connections busy), ` +
          `ok ${report.byOutcome.ok}, 503 ${report.byOutcome.unavailable}, wrong ${report.byOutcome.wrong}, ` +
          `socket errors ${report.byOutcome.socket_error}, hangs ${report.byOutcome.hang}, p99 ${Math.round(report.p99Ms)} ms, ` +
          `max ${Math.round(report.maxMs)} ms (at the proxy ${Math.round(slowestAtProxy(ctx))} ms), fault cleared at ${Math.round(clearedAt)} ms, recovered in ${Math.round(recoveredIn)} ms`,
      );

      // The proxy answered and accounted for every request the load sent, and the recovery poll's.
      expect(report.sent, 'requests sent').toBeGreaterThan(0);
      expect((await requestsAnswered(ctx.app)) - answeredBefore, 'requests the proxy answered').toBe(
        report.sent + recoveryPolls,
      );
      // Every reply: the model's answer or a 503 internal_error error body.
      expect(describeProblems(report), 'wrong answers, socket errors or hangs').toBe('');
      expect(report.byOutcome.wrong + report.byOutcome.socket_error + report.byOutcome.hang).toBe(0);
      expect(['200', '200,503', '503']).toContain(statuses);
      // Never a wait past the deadline.
      expect(slowestAtProxy(ctx), 'slowest reply as the proxy timed it (ms)').toBeLessThanOrEqual(
        ROUTING.deadlineMs + MARGIN_MS,
      );
      // docs/operations/troubleshooting.md: Redis down, slow or restarting costs no 5xx at all.
      if (fault.redis) expect(report.byOutcome.unavailable, '503s while only Redis failed').toBe(0);
      // Back to normal within 2 s of the fault ending: the recovery poll, and every
      // load reply sent from then on.
      expect(recoveredIn, 'ms from the end of the fault to normal service').toBeLessThanOrEqual(RECOVERY_MS);
      const late = report.samples.filter((s) => s.sentAt >= clearedAt + RECOVERY_MS);
      expect(late.filter((s) => s.outcome !== 'ok').map((s) => `${s.kind} ${s.status} ${s.detail ?? ''}`)).toEqual([]);
      if (!fault.redis) {
        // The faulted node serves reads again (it is not just routed around).
        expect(servedReads(ctx.a), 'reads served by the recovered node').toBeGreaterThan(faultedReadsAfterRecovery);
        expect(faultedReadsAfterRecovery).toBeGreaterThanOrEqual(faultedReadsBefore);
      } else {
        expect(redisReady, 'Redis connected after the fault').toBe(true);
        // Redis is in use again: fresh pinned misses land there. A Redis command
        // that failed in the last second (on a machine short of CPU, Redis itself
        // can be late) leaves Redis alone for a second by design, and the miss
        // answered then is not stored: a new one is sent until one is.
        const admin = new Redis(redis.url, { maxRetriesPerRequest: 0, lazyConnect: true });
        try {
          await admin.connect();
          // Entries only: a fill's lock and outcome keys come and go within a second.
          const entries = async (): Promise<number> =>
            (await admin.keys('*')).filter((k) => /^faults\d+:[0-9a-f]{64}$/.test(k)).length;
          const before = await entries();
          let fresh = 123n;
          await until(
            async () => {
              const reply = await send(ctx.url, rawItemRequest(KEYS[2], fresh++));
              expect(reply.status, 'a fresh pinned miss').toBe(200);
              return (await entries()) > before;
            },
            RECOVERY_MS,
            () => `a fresh pinned miss stored in Redis (${fresh - 123n} sent)`,
          );
        } finally {
          admin.disconnect();
        }
      }
    });
  });
});
