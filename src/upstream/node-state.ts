// What the proxy knows of one node: its last ledger snapshot, its circuit, its load.
import type { LedgerInfo } from '../ledger/info.js';
import type { NodeClient } from './node-client.js';

export type NodeRole = 'normal' | 'archive';
export type NodeHealth = 'healthy' | 'lagging' | 'down' | 'quarantined';

export interface BreakerSettings {
  failureThreshold: number;
  openMs: number;
}

/** A node's request budget (upstreams[].maxInFlight, maxRps); absent = unlimited. */
export interface NodeBudget {
  maxInFlight?: number;
  maxRps?: number;
}

export class NodeState {
  ledger: LedgerInfo | null = null;
  inFlight = 0;
  /** set when the node reports a chain id other than the expected one */
  quarantined = false;
  private failures = 0;
  private openUntil = 0;
  /** half-open admits one trial call; others wait for its outcome */
  private trialInFlight = false;
  /** token bucket for maxRps: refilled at maxRps per second, at most maxRps */
  private tokens: number;
  private refilledAt: number;

  constructor(
    readonly client: NodeClient,
    readonly role: NodeRole,
    readonly weight: number,
    private readonly breaker: BreakerSettings,
    private readonly now: () => number = Date.now,
    private currentBudget: NodeBudget = {},
  ) {
    this.tokens = currentBudget.maxRps ?? 0;
    this.refilledAt = now();
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
      const now = this.now();
      this.tokens = Math.min(maxRps, this.tokens + ((now - this.refilledAt) / 1000) * maxRps);
      this.refilledAt = now;
      if (this.tokens < 1) return false;
    }
    return true;
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

  get name(): string {
    return this.client.name;
  }

  /**
   * Closed: traffic flows. Open: consecutive failures reached the threshold, no
   * traffic until openMs has passed. Then half-open: one call (or probe) may try,
   * and its success closes the circuit, its failure opens it again.
   */
  circuit(): 'closed' | 'open' | 'half-open' {
    if (this.failures < this.breaker.failureThreshold) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  /** A call is on its way to the node: in half-open, it is the one trial. */
  dispatched(): void {
    if (this.circuit() === 'half-open') this.trialInFlight = true;
  }

  recordSuccess(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.trialInFlight = false;
  }

  recordFailure(): void {
    this.trialInFlight = false;
    this.failures++;
    if (this.failures >= this.breaker.failureThreshold) this.openUntil = this.now() + this.breaker.openMs;
  }

  /** Can this node take a call now? */
  available(): boolean {
    if (this.quarantined) return false;
    const circuit = this.circuit();
    return circuit === 'closed' || (circuit === 'half-open' && !this.trialInFlight);
  }

  /** Does the node's last snapshot cover version n? */
  covers(n: bigint): boolean {
    return this.ledger !== null && this.ledger.oldestLedgerVersion <= n && n <= this.ledger.ledgerVersion;
  }
}
