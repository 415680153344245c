// The Prometheus metrics the proxy exports, on a registry of its own per app (so
// several apps in one process, as in tests, do not share counters): the counters
// and histograms of what happened here; the gauges of state read at scrape time
// are in metrics-state.ts.
import { Counter, Histogram, Registry } from 'prom-client';
import { registerProcessMetrics } from './metrics-process.js';
import { registerStateGauges, type MetricsSources } from './metrics-state.js';

export type { MetricsSources } from './metrics-state.js';

// The labels each counter is known to take start at 0, so a panel or an alert
// reads 0 before the first event instead of no data. Other values (a Redis
// operation not listed) appear at their first event.
const UPSTREAM_OUTCOMES = ['ok', 'node_error', 'failed'] as const;
const STALE_REASONS = ['bound', 'error'] as const;
const SHED_REASONS = ['overload', 'budget'] as const;
const REDIS_OPS = ['connection', 'get', 'set', 'delete', 'lock', 'unlock', 'publish', 'subscribe', 'decode', 'encode'] as const;

interface RequestCount {
  endpoint: string;
  cache: string;
  status: string;
  count: number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requestSeconds: Histogram<'endpoint'>;
  private readonly upstreamRequests: Counter<'upstream' | 'outcome'>;
  private readonly upstreamSeconds: Histogram<'upstream'>;
  private readonly coalesced: Counter<'endpoint'>;
  private readonly redisErrors: Counter<'op'>;
  private readonly staleAnswers: Counter<'reason'>;
  private readonly shedReads: Counter<'reason'>;
  private readonly latestStepBacks: Counter;
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
            for (const c of byStatus.values()) this.inc({ endpoint: c.endpoint, cache: c.cache, status: c.status }, c.count);
          }
        }
      },
    });
    this.requestSeconds = new Histogram({
      name: 'ledger_proxy_request_duration_seconds',
      help: 'Time to answer a client request, by endpoint (every reply but memory-tier hits, which are only counted)',
      labelNames: ['endpoint'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.upstreamRequests = new Counter({
      name: 'ledger_proxy_upstream_requests_total',
      help: 'Calls to nodes, by node and outcome (ok, node_error, failed)',
      labelNames: ['upstream', 'outcome'],
      registers,
      // The nodes can change on SIGHUP: each node's outcomes start at 0 when it is first scraped.
      collect() {
        for (const { name } of sources.upstreams()) for (const outcome of UPSTREAM_OUTCOMES) this.inc({ upstream: name, outcome }, 0);
      },
    });
    this.upstreamSeconds = new Histogram({
      name: 'ledger_proxy_upstream_duration_seconds',
      help: 'Latency of calls to nodes, by node',
      labelNames: ['upstream'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.coalesced = new Counter({
      name: 'ledger_proxy_coalesced_total',
      help: 'Requests that shared another identical request’s node call',
      labelNames: ['endpoint'],
      registers,
    });
    this.redisErrors = new Counter({
      name: 'ledger_proxy_redis_errors_total',
      help: 'Failed Redis commands (the proxy fails open: it answers from memory and nodes)',
      labelNames: ['op'],
      registers,
    });
    this.staleAnswers = new Counter({
      name: 'ledger_proxy_stale_total',
      help: 'Latest reads answered stale, by reason (bound: within latest.maxStaleness*, error: nodes failed, latest.staleIfErrorMs)',
      labelNames: ['reason'],
      registers,
    });
    this.shedReads = new Counter({
      name: 'ledger_proxy_shed_total',
      help: 'Reads refused rather than queued, by reason (overload: shedding.maxInFlight, budget: a node budget)',
      labelNames: ['reason'],
      registers,
    });
    this.latestStepBacks = new Counter({
      name: 'ledger_proxy_latest_step_backs_total',
      help: 'Latest reads answered below a ledger version already reported (no node at or above it answered: a failover)',
      registers,
    });
    registerStateGauges(registers, sources);
    for (const op of REDIS_OPS) this.redisErrors.inc({ op }, 0);
    for (const reason of STALE_REASONS) this.staleAnswers.inc({ reason }, 0);
    for (const reason of SHED_REASONS) this.shedReads.inc({ reason }, 0);
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

  upstreamCall(upstream: string, outcome: (typeof UPSTREAM_OUTCOMES)[number], seconds: number): void {
    this.upstreamRequests.labels(upstream, outcome).inc();
    this.upstreamSeconds.labels(upstream).observe(seconds);
  }

  stale(reason: (typeof STALE_REASONS)[number]): void {
    this.staleAnswers.labels(reason).inc();
  }

  latestStepBack(): void {
    this.latestStepBacks.inc();
  }

  shed(reason: (typeof SHED_REASONS)[number]): void {
    this.shedReads.labels(reason).inc();
  }

  redisError(op: string): void {
    this.redisErrors.labels(op).inc();
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
