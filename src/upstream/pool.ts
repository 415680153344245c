// The configured nodes: routing by version coverage, failover within a deadline,
// health probes and chain-id integrity. Every node answer updates that node's
// ledger snapshot, and healthy nodes of the right chain feed the watermark.
import type { Logger } from 'pino';
import { NodeError } from '../errors.js';
import type { LedgerInfo } from '../ledger/info.js';
import { parseLedgerInfoJson } from '../ledger/info.js';
import type { Watermark } from '../ledger/watermark.js';
import type { ReadRequest } from '../wire/read-request.js';
import type { NodeAnswer } from './answer.js';
import type { NodeCall } from './node-client.js';
import type { NodeHealth, NodeState } from './node-state.js';
import { expectedChain } from './chain.js';
import { betterFallback, firstUseful, isNodeSpecific } from './outcomes.js';
import { chooseNode, type Choice } from './router.js';

export interface RoutingSettings {
  attemptTimeoutMs: number;
  deadlineMs: number;
  maxAttempts: number;
  probeIntervalMs: number;
  maxLagVersions: number;
  hedgeAfterMs: number;
}

export interface PoolOptions {
  nodes: NodeState[];
  routing: RoutingSettings;
  /** the expected chain id; when unset, the majority of the nodes decides */
  chainId?: number;
  watermark: Watermark;
  logger: Logger;
  /** node calls in flight across all nodes beyond which reads are shed with 503 */
  maxInFlight?: number;
  /** how long a read waits for a node's budget, and which class loses first */
  budget?: { waitMs: number; shedFirst: 'none' | 'latest' | 'pinned' };
  /** told of every read shed, by reason, for metrics */
  onShed?: (reason: 'overload' | 'budget') => void;
  /** told of every call to a node, for metrics */
  onCall?: (upstream: string, outcome: 'ok' | 'node_error' | 'failed', seconds: number) => void;
}

/** A class of reads that is shed first may use this part of a node's maxInFlight. */
const SHED_FIRST_SHARE = 0.8;
/** How often a read waiting for a node's budget looks again. */
const BUDGET_POLL_MS = 5;


export class UpstreamPool {
  /** replaced whole by replaceNodes (SIGHUP reload); never mutated in place */
  nodes: readonly NodeState[];
  private readonly routing: RoutingSettings;
  private readonly expectedChainId?: number;
  private readonly watermark: Watermark;
  private readonly logger: Logger;
  private readonly onCall: PoolOptions['onCall'];
  private readonly maxInFlight: number;
  private readonly budget: NonNullable<PoolOptions['budget']>;
  private readonly onShed: PoolOptions['onShed'];
  private inFlight = 0;
  private probeTimer: NodeJS.Timeout | null = null;
  /** the last probe failure of each node whose last probe failed, for the not-ready message */
  private readonly probeFailures = new Map<NodeState, string>();

  constructor(options: PoolOptions) {
    this.nodes = options.nodes;
    this.routing = options.routing;
    this.expectedChainId = options.chainId;
    this.watermark = options.watermark;
    this.logger = options.logger;
    this.onCall = options.onCall;
    this.maxInFlight = options.maxInFlight ?? Infinity;
    this.budget = options.budget ?? { waitMs: 0, shedFirst: 'none' };
    this.onShed = options.onShed;
  }

  /** Reads from the best node for the request, failing over until the deadline. */
  async read(req: ReadRequest, deadlineAt?: number): Promise<NodeAnswer> {
    // Overload: answer at once rather than queue without bound. Coalesced
    // requests share one read, so they count once.
    if (this.inFlight >= this.maxInFlight) {
      this.onShed?.('overload');
      throw NodeError.unavailable(`overloaded: ${this.inFlight} reads are in flight to the nodes (shedding.maxInFlight ${this.maxInFlight})`);
    }
    this.inFlight++;
    try {
      const headers = { 'content-type': req.contentType, accept: req.accept };
      const deadline = deadlineAt ?? Date.now() + this.routing.deadlineMs;
      return await this.withFailover(req.version, { method: 'POST', path: req.path, headers, body: req.body }, deadline);
    } finally {
      this.inFlight--;
    }
  }

  /** A passthrough call: routed like a read; only an idempotent one is tried on a second node. */
  async forward(call: Omit<NodeCall, 'timeoutMs'>, route: { idempotent: boolean; minVersion?: bigint }): Promise<NodeAnswer> {
    if (this.inFlight >= this.maxInFlight) {
      this.onShed?.('overload');
      throw NodeError.unavailable(`overloaded: ${this.inFlight} reads are in flight to the nodes (shedding.maxInFlight ${this.maxInFlight})`);
    }
    this.inFlight++;
    try {
      // A version every node has pruned is the node's to judge (it may not even be a read route).
      const version = route.minVersion !== undefined && !this.isPruned(route.minVersion) ? route.minVersion : null;
      return await this.withFailover(version, call, Date.now() + this.routing.deadlineMs, route.idempotent);
    } finally {
      this.inFlight--;
    }
  }

  private async withFailover(version: bigint | null, call: Omit<NodeCall, 'timeoutMs'>, deadline: number, idempotent = true): Promise<NodeAnswer> {
    // A call that is not idempotent (a passthrough write) is sent once: no retry, no hedge.
    const maxAttempts = idempotent ? this.routing.maxAttempts : 1;
    const tried = new Set<NodeState>();
    const attempts: string[] = [];
    let fallback: NodeAnswer | null = null;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        attempts.push(`deadline of ${this.routing.deadlineMs} ms reached`);
        break;
      }
      const choice = await this.pickWithinBudget(version, tried, Math.min(remaining, this.budget.waitMs));
      if (choice.kind === 'pruned') throw NodeError.pruned(version!);
      if (choice.kind === 'none') break;
      if (choice.kind === 'exhausted') {
        this.onShed?.('budget');
        const { maxInFlight, maxRps } = choice.node.budget;
        throw NodeError.unavailable(
          `node budget exhausted: ${choice.node.name} (maxInFlight ${maxInFlight ?? 'unlimited'}, maxRps ${maxRps ?? 'unlimited'}) after waiting ${this.budget.waitMs} ms`,
        );
      }
      const node = choice.node;
      node.spend();
      tried.add(node);
      const timeoutMs = Math.min(this.routing.attemptTimeoutMs, remaining);
      const answer =
        idempotent && version === null && this.routing.hedgeAfterMs > 0 && this.routing.hedgeAfterMs < timeoutMs
          ? await this.hedged(node, { ...call, timeoutMs }, tried, attempts)
          : await this.attempt(node, { ...call, timeoutMs }, attempts);
      if (answer === null) continue;
      if (!isNodeSpecific(answer)) return answer;
      attempts.push(`${answer.upstream}: HTTP ${answer.status} ${answer.errorCode ?? ''}`.trim());
      fallback = betterFallback(fallback, answer);
    }
    // A node's own JSON error (500, version_not_found, version_pruned) is passed
    // through when no other node did better.
    if (fallback !== null) return fallback;
    if (attempts.length === 0) attempts.push('no upstream is available');
    throw NodeError.unavailable(`no upstream could answer: ${attempts.join('; ')}`);
  }

  /** The part of a node's maxInFlight a read of this class may use. */
  private share(version: bigint | null): number {
    const { shedFirst } = this.budget;
    const loses = (shedFirst === 'latest' && version === null) || (shedFirst === 'pinned' && version !== null);
    return loses ? SHED_FIRST_SHARE : 1;
  }

  /**
   * The routing choice, within the nodes' budgets. A node out of budget may be
   * replaced by an equivalent one (one that covers N alike); otherwise the read
   * waits up to waitMs for a slot, then reports the budget exhausted.
   */
  private async pickWithinBudget(
    version: bigint | null,
    tried: Set<NodeState>,
    waitMs: number,
  ): Promise<Choice | { kind: 'exhausted'; node: NodeState }> {
    const share = this.share(version);
    const until = Date.now() + waitMs;
    for (;;) {
      const choice: Choice = chooseNode(this.nodes, version, tried, this.routing.maxLagVersions);
      if (choice.kind !== 'node' || choice.node.hasBudget(share)) return choice;
      const alt = chooseNode(this.nodes, version, tried, this.routing.maxLagVersions, (n) => n.hasBudget(share));
      if (alt.kind === 'node' && (version === null || alt.node.covers(version) === choice.node.covers(version))) return alt;
      if (Date.now() >= until) return { kind: 'exhausted', node: choice.node };
      await new Promise((resolve) => setTimeout(resolve, BUDGET_POLL_MS));
    }
  }

  /**
   * A latest read with hedging: when the first node has not answered after
   * hedgeAfterMs, a second node is asked too, and the first useful answer wins
   * (the other call is cancelled).
   */
  private async hedged(node: NodeState, call: NodeCall, tried: Set<NodeState>, attempts: string[]): Promise<NodeAnswer | null> {
    const firstAbort = new AbortController();
    const first = this.attempt(node, { ...call, signal: firstAbort.signal }, attempts);
    let timer: NodeJS.Timeout | undefined;
    const due = new Promise<'hedge'>((resolve) => {
      timer = setTimeout(() => resolve('hedge'), this.routing.hedgeAfterMs);
    });
    const early = await Promise.race([first, due]);
    clearTimeout(timer);
    if (early !== 'hedge') return early;
    const choice = chooseNode(this.nodes, null, tried, this.routing.maxLagVersions, (n) => n.hasBudget(this.share(null)));
    if (choice.kind !== 'node') return first;
    choice.node.spend();
    tried.add(choice.node);
    const secondAbort = new AbortController();
    const second = this.attempt(choice.node, { ...call, timeoutMs: call.timeoutMs - this.routing.hedgeAfterMs, signal: secondAbort.signal }, attempts);
    return firstUseful([
      { answer: first, abort: firstAbort },
      { answer: second, abort: secondAbort },
    ]);
  }

  /** One call to one node; null (with the reason in `attempts`) when it failed. */
  private async attempt(node: NodeState, call: NodeCall, attempts: string[]): Promise<NodeAnswer | null> {
    node.inFlight++;
    node.dispatched();
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      const answer = await node.client.call(call);
      this.onCall?.(node.name, answer.status >= 500 ? 'node_error' : 'ok', seconds());
      // The outcome first: a success closes the circuit, so its snapshot counts.
      if (answer.status >= 500) node.recordFailure();
      else node.recordSuccess();
      if (answer.ledger !== null) this.observe(node, answer.ledger);
      if (node.quarantined) {
        attempts.push(`${node.name}: quarantined (chain id ${answer.ledger?.chainId ?? node.ledger?.chainId})`);
        return null;
      }
      return answer;
    } catch (err) {
      // A hedge we cancelled ourselves says nothing about the node.
      if (call.signal?.aborted) return null;
      this.onCall?.(node.name, 'failed', seconds());
      node.recordFailure();
      attempts.push(err instanceof NodeError ? err.message : `${node.name}: ${String(err)}`);
      return null;
    } finally {
      node.inFlight--;
    }
  }

  /** Takes a node's snapshot: updates it, checks its chain, and feeds the watermark. */
  observe(node: NodeState, info: LedgerInfo): void {
    if (node.ledger === null || info.ledgerVersion >= node.ledger.ledgerVersion || info.chainId !== node.ledger.chainId) {
      node.ledger = info;
    }
    const expected = expectedChain(this.nodes, this.expectedChainId);
    for (const n of this.nodes) this.checkChain(n, expected);
    if (expected === undefined) return;
    // A snapshot of another chain (taken before the majority was known) is dropped.
    if (this.watermark.current()?.chainId !== undefined && this.watermark.current()!.chainId !== expected) this.watermark.reset();
    // Every healthy node of the chain: snapshots seen before the chain was known count too.
    for (const n of this.nodes) {
      if (n.ledger !== null && !n.quarantined && this.health(n) === 'healthy') this.watermark.observe(n.ledger);
    }
  }

  private checkChain(node: NodeState, expected: number | undefined): void {
    const wrong = expected !== undefined && node.ledger !== null && node.ledger.chainId !== expected;
    if (wrong && !node.quarantined) {
      this.logger.error(
        { upstream: node.name, chainId: node.ledger!.chainId, expected },
        'UPSTREAM QUARANTINED: it reports another chain id; it gets no traffic and nothing it says is cached',
      );
    } else if (!wrong && node.quarantined) {
      this.logger.warn({ upstream: node.name }, 'upstream back on the expected chain; quarantine lifted');
    }
    node.quarantined = wrong;
  }

  health(node: NodeState): NodeHealth {
    if (node.quarantined) return 'quarantined';
    if (node.circuit() === 'open' || node.ledger === null) return 'down';
    const top = this.mostAdvanced();
    if (top !== null && node.ledger.ledgerVersion + BigInt(this.routing.maxLagVersions) < top) return 'lagging';
    return 'healthy';
  }

  private mostAdvanced(): bigint | null {
    let top: bigint | null = null;
    for (const n of this.nodes) {
      if (n.quarantined || n.ledger === null) continue;
      if (top === null || n.ledger.ledgerVersion > top) top = n.ledger.ledgerVersion;
    }
    return top;
  }

  /** SPEC §7: N is pruned when it is below the oldest version of every node that could serve it. */
  isPruned(n: bigint): boolean {
    for (const node of this.nodes) {
      if (!node.quarantined && node.ledger !== null && node.ledger.oldestLedgerVersion <= n) return false;
    }
    return this.nodes.some((node) => !node.quarantined && node.ledger !== null);
  }

  ready(): boolean {
    return this.nodes.some((n) => this.health(n) === 'healthy');
  }

  /** GET /v1 on every node: learns ledgers, and half-opens or closes circuits. */
  async probeAll(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.probe(node)));
  }

  /**
   * While a circuit is open, a probe only learns the node's ledger: its outcome
   * neither closes the circuit (reads failed there; GET /v1 answering says little
   * about them) nor keeps it open longer. Closed or half-open, it counts like a call.
   */
  private async probe(node: NodeState): Promise<void> {
    const counts = node.circuit() !== 'open';
    try {
      const answer = await node.client.call({ method: 'GET', path: '/v1', timeoutMs: this.routing.attemptTimeoutMs, headers: { accept: 'application/json' } });
      const info = answer.status === 200 ? parseLedgerInfoJson(JSON.parse(answer.body.toString('utf8'))) : null;
      if (info === null) throw new Error(`GET /v1 answered HTTP ${answer.status}`);
      if (counts) node.recordSuccess();
      this.probeFailures.delete(node);
      this.observe(node, info);
    } catch (err) {
      this.probeFailures.set(node, (err as Error).message);
      if (counts) node.recordFailure();
      this.logger.debug({ upstream: node.name, err: (err as Error).message }, 'probe failed');
    }
  }

  /** Probes now, then every probeIntervalMs. */
  start(): Promise<void> {
    this.probeTimer = setInterval(() => void this.probeAll(), this.routing.probeIntervalMs);
    this.probeTimer.unref();
    return this.probeAll();
  }

  /**
   * Swaps in a new node list without dropping requests: nodes kept (same name and
   * url) keep their state; removed nodes finish their calls in flight, then close.
   */
  async replaceNodes(next: NodeState[]): Promise<{ added: string[]; removed: string[] }> {
    // New headers (a rotated API key) make a new node: its client must send them.
    const identity = (n: NodeState): string => JSON.stringify([n.name, n.client.url, n.role, n.weight, n.client.headers]);
    const byKey = new Map(this.nodes.map((n) => [identity(n), n]));
    const merged = next.map((n) => {
      const kept = byKey.get(identity(n));
      if (kept === undefined) return n;
      kept.budget = n.budget;
      return kept;
    });
    const kept = new Set(merged);
    const removed = this.nodes.filter((n) => !kept.has(n));
    const added = merged.filter((n) => !this.nodes.includes(n));
    for (const n of next) if (!merged.includes(n)) await n.client.destroy();
    // Added nodes are probed before they take reads: until then the chain they
    // are on is unknown, and a list of only new nodes would not be ready.
    await Promise.all(added.map((n) => this.probe(n)));
    this.nodes = merged;
    for (const n of added) if (n.ledger !== null) this.observe(n, n.ledger);
    // close() lets requests in flight finish before the connections go.
    await Promise.all(removed.map((n) => n.client.close()));
    return { added: added.map((n) => n.name), removed: removed.map((n) => n.name) };
  }

  async close(): Promise<void> {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
    await Promise.all(this.nodes.map((n) => n.client.destroy()));
  }

  /** The chain this pool fronts, undefined while not known (stand-in; the chain module replaces it). */
  chainId(): number | undefined {
    return expectedChain(this.nodes, this.expectedChainId);
  }

  /** Why the chain is not known: each node's chain or last probe failure (names, never URLs). */
  notReadyReason(): string {
    const parts = this.nodes.map((n) => `${n.name}: ${n.ledger !== null ? `chain ${n.ledger.chainId}` : (this.probeFailures.get(n) ?? 'no answer yet')}`);
    return `the chain the nodes are on is not known (${parts.join('; ')})`;
  }

}
