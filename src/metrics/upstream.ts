// What happened between the proxy and its nodes: calls by outcome and latency,
// answers refused for an impossible ledger version, node state changes, latest
// reads that stepped back, and reads shed rather than queued.
import { Counter, Histogram, type Registry } from 'prom-client';

const UPSTREAM_OUTCOMES = ['ok', 'node_error', 'overloaded', 'failed'] as const;
export const SHED_REASONS = ['overload', 'budget', 'answer_bytes'] as const;
const MISBEHAVING_REASONS = ['ahead', 'behind', 'unfinished'] as const;
type UpstreamOutcome = (typeof UPSTREAM_OUTCOMES)[number];

/** One node's children of the call counter (by outcome) and of the latency histogram. */
interface CallChildren {
  outcomes: Map<UpstreamOutcome, { inc(): void }>;
  seconds: { observe(value: number): void };
}

export class UpstreamMetrics {
  private readonly calls: Counter<'upstream' | 'outcome'>;
  private readonly seconds: Histogram<'upstream'>;
  private readonly misbehaviours: Counter<'upstream' | 'reason'>;
  private readonly transitions: Counter<'upstream' | 'state'>;
  private readonly stepBacks: Counter;
  private readonly shedReads: Counter<'reason'>;
  /**
   * Each node's children of the call metrics, made at its first call: every node
   * call counts one, and prom-client's labels() validates and hashes its labels
   * anew each time it is asked.
   */
  private readonly callChildren = new Map<string, CallChildren>();

  /** `upstreams`: the nodes' names now (a reload may change them), so each starts at 0 when first scraped. */
  constructor(registers: Registry[], upstreams: () => ReadonlyArray<{ name: string }>) {
    this.calls = new Counter({
      name: 'ledger_proxy_upstream_requests_total',
      help: 'Calls to nodes, by node and outcome (ok, node_error, overloaded: the node shed load, failed)',
      labelNames: ['upstream', 'outcome'],
      registers,
      collect() {
        for (const { name } of upstreams())
          for (const outcome of UPSTREAM_OUTCOMES) this.inc({ upstream: name, outcome }, 0);
      },
    });
    this.seconds = new Histogram({
      name: 'ledger_proxy_upstream_duration_seconds',
      help: 'Latency of calls to nodes, by node',
      labelNames: ['upstream'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.misbehaviours = new Counter({
      name: 'ledger_proxy_upstream_misbehaving_total',
      help: 'Node answers not used as they came, by node and reason (ahead: a ledger snapshot beyond its own probe and rate; behind: a latest answer below a version it already reported; unfinished: a passthrough answer not delivered whole by routing.deadlineMs, cut off)',
      labelNames: ['upstream', 'reason'],
      registers,
      collect() {
        for (const { name } of upstreams())
          for (const reason of MISBEHAVING_REASONS) this.inc({ upstream: name, reason }, 0);
      },
    });
    this.transitions = new Counter({
      name: 'ledger_proxy_upstream_transitions_total',
      help: 'Node state changes, by node and new state (down, up, breaker_open, breaker_closed, quarantined, released, lagging, caught_up, shedding, admitting; chain_adopted with no node)',
      labelNames: ['upstream', 'state'],
      registers,
    });
    this.stepBacks = new Counter({
      name: 'ledger_proxy_latest_step_backs_total',
      help: 'Latest reads answered below a ledger version already reported (no node at or above it answered: a failover)',
      registers,
    });
    this.shedReads = new Counter({
      name: 'ledger_proxy_shed_total',
      help: 'Reads refused rather than queued, by reason (overload: shedding.maxInFlight, budget: a node budget, answer_bytes: routing.maxAnswerBytesInFlight)',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of SHED_REASONS) this.shedReads.inc({ reason }, 0);
  }

  call(upstream: string, outcome: UpstreamOutcome, seconds: number): void {
    let children = this.callChildren.get(upstream);
    if (children === undefined) {
      children = { outcomes: new Map(), seconds: this.seconds.labels(upstream) };
      this.callChildren.set(upstream, children);
    }
    let count = children.outcomes.get(outcome);
    if (count === undefined) {
      count = this.calls.labels(upstream, outcome);
      children.outcomes.set(outcome, count);
    }
    count.inc();
    children.seconds.observe(seconds);
  }

  misbehaving(upstream: string, reason: (typeof MISBEHAVING_REASONS)[number]): void {
    this.misbehaviours.labels(upstream, reason).inc();
  }

  transition(upstream: string, state: string): void {
    this.transitions.labels(upstream, state).inc();
  }

  stepBack(): void {
    this.stepBacks.inc();
  }

  shed(reason: (typeof SHED_REASONS)[number]): void {
    this.shedReads.labels(reason).inc();
  }
}
