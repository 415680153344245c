// What the proxy knows of one node: its last ledger snapshot, its circuit, its load.
// The circuit is cockatiel's breaker (consecutive failures open it for openMs,
// then one trial call decides); the router asks it synchronously whether the
// node can take a call now.
import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState,
  ConsecutiveBreaker,
  handleType,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import type { LedgerInfo } from '../../ledger/info.js';
import type { NodeClient } from '../transport/node-client.js';

/** A call that failed and counts against the node's circuit; `answer` is the node's own 5xx, when it sent one. */
export class CountedFailure<A = unknown> extends Error {
  constructor(
    override readonly cause: unknown,
    readonly answer?: A,
  ) {
    super('node call failed');
  }
}

export { BrokenCircuitError };

export type NodeRole = 'normal' | 'archive';
export type NodeHealth = 'healthy' | 'lagging' | 'down' | 'quarantined';

export interface BreakerSettings {
  failureThreshold: number;
  openMs: number;
}

/** A node's answer to GET /v1, and when the probe was sent and answered (ms, the node's clock source). */
export interface ProbeRecord {
  info: LedgerInfo;
  sentAt: number;
  answeredAt: number;
}

/** A node's request budget (upstreams[].maxInFlight, maxRps); absent = unlimited. */
export interface NodeBudget {
  maxInFlight?: number;
  maxRps?: number;
}

export class NodeState {
  /** the node's freshest snapshot: its last probe, or a later answer's headers */
  ledger: LedgerInfo | null = null;
  /** when `ledger` came from an answer: when that answer arrived (ms); null when it came from a probe */
  ledgerFromAnswerAt: number | null = null;
  /** the node's last answered probe: what its answers are judged against */
  probed: ProbeRecord | null = null;
  /** what its last probe got instead of a ledger info, in the proxy's words; null when it got one (or before its first) */
  probeMiss: string | null = null;
  /** the node's fastest recent advance, in versions per second, from its probes */
  versionsPerSecond = 0;
  /**
   * upstreams[].spreadVersions: how far apart the backends behind the node's url
   * may be (a load-balanced endpoint); 0 for one node
   */
  spreadVersions = 0;
  inFlight = 0;
  /** set when the node reports a chain id other than the expected one */
  otherChain = false;
  /** until when (ms) the node is quarantined for answering implausible ledger versions; 0: it is not */
  misbehavingUntil = 0;
  /** until when (ms) the node is left alone because it is shedding load (it answered `overloaded`); 0: it is not */
  sheddingUntil = 0;
  /** when the node last answered `overloaded` (ms) */
  shedAt = Number.NEGATIVE_INFINITY;
  private readonly policy: CircuitBreakerPolicy;
  /** when the circuit last opened (cockatiel keeps it to itself) */
  private openedAt = 0;
  /** token bucket for maxRps: refilled at maxRps per second, at most maxRps */
  private tokens: number;
  private refilledAt: number;
  private circuitListener: ((open: boolean) => void) | undefined;
  private sheddingListener: ((shedding: boolean, backOffMs: number) => void) | undefined;

  constructor(
    readonly client: NodeClient,
    readonly role: NodeRole,
    readonly weight: number,
    private readonly breaker: BreakerSettings,
    private readonly now: () => number = Date.now,
    private currentBudget: NodeBudget = {},
  ) {
    this.policy = circuitBreaker(handleType(CountedFailure), {
      halfOpenAfter: breaker.openMs,
      breaker: new ConsecutiveBreaker(breaker.failureThreshold),
    });
    this.policy.onBreak(() => {
      this.openedAt = this.now();
      this.circuitListener?.(true);
    });
    this.policy.onReset(() => this.circuitListener?.(false));
    this.tokens = currentBudget.maxRps ?? 0;
    this.refilledAt = now();
  }

  /** No traffic: on another chain, or quarantined for misbehaving. */
  get quarantined(): boolean {
    // Asks the clock only while a quarantine is set: every hit's prune check reads this.
    return this.otherChain || (this.misbehavingUntil !== 0 && this.misbehavingUntil > this.now());
  }

  /** Why the node is quarantined, or null. */
  quarantineReason(): 'chain' | 'misbehaving' | null {
    if (this.otherChain) return 'chain';
    return this.misbehavingUntil > this.now() ? 'misbehaving' : null;
  }

  /** Told when the circuit opens (true) and when it closes again (false). */
  onCircuitChange(listener: (open: boolean) => void): void {
    this.circuitListener = listener;
  }

  /** Told when the node starts shedding load (true, with its back-off) and when a probe passes its admission again (false). */
  onSheddingChange(listener: (shedding: boolean, backOffMs: number) => void): void {
    this.sheddingListener = listener;
  }

  /** The clock the node's times are on. */
  clock(): number {
    return this.now();
  }

  get budget(): NodeBudget {
    return this.currentBudget;
  }

  /** A reload may change a node's budget without losing what we know of it. */
  set budget(next: NodeBudget) {
    this.currentBudget = next;
    this.tokens = Math.min(this.tokens, next.maxRps ?? 0);
  }

  /**
   * Can the node take one more call within its budget? `share` (0..1] is the part
   * of maxInFlight the caller's class may use.
   */
  hasBudget(share = 1): boolean {
    const { maxInFlight, maxRps } = this.budget;
    if (maxInFlight !== undefined && this.inFlight >= Math.max(1, Math.floor(maxInFlight * share))) return false;
    if (maxRps !== undefined) {
      this.refill(maxRps);
      // A smaller share leaves the rest of the bucket to those with a larger one.
      if (this.tokens < 1 + (1 - share) * maxRps) return false;
    }
    return true;
  }

  /** The share of the node's budget left now (the smaller of its calls in flight and its rate): 1 with no budget. */
  headroom(): number {
    const { maxInFlight, maxRps } = this.budget;
    let left = 1;
    if (maxInFlight !== undefined) left = Math.min(left, Math.max(0, 1 - this.inFlight / maxInFlight));
    if (maxRps !== undefined) {
      this.refill(maxRps);
      left = Math.min(left, Math.max(0, this.tokens / maxRps));
    }
    return left;
  }

  private refill(maxRps: number): void {
    const now = this.now();
    this.tokens = Math.min(maxRps, this.tokens + ((now - this.refilledAt) / 1000) * maxRps);
    this.refilledAt = now;
  }

  /** How long until the rate budget has a token again (0: it has one, or there is no rate budget). */
  msUntilToken(): number {
    const { maxRps } = this.budget;
    if (maxRps === undefined) return 0;
    const now = this.now();
    const tokens = Math.min(maxRps, this.tokens + ((now - this.refilledAt) / 1000) * maxRps);
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) / maxRps) * 1000);
  }

  /** Spends one call of the rate budget (after hasBudget said yes). */
  spend(): void {
    if (this.budget.maxRps !== undefined) this.tokens -= 1;
  }

  /** The node's one name: in logs, /readyz, metrics labels and the messages clients see. */
  get name(): string {
    return this.client.name;
  }

  /**
   * Closed: traffic flows. Open: failureThreshold calls in a row failed; no
   * traffic until openMs has passed. Then half-open: one call (or probe) may try,
   * and its success closes the circuit, its failure opens it again.
   */
  circuit(): 'closed' | 'open' | 'half-open' {
    switch (this.policy.state) {
      case CircuitState.Closed:
        return 'closed';
      case CircuitState.HalfOpen:
        return 'half-open';
      default:
        return this.trialDue() ? 'half-open' : 'open';
    }
  }

  /** Open, and openMs has passed: the next call is the trial. */
  private trialDue(): boolean {
    return this.policy.state === CircuitState.Open && this.now() - this.openedAt >= this.breaker.openMs;
  }

  /**
   * Runs one call through the circuit. A CountedFailure thrown by `call` counts
   * against the node; anything else thrown (a call we cancelled) does not. An open
   * circuit throws BrokenCircuitError without calling.
   */
  guard<T>(call: () => Promise<T>): Promise<T> {
    return this.policy.execute(call);
  }

  /** A failure seen outside a call (a probe that got no ledger info): counts like a failed call. */
  async recordFailure(): Promise<void> {
    await this.guard(() => Promise.reject(new CountedFailure(null))).catch(() => undefined);
  }

  /** Is the node backing off because it shed load? */
  get shedding(): boolean {
    return this.sheddingUntil > this.now();
  }

  /**
   * The node answered `overloaded`: it takes no calls for `ms`. Not a failure: its
   * circuit, health and chain are left as they are.
   */
  shed(ms: number): void {
    const now = this.now();
    this.shedAt = now;
    this.sheddingUntil = Math.max(this.sheddingUntil, now + ms);
    this.sheddingListener?.(true, ms);
  }

  /**
   * A probe sent at `sentAt` got the node's ledger: a back-off that began before
   * the probe was sent is over (the probe passed the node's admission itself).
   */
  admitted(sentAt: number): void {
    if (this.sheddingUntil === 0 || sentAt < this.shedAt) return;
    this.sheddingUntil = 0;
    this.sheddingListener?.(false, 0);
  }

  /** Can this node take a call now? (Half-open while its trial is running, or shedding load: no.) */
  available(): boolean {
    if (this.quarantined || this.shedding) return false;
    return this.policy.state === CircuitState.Closed || this.trialDue();
  }

  /** Does the node's last snapshot cover version n? */
  covers(n: bigint): boolean {
    return this.ledger !== null && this.ledger.oldestLedgerVersion <= n && n <= this.ledger.ledgerVersion;
  }
}
