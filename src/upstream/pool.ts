// The configured nodes, as one: every read and passthrough call goes to the node
// the selection picks (select.ts), within the nodes' budgets (budgets.ts), with
// failover and hedging inside the deadline. Probes (health.ts) and answers update
// each node's snapshot; the chain identity (chain.ts) decides which nodes count;
// healthy nodes of the chain feed the watermark. Latest reads never step back
// below the highest version already reported (read-your-latest, SPEC §8), but
// when no node at or above it answers, and such a step back is counted.
import type { Logger } from 'pino';
import { NodeError } from '../errors.js';
import type { LedgerInfo } from '../ledger/info.js';
import type { Watermark } from '../ledger/watermark.js';
import type { ReadRequest } from '../wire/read-request.js';
import type { NodeAnswer } from './answer.js';
import { BudgetWaits, budgetShare, type ShedFirst } from './budgets.js';
import { ChainIdentity } from './chain.js';
import { nodeHealth, Prober } from './health.js';
import type { NodeCall } from './node-client.js';
import { BrokenCircuitError, CountedFailure, type NodeHealth, type NodeState } from './node-state.js';
import { betterFallback, firstUseful, isNodeSpecific } from './outcomes.js';
import { chooseNode, type Choice } from './select.js';

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
  /** told of every latest reply below a version already reported (a failover) */
  onStepBack?: () => void;
  /** told when an established chain is replaced (a devnet reset) */
  onChainChange?: (from: number, to: number) => void;
}

/** How a passthrough call is routed. */
export interface ForwardRoute {
  /** GET, HEAD, OPTIONS: may be retried on another node and hedged; a write is sent once */
  idempotent: boolean;
  /** ?ledger_version=N: a node that covers N */
  minVersion?: bigint;
}

export class UpstreamPool {
  /** replaced whole by replaceNodes (SIGHUP reload); never mutated in place */
  nodes: readonly NodeState[];
  private readonly routing: RoutingSettings;
  private readonly watermark: Watermark;
  private readonly logger: Logger;
  private readonly onCall: PoolOptions['onCall'];
  private readonly onStepBack: PoolOptions['onStepBack'];
  private readonly maxInFlight: number;
  private readonly budget: { waitMs: number; shedFirst: ShedFirst };
  private readonly onShed: PoolOptions['onShed'];
  private readonly chain: ChainIdentity;
  private readonly prober: Prober;
  private readonly budgetWaits = new BudgetWaits();
  private inFlight = 0;
  /** read-your-latest: the highest ledger version a latest reply has carried */
  private latestFloor: bigint | null = null;
  /** serialises replaceNodes: two reloads close together never interleave */
  private replacing: Promise<unknown> = Promise.resolve();

  constructor(options: PoolOptions) {
    this.nodes = options.nodes;
    this.routing = options.routing;
    this.watermark = options.watermark;
    this.logger = options.logger;
    this.onCall = options.onCall;
    this.onStepBack = options.onStepBack;
    this.maxInFlight = options.maxInFlight ?? Infinity;
    this.budget = options.budget ?? { waitMs: 0, shedFirst: 'none' };
    this.onShed = options.onShed;
    this.chain = new ChainIdentity(options.chainId, options.logger, (from, to) => {
      // Everything learned of the old chain goes: its snapshots, and the latest floor.
      this.watermark.reset();
      this.latestFloor = null;
      options.onChainChange?.(from, to);
    });
    this.prober = new Prober({
      intervalMs: options.routing.probeIntervalMs,
      timeoutMs: options.routing.attemptTimeoutMs,
      logger: options.logger,
      nodes: () => this.nodes,
      onSnapshot: (node, info) => this.observe(node, info),
      onRound: (answered) => this.chainUpdate(answered),
    });
  }

  /** Reads from the best node for the request, failing over until the deadline. */
  async read(req: ReadRequest, deadlineAt?: number): Promise<NodeAnswer> {
    const headers: Record<string, string> = { accept: req.accept };
    if (req.contentType !== undefined) headers['content-type'] = req.contentType;
    const deadline = deadlineAt ?? Date.now() + this.routing.deadlineMs;
    // A path that names a version (a transaction, a block) goes to a node that has it.
    const version = req.route.routingVersion(req);
    const call = { method: req.method, path: req.path, headers, body: req.method === 'POST' ? req.body : undefined };
    const answer = await this.admitted(() => this.withFailover(version, call, deadline));
    if (version === null && req.route.pin === 'version') this.reportedLatest(answer);
    return answer;
  }

  /**
   * A passthrough call, routed like a read (SPEC §8): healthy nodes of the chain
   * only, a node covering ?ledger_version=N, within the budgets and counted in
   * the metrics; only an idempotent call is retried on another node or hedged.
   */
  async forward(call: Omit<NodeCall, 'timeoutMs'>, route: ForwardRoute): Promise<NodeAnswer> {
    // Nothing is served before the chain is known (SPEC §8), passthrough included.
    if (this.chain.current() === undefined) throw NodeError.notReady(this.notReadyReason());
    // A version every node has pruned is the node's to judge (it may not even be a read route).
    const version = route.minVersion !== undefined && !this.isPruned(route.minVersion) ? route.minVersion : null;
    return this.admitted(() => this.withFailover(version, call, Date.now() + this.routing.deadlineMs, route.idempotent));
  }

  /**
   * Overload (shedding.maxInFlight): answer at once rather than queue without
   * bound. Coalesced requests share one read, so they count once.
   */
  private async admitted<T>(run: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.maxInFlight) {
      this.onShed?.('overload');
      throw NodeError.unavailable(`overloaded: ${this.inFlight} reads are in flight to the nodes (shedding.maxInFlight ${this.maxInFlight})`);
    }
    this.inFlight++;
    try {
      return await run();
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
        throw NodeError.unavailable(`node budget exhausted: ${choice.node.label} (maxInFlight ${maxInFlight ?? 'unlimited'}, maxRps ${maxRps ?? 'unlimited'}) after waiting ${this.budget.waitMs} ms`);
      }
      // pickWithinBudget reserved the slot (inFlight, a rate token); attempt() gives it back.
      const node = choice.node;
      tried.add(node);
      const timeoutMs = Math.min(this.routing.attemptTimeoutMs, remaining);
      const answer =
        idempotent && version === null && this.routing.hedgeAfterMs > 0 && this.routing.hedgeAfterMs < timeoutMs
          ? await this.hedged(node, { ...call, timeoutMs }, tried, attempts)
          : await this.attempt(node, { ...call, timeoutMs }, attempts);
      if (answer === null) continue;
      if (!isNodeSpecific(answer) && !this.aheadOf(answer, tried)) return answer;
      const answered = this.nodes.find((n) => n.name === answer.upstream) ?? node;
      attempts.push(`${answered.label}: HTTP ${answer.status} ${answer.errorCode ?? ''}`.trim());
      fallback = betterFallback(fallback, answer);
    }
    // A node's own JSON error (500, version_not_found, version_pruned) is passed
    // through when no other node did better.
    if (fallback !== null) return fallback;
    if (attempts.length === 0) attempts.push('no upstream is available');
    throw NodeError.unavailable(`no upstream could answer: ${attempts.join('; ')}`);
  }

  /**
   * A transaction or block "not found" from a node that another node not yet
   * tried is ahead of: the node may simply not have it yet (a block it has not
   * completed), so the one ahead is asked. From the most advanced node it is the
   * answer, so a hash nobody knows costs one call.
   */
  private aheadOf(answer: NodeAnswer, tried: ReadonlySet<NodeState>): boolean {
    if (answer.status !== 404 || (answer.errorCode !== 'block_not_found' && answer.errorCode !== 'transaction_not_found') || answer.ledger === null) return false;
    const at = answer.ledger.ledgerVersion;
    return this.nodes.some((n) => !tried.has(n) && n.available() && !n.quarantined && n.ledger !== null && n.ledger.ledgerVersion > at);
  }

  /** A latest reply is about to be sent: it raises the floor, or is counted as a step back below it. */
  private reportedLatest(answer: NodeAnswer): void {
    const version = answer.ledger?.ledgerVersion;
    if (version === undefined || answer.ledger!.chainId !== this.chain.current()) return;
    if (this.latestFloor !== null && version < this.latestFloor) {
      this.onStepBack?.();
      this.logger.warn({ upstream: answer.upstream, version: String(version), floor: String(this.latestFloor) }, 'latest read stepped back: no node at or above the version already reported answered');
      return;
    }
    this.latestFloor = version;
  }

  /** The highest ledger version a latest reply has carried (read-your-latest). */
  latestVersion(): bigint | null {
    return this.latestFloor;
  }

  /**
   * The routing choice, within the nodes' budgets. A node out of budget may be
   * replaced by an equivalent one (one that covers N alike); otherwise the read
   * waits up to waitMs for a slot (woken when a call ends or a token is due),
   * then reports the budget exhausted.
   */
  private async pickWithinBudget(version: bigint | null, tried: Set<NodeState>, waitMs: number): Promise<Choice | { kind: 'exhausted'; node: NodeState }> {
    const share = budgetShare(this.budget.shedFirst, version === null);
    const until = Date.now() + waitMs;
    const base = { version, tried, maxLag: this.routing.maxLagVersions, floor: this.latestFloor };
    for (;;) {
      const choice: Choice = chooseNode(this.nodes, base);
      if (choice.kind !== 'node') return choice;
      // The slot is taken at once, in the same tick as the check: readers woken
      // together cannot all pass the check before any of them holds a slot.
      if (choice.node.hasBudget(share)) return reserve(choice);
      const alt = chooseNode(this.nodes, { ...base, usable: (n) => n.hasBudget(share) });
      if (alt.kind === 'node' && (version === null || alt.node.covers(version) === choice.node.covers(version))) return reserve(alt);
      const left = until - Date.now();
      if (left <= 0) return { kind: 'exhausted', node: choice.node };
      await this.budgetWaits.next(choice.node, left);
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
    // A hedge never steps back: only a node at or above the latest floor.
    const share = budgetShare(this.budget.shedFirst, true);
    const choice = chooseNode(this.nodes, { version: null, tried, maxLag: this.routing.maxLagVersions, floor: this.latestFloor, atOrAboveFloor: true, usable: (n) => n.hasBudget(share) });
    if (choice.kind !== 'node') return first;
    reserve(choice);
    tried.add(choice.node);
    const secondAbort = new AbortController();
    const second = this.attempt(choice.node, { ...call, timeoutMs: call.timeoutMs - this.routing.hedgeAfterMs, signal: secondAbort.signal }, attempts);
    return firstUseful([
      { answer: first, abort: firstAbort },
      { answer: second, abort: secondAbort },
    ]);
  }

  /** One call to one node, whose slot the caller reserved; null (with the reason in `attempts`) when it failed. */
  private async attempt(node: NodeState, call: NodeCall, attempts: string[]): Promise<NodeAnswer | null> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    let answer: NodeAnswer;
    try {
      // Through the node's circuit: a transport failure or a 5xx counts against it,
      // a success closes a half-open one; a hedge we cancel counts as nothing.
      answer = await node.guard(async () => {
        let got: NodeAnswer;
        try {
          got = await node.client.call(call);
        } catch (err) {
          throw call.signal?.aborted ? err : new CountedFailure(err);
        }
        if (got.status >= 500) throw new CountedFailure(null, got);
        return got;
      });
    } catch (err) {
      if (err instanceof CountedFailure && err.answer !== undefined) {
        answer = err.answer as NodeAnswer;
      } else {
        if (call.signal?.aborted) return null;
        if (err instanceof BrokenCircuitError) {
          attempts.push(`${node.label}: circuit open`);
          return null;
        }
        this.onCall?.(node.name, 'failed', seconds());
        const cause = err instanceof CountedFailure ? err.cause : err;
        attempts.push(cause instanceof NodeError ? cause.message : `${node.label}: failed`);
        if (!(cause instanceof NodeError)) this.logger.warn({ upstream: node.name, err: String(cause) }, 'node call failed unexpectedly');
        return null;
      }
    } finally {
      node.inFlight--;
      this.budgetWaits.wake();
    }
    this.onCall?.(node.name, answer.status >= 500 ? 'node_error' : 'ok', seconds());
    if (answer.ledger !== null) this.observe(node, answer.ledger);
    if (node.quarantined) {
      attempts.push(`${node.label}: quarantined (chain id ${answer.ledger?.chainId ?? node.ledger?.chainId})`);
      return null;
    }
    // This snapshot may reach a client even if the node's circuit opened while the
    // call was out: later hits must not carry an older one.
    if (answer.ledger !== null && answer.ledger.chainId === this.chain.current()) this.watermark.observe(answer.ledger);
    return answer;
  }

  /** Takes a node's snapshot: updates it, checks its chain, and feeds the watermark. */
  observe(node: NodeState, info: LedgerInfo): void {
    if (node.ledger === null || info.ledgerVersion >= node.ledger.ledgerVersion || info.chainId !== node.ledger.chainId) {
      node.ledger = info;
    }
    this.chainUpdate();
  }

  /** Re-decides the chain and the quarantine, then feeds the watermark from the nodes that count. */
  private chainUpdate(answeredRound?: ReadonlySet<NodeState>): void {
    this.chain.update(this.nodes, answeredRound);
    const expected = this.chain.current();
    if (expected === undefined) return;
    // A snapshot of another chain (taken before the chain was known) is dropped.
    if (this.watermark.current() !== null && this.watermark.current()!.chainId !== expected) this.watermark.reset();
    // Every healthy node of the chain: snapshots seen before the chain was known count too.
    for (const n of this.nodes) {
      if (n.ledger !== null && !n.quarantined && this.health(n) === 'healthy') this.watermark.observe(n.ledger);
    }
  }

  health(node: NodeState): NodeHealth {
    return nodeHealth(node, this.nodes, this.routing.maxLagVersions);
  }

  /** SPEC §7: N is pruned when it is below the oldest version of every node that could serve it. */
  isPruned(n: bigint): boolean {
    return this.belowEveryHistory(n, (ledger) => ledger.oldestLedgerVersion);
  }

  /** As isPruned, for a block height (blocks/by_height answers 410 block_pruned below a node's oldest block). */
  isBlockPruned(height: bigint): boolean {
    return this.belowEveryHistory(height, (ledger) => ledger.oldestBlockHeight);
  }

  /** `n` is below where the history of every known node of the chain starts (`oldest` of its snapshot). */
  private belowEveryHistory(n: bigint, oldest: (ledger: LedgerInfo) => bigint): boolean {
    for (const node of this.nodes) {
      if (!node.quarantined && node.ledger !== null && oldest(node.ledger) <= n) return false;
    }
    return this.nodes.some((node) => !node.quarantined && node.ledger !== null);
  }

  /** Ready: the chain is known and some node of it is healthy. */
  ready(): boolean {
    return this.chain.current() !== undefined && this.nodes.some((n) => this.health(n) === 'healthy');
  }

  /** GET /v1 on every node: learns ledgers, and half-opens or closes circuits. */
  probeAll(): Promise<void> {
    return this.prober.probeAll();
  }

  /** Probes now, then every probeIntervalMs. */
  start(): Promise<void> {
    return this.prober.start();
  }

  /**
   * Swaps in a new node list without dropping requests: nodes kept (same name and
   * url) keep their state; removed nodes finish their calls in flight, then close.
   */
  replaceNodes(next: NodeState[]): Promise<{ added: string[]; removed: string[] }> {
    const done = this.replacing.then(() => this.swapNodes(next));
    this.replacing = done.catch(() => undefined);
    return done;
  }

  private async swapNodes(next: NodeState[]): Promise<{ added: string[]; removed: string[] }> {
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
    // are on is unknown. The established chain stays while they are.
    const answered = await Promise.all(added.map((n) => this.prober.probe(n)));
    this.nodes = merged;
    // Nodes kept count with their last snapshot; added ones if they answered.
    this.chainUpdate(new Set(merged.filter((n) => (!added.includes(n) ? n.ledger !== null : answered[added.indexOf(n)]))));
    // close() lets requests in flight finish before the connections go.
    await Promise.all(removed.map((n) => n.client.close()));
    return { added: added.map((n) => n.name), removed: removed.map((n) => n.name) };
  }

  async close(): Promise<void> {
    this.prober.stop();
    await Promise.all(this.nodes.map((n) => n.client.destroy()));
  }

  /** The chain this pool fronts, undefined while not known (then nothing is served or cached). */
  chainId(): number | undefined {
    return this.chain.current();
  }

  /** Why the chain is not known: each node's chain or last probe failure (names, never URLs). */
  notReadyReason(): string {
    return this.chain.describe(this.nodes, this.prober.failures);
  }
}

/** Takes a slot of the chosen node's budget: one call in flight, one rate token. */
function reserve(choice: { kind: 'node'; node: NodeState }): { kind: 'node'; node: NodeState } {
  choice.node.inFlight++;
  choice.node.spend();
  return choice;
}
