// The Prometheus metrics the proxy exports, on a registry of its own per app (so
// several apps in one process, as in tests, do not share counters): the counters
// and histograms of what happened here; the gauges of state read at scrape time
// are in metrics-state.ts.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ENTRY_FAULTS, type EntryFault } from './cache/codec.js';
import type { ErrorReason } from './errors.js';
import { registerStateGauges, type MetricsSources } from './metrics-state.js';

export type { MetricsSources } from './metrics-state.js';

/** How a tenant's request ended (SPEC-edge §4). */
export type TenantOutcome = 'served' | 'unauthorized' | 'forbidden' | 'rate_limited' | 'shed';

const TENANT_OUTCOMES: readonly TenantOutcome[] = ['served', 'unauthorized', 'forbidden', 'rate_limited', 'shed'];

type TenantCounts = Record<TenantOutcome, number> & { hits: number; nodeUnits: number };

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
  private readonly redisErrors: Counter<'client' | 'op'>;
  private readonly redisCorrupt: Counter<'fault'>;
  private readonly staleAnswers: Counter<'reason'>;
  private readonly shedReads: Counter<'reason'>;
  private readonly latestStepBacks: Counter;
  private readonly proxyErrors: Counter<'reason'>;
  private readonly upstreamMisbehaviours: Counter<'upstream' | 'reason'>;
  private readonly upstreamTransitions: Counter<'upstream' | 'state'>;
  /**
   * Requests by endpoint, cache result and status: a plain count per request,
   * labels at scrape time. Nested by label, so counting a request builds no key
   * string (the label strings are constants, their hashes kept by V8).
   */
  private readonly requestCounts = new Map<string, Map<string, Map<number, RequestCount>>>();
  private readonly durationChildren = new Map<string, { observe(value: number): void }>();
  /** per tenant: requests by outcome, hits and node units, plain numbers turned into counters at scrape time */
  private readonly tenants = new Map<string, TenantCounts>();

  constructor(sources: MetricsSources, options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'ledger_proxy_' });
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
    for (const fault of ENTRY_FAULTS) this.redisCorrupt.labels(fault).inc(0);
    this.staleAnswers = new Counter({
      name: 'ledger_proxy_stale_total',
      help: 'Latest reads answered stale, by reason (bound: within latest.maxStaleness*, error: nodes failed, latest.staleIfErrorMs)',
      labelNames: ['reason'],
      registers,
    });
    this.shedReads = new Counter({
      name: 'ledger_proxy_shed_total',
      help: 'Reads refused rather than queued, by reason (overload: shedding.maxInFlight, budget: a node budget, answer_bytes: routing.maxAnswerBytesInFlight)',
      labelNames: ['reason'],
      registers,
    });
    this.latestStepBacks = new Counter({
      name: 'ledger_proxy_latest_step_backs_total',
      help: 'Latest reads answered below a ledger version already reported (no node at or above it answered: a failover)',
      registers,
    });
    const tenants = this.tenants;
    new Counter({
      name: 'ledger_proxy_tenant_requests_total',
      help: 'Requests by tenant (the name in tenants.list, or anonymous) and outcome: served, unauthorized, forbidden, rate_limited, shed',
      labelNames: ['tenant', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const [tenant, counts] of tenants) for (const outcome of TENANT_OUTCOMES) this.inc({ tenant, outcome }, counts[outcome]);
      },
    });
    new Counter({
      name: 'ledger_proxy_tenant_hits_total',
      help: 'Requests by tenant answered from the cache (memory or Redis), at no node cost',
      labelNames: ['tenant'],
      registers,
      collect() {
        this.reset();
        for (const [tenant, counts] of tenants) this.inc({ tenant }, counts.hits);
      },
    });
    new Counter({
      name: 'ledger_proxy_tenant_node_units_total',
      help: 'Node units charged by tenant: the cost of each request a node answered (tenants.costs)',
      labelNames: ['tenant'],
      registers,
      collect() {
        this.reset();
        for (const [tenant, counts] of tenants) this.inc({ tenant }, counts.nodeUnits);
      },
    });
    this.proxyErrors = new Counter({
      name: 'ledger_proxy_errors_total',
      help: 'Error replies the proxy made itself (not a node error relayed), by reason: bad_input, not_ready, pruned, rate_limited, no_node, …',
      labelNames: ['reason'],
      registers,
    });
    this.upstreamMisbehaviours = new Counter({
      name: 'ledger_proxy_upstream_misbehaving_total',
      help: 'Node answers whose ledger snapshot the node could not have sent, by node and reason (ahead: beyond its own probe and rate; behind: a latest answer below a version it already reported); the answer is not used',
      labelNames: ['upstream', 'reason'],
      registers,
    });
    this.upstreamTransitions = new Counter({
      name: 'ledger_proxy_upstream_transitions_total',
      help: 'Node state changes, by node and new state (down, up, breaker_open, breaker_closed, quarantined, released, lagging, caught_up; chain_adopted with no node)',
      labelNames: ['upstream', 'state'],
      registers,
    });
    registerStateGauges(registers, sources);
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

  upstreamCall(upstream: string, outcome: 'ok' | 'node_error' | 'failed', seconds: number): void {
    this.upstreamRequests.labels(upstream, outcome).inc();
    this.upstreamSeconds.labels(upstream).observe(seconds);
  }

  stale(reason: 'bound' | 'error'): void {
    this.staleAnswers.labels(reason).inc();
  }

  latestStepBack(): void {
    this.latestStepBacks.inc();
  }

  upstreamMisbehaving(upstream: string, reason: 'ahead' | 'behind'): void {
    this.upstreamMisbehaviours.labels(upstream, reason).inc();
  }

  upstreamTransition(upstream: string, state: string): void {
    this.upstreamTransitions.labels(upstream, state).inc();
  }

  shed(reason: 'overload' | 'budget' | 'answer_bytes'): void {
    this.shedReads.labels(reason).inc();
  }

  tenantRequest(tenant: string, outcome: TenantOutcome, hit: boolean, nodeUnits: number): void {
    const counts = this.tenantCounts(tenant);
    counts[outcome]++;
    if (hit) counts.hits++;
    counts.nodeUnits += nodeUnits;
  }

  /** Known tenants are exported from the start, at zero. */
  knownTenants(names: readonly string[]): void {
    for (const name of names) this.tenantCounts(name);
  }

  private tenantCounts(tenant: string): TenantCounts {
    let counts = this.tenants.get(tenant);
    if (counts === undefined) this.tenants.set(tenant, (counts = { served: 0, unauthorized: 0, forbidden: 0, rate_limited: 0, shed: 0, hits: 0, nodeUnits: 0 }));
    return counts;
  }

  proxyError(reason: ErrorReason): void {
    this.proxyErrors.labels(reason).inc();
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
