// The Prometheus metrics the proxy exports, on a registry of its own per app (so
// several apps in one process, as in tests, do not share counters): the counters
// and histograms of what happened here, by subject (requests and the proxy's own
// errors here; the cache tiers; the nodes in upstream.ts; tenants in tenants.ts);
// the gauges of state read at scrape time are in state.ts.
//
// The labels each counter is known to take start at 0, so a panel or an alert
// reads 0 before the first event instead of no data. Other values (a Redis
// operation not listed) appear at their first event.
import { Counter, Histogram, Registry } from 'prom-client';
import { ENTRY_FAULTS, type EntryFault } from '../cache/redis/codec.js';
import type { RedisClientName } from '../cache/redis/failures.js';
import type { ErrorReason } from '../errors.js';
import { registerProcessMetrics } from './process.js';
import { registerStateGauges, type MetricsSources } from './state.js';
import { FeedMetrics } from './feed.js';
import { TenantMetrics } from './tenants.js';
import { UpstreamMetrics } from './upstream.js';
import { VERIFY_OUTCOMES, type VerifyOutcome } from '../serve/verify.js';

export type { MetricsSources } from './state.js';

const STALE_REASONS = ['bound', 'error'] as const;
const FEED_OFF = { enabled: false, covered: null, latest: null, index: { watched: 0, window: 0 } };
const REDIS_CLIENTS: readonly RedisClientName[] = ['cache', 'fill-channel', 'limits'];
const REDIS_OPS = [
  'connection',
  'get',
  'set',
  'delete',
  'lock',
  'unlock',
  'publish',
  'subscribe',
  'encode',
  'index',
  'purge',
] as const;
const PURGE_SCOPES = ['all', 'family', 'request'] as const;

/**
 * ledger_proxy_purges_total, each scope at 0, on the app's registry, or with
 * server.workers > 1 on the primary's (it serves the admin listener; the workers'
 * stay at 0, so the sum counts each purge once).
 */
export function purgeCounter(registers: Registry[]): Counter<'scope'> {
  const counter = new Counter({
    name: 'ledger_proxy_purges_total',
    help: 'Cache purges (POST /cache/purge on the admin listener), by scope: all, family, request',
    labelNames: ['scope'],
    registers,
  });
  for (const scope of PURGE_SCOPES) counter.inc({ scope }, 0);
  return counter;
}
const PROXY_ERROR_REASONS: readonly ErrorReason[] = [
  'bad_input',
  'undecodable',
  'not_ready',
  'pruned',
  'no_node',
  'node_failed',
  'node_timeout',
  'node_broken',
  'overloaded',
  'node_shedding',
  'node_budget',
  'rate_limited',
  'unauthorized',
  'forbidden',
  'internal',
];

interface RequestCount {
  endpoint: string;
  cache: string;
  status: string;
  count: number;
}

export class Metrics {
  readonly registry = new Registry();
  readonly upstream: UpstreamMetrics;
  readonly feed: FeedMetrics;
  readonly tenants: TenantMetrics;
  private readonly requestSeconds: Histogram<'endpoint'>;
  private readonly coalesced: Counter<'endpoint'>;
  private readonly proxyErrors: Counter<'reason'>;
  private readonly redisErrors: Counter<'client' | 'op'>;
  private readonly redisCorrupt: Counter<'fault'>;
  private readonly staleAnswers: Counter<'reason'>;
  private readonly verifyChecks: Counter<'outcome'>;
  private readonly purges: Counter<'scope'>;
  /**
   * Requests by endpoint, cache result and status: a plain count per request,
   * labels at scrape time. Nested by label, so counting a request builds no key
   * string (the label strings are constants, their hashes kept by V8).
   */
  private readonly requestCounts = new Map<string, Map<string, Map<number, RequestCount>>>();
  private readonly durationChildren = new Map<string, { observe(value: number): void }>();

  constructor(sources: MetricsSources, options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics !== false) registerProcessMetrics(this.registry, 'ledger_proxy_');
    this.registerRequestCounts(registers);
    this.requestSeconds = new Histogram({
      name: 'ledger_proxy_request_duration_seconds',
      help: 'Time to answer a client request, by endpoint (every reply but memory-tier hits, which are only counted)',
      labelNames: ['endpoint'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.coalesced = new Counter({
      name: 'ledger_proxy_coalesced_total',
      help: 'Requests that shared another identical request’s node call',
      labelNames: ['endpoint'],
      registers,
    });
    this.proxyErrors = new Counter({
      name: 'ledger_proxy_errors_total',
      help: 'Error replies the proxy made itself (not a node error relayed), by reason: bad_input, not_ready, pruned, rate_limited, no_node, node_shedding, …',
      labelNames: ['reason'],
      registers,
    });
    this.redisErrors = new Counter({
      name: 'ledger_proxy_redis_errors_total',
      help: 'Redis failures, by client (cache, fill-channel, limits) and op (a command, or connection); the proxy fails open: it answers from memory and nodes',
      labelNames: ['client', 'op'],
      registers,
    });
    this.redisCorrupt = new Counter({
      name: 'ledger_proxy_redis_corrupt_total',
      help: 'Redis entries that failed their check, read as a miss and rewritten from a node, by fault (format: empty or another format; length: cut short or extended; checksum: changed bytes)',
      labelNames: ['fault'],
      registers,
    });
    this.staleAnswers = new Counter({
      name: 'ledger_proxy_stale_total',
      help: 'Latest reads answered stale, by reason (bound: within latest.maxStaleness*, error: nodes failed, latest.staleIfErrorMs)',
      labelNames: ['reason'],
      registers,
    });
    this.verifyChecks = new Counter({
      name: 'ledger_proxy_verify_total',
      help: 'cache.verify checks of an answer against a second node before it is stored, by outcome (agreed: stored; disagreed: other bytes, not stored; unverified: no second node could answer, not stored)',
      labelNames: ['outcome'],
      registers,
    });
    this.purges = purgeCounter(registers);
    this.upstream = new UpstreamMetrics(registers, sources.upstreams);
    this.tenants = new TenantMetrics(registers);
    this.feed = new FeedMetrics(registers, () => sources.feed?.() ?? FEED_OFF);
    registerStateGauges(registers, sources);
    for (const reason of PROXY_ERROR_REASONS) this.proxyErrors.inc({ reason }, 0);
    for (const client of REDIS_CLIENTS) for (const op of REDIS_OPS) this.redisErrors.inc({ client, op }, 0);
    for (const fault of ENTRY_FAULTS) this.redisCorrupt.inc({ fault }, 0);
    for (const reason of STALE_REASONS) this.staleAnswers.inc({ reason }, 0);
    for (const outcome of VERIFY_OUTCOMES) this.verifyChecks.inc({ outcome }, 0);
  }

  private registerRequestCounts(registers: Registry[]): void {
    const requestCounts = this.requestCounts;
    new Counter({
      name: 'ledger_proxy_requests_total',
      help: 'Client requests by endpoint, cache result (HIT, MISS, COALESCED, BYPASS, STALE) and status',
      labelNames: ['endpoint', 'cache', 'status'],
      registers,
      // Counted in plain integers per request; handed to prom-client at scrape time.
      collect() {
        this.reset();
        for (const byCache of requestCounts.values()) {
          for (const byStatus of byCache.values()) {
            for (const c of byStatus.values())
              this.inc({ endpoint: c.endpoint, cache: c.cache, status: c.status }, c.count);
          }
        }
      },
    });
  }

  /** `seconds` undefined: counted only, not observed in the duration histogram (memory hits). */
  request(endpoint: string, cache: string, status: number, seconds: number | undefined): void {
    let byCache = this.requestCounts.get(endpoint);
    if (byCache === undefined) this.requestCounts.set(endpoint, (byCache = new Map()));
    let byStatus = byCache.get(cache);
    if (byStatus === undefined) byCache.set(cache, (byStatus = new Map()));
    const counted = byStatus.get(status);
    if (counted === undefined) byStatus.set(status, { endpoint, cache, status: String(status), count: 1 });
    else counted.count++;
    if (cache === 'COALESCED') this.coalesced.labels(endpoint).inc();
    if (seconds === undefined) return;
    let timer = this.durationChildren.get(endpoint);
    if (timer === undefined) {
      timer = this.requestSeconds.labels(endpoint);
      this.durationChildren.set(endpoint, timer);
    }
    timer.observe(seconds);
  }

  proxyError(reason: ErrorReason): void {
    this.proxyErrors.labels(reason).inc();
  }

  stale(reason: (typeof STALE_REASONS)[number]): void {
    this.staleAnswers.labels(reason).inc();
  }

  verify(outcome: VerifyOutcome): void {
    this.verifyChecks.labels(outcome).inc();
  }

  purged(scope: (typeof PURGE_SCOPES)[number]): void {
    this.purges.labels(scope).inc();
  }

  redisError(client: string, op: string): void {
    this.redisErrors.labels(client, op).inc();
  }

  redisCorruptEntry(fault: EntryFault): void {
    this.redisCorrupt.labels(fault).inc();
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
