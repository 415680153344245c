// The failover loop: one call tried on node after node (each attempt through a
// lease on its budget, lease.ts, and judged as attempt.ts says) until one answers
// usefully, the attempts run out or the deadline passes; a latest read may be
// hedged on a second node. A node's own error answer that another node may do
// better (outcomes.ts) is kept as the fallback while the others are asked.
import { NodeError } from '../errors.js';
import { settlesWithin } from '../timing/settles-within.js';
import type { NodeAnswer } from '../model/node-answer.js';
import type { NodeAttempts } from './attempt.js';
import { AttemptLog, attemptOf, type Call, type CallPlan, RETRY_SOON, type ShedReason } from './call.js';
import type { Lease, NodeLeases } from './lease.js';
import type { NodeSet } from './nodes/node-set.js';
import type { NodeState } from './nodes/node-state.js';
import { sheddingError } from './nodes/shedding.js';
import { betterFallback, firstUseful, isNodeSpecific } from './outcomes.js';
import type { NodeCall } from './transport/node-client.js';

export interface FailoverSettings {
  attemptTimeoutMs: number;
  deadlineMs: number;
  maxAttempts: number;
  hedgeAfterMs: number;
  /** routing.probeIntervalMs: how long a node that sheds load without a Retry-After is left alone (at most a second) */
  probeIntervalMs: number;
  /** how long a call waits for a node's budget (shedding.budgetWaitMs) */
  budgetWaitMs: number;
}

export interface FailoverDeps {
  settings: FailoverSettings;
  nodes: NodeSet;
  leases: NodeLeases;
  /** one attempt on one node: its call, judged */
  attempts: NodeAttempts;
  /** told of every call shed for a node's budget, for metrics */
  onShed?: (reason: ShedReason) => void;
}

export class Failover {
  private readonly settings: FailoverSettings;
  private readonly nodeAttempts: NodeAttempts;

  constructor(private readonly deps: FailoverDeps) {
    this.settings = deps.settings;
    this.nodeAttempts = deps.attempts;
  }

  async run(call: Call, plan: CallPlan): Promise<NodeAnswer> {
    const maxAttempts = plan.idempotent ? this.settings.maxAttempts : 1;
    const tried = new Set<NodeState>(plan.exclude);
    const attempts = new AttemptLog();
    const startedAt = Date.now();
    let fallback: NodeAnswer | null = null;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const remaining = plan.deadline - Date.now();
      if (remaining <= 0) {
        attempts.add(`deadline of ${this.settings.deadlineMs} ms reached`, 'node_timeout');
        break;
      }
      const taking = this.deps.leases.take(
        plan.version,
        tried,
        Math.min(remaining, this.settings.budgetWaitMs),
        plan.priority,
      );
      const choice = taking instanceof Promise ? await taking : taking;
      if (choice.kind === 'pruned') throw NodeError.pruned(plan.version!);
      if (choice.kind === 'none') break;
      if (choice.kind === 'exhausted') throw this.exhausted(choice.node);
      const { lease } = choice;
      tried.add(lease.node);
      const timed = attemptOf(call, Math.min(this.settings.attemptTimeoutMs, remaining));
      // Only a latest read is hedged: a passthrough answer is streamed on, and a second one could not be taken back.
      const hedge = plan.latest && this.settings.hedgeAfterMs > 0 && this.settings.hedgeAfterMs < timed.timeoutMs;
      const answer = hedge
        ? await this.hedged(lease, timed, tried, attempts, plan)
        : await this.nodeAttempts.run(lease, timed, attempts, plan);
      if (answer === null) continue;
      if (!isNodeSpecific(answer) && !this.aheadOf(answer, tried)) return answer;
      const answered = this.deps.nodes.nodes.find((n) => n.name === answer.upstream) ?? lease.node;
      attempts.add(`${answered.name}: HTTP ${answer.status} ${answer.errorCode ?? ''}`.trim());
      fallback = betterFallback(fallback, answer);
    }
    // A node's own JSON error (500, version_not_found, version_pruned) is passed
    // through when no other node did better.
    if (fallback !== null) return fallback;
    const shedding = sheddingError(this.deps.nodes.nodes, startedAt, attempts.texts);
    if (shedding !== null) throw shedding;
    if (attempts.texts.length === 0) attempts.add('no upstream is available');
    // Why, for the metrics and the log: how the last node that failed failed; no_node when none was asked or none failed itself.
    const { texts, failure } = attempts;
    throw NodeError.unavailable(`no upstream could answer: ${texts.join('; ')}`, failure ?? 'no_node', {}, texts);
  }

  private exhausted(node: NodeState): NodeError {
    this.deps.onShed?.('budget');
    const { maxInFlight, maxRps } = node.budget;
    const limits = `maxInFlight ${maxInFlight ?? 'unlimited'}, maxRps ${maxRps ?? 'unlimited'}`;
    return NodeError.unavailable(
      `node budget exhausted: ${node.name} (${limits}) after waiting ${this.settings.budgetWaitMs} ms`,
      'node_budget',
      RETRY_SOON,
    );
  }

  /**
   * A transaction or block "not found" from a node that another node not yet
   * tried is ahead of: the node may simply not have it yet (a block it has not
   * completed), so the one ahead is asked. From the most advanced node it is the
   * answer, so a hash nobody knows costs one call.
   */
  private aheadOf(answer: NodeAnswer, tried: ReadonlySet<NodeState>): boolean {
    if (
      answer.status !== 404 ||
      (answer.errorCode !== 'block_not_found' && answer.errorCode !== 'transaction_not_found') ||
      answer.ledger === null
    )
      return false;
    const at = answer.ledger.ledgerVersion;
    return this.deps.nodes.nodes.some(
      (n) => !tried.has(n) && n.available() && !n.quarantined && n.ledger !== null && n.ledger.ledgerVersion > at,
    );
  }

  /**
   * A latest read with hedging: when the first node has not answered after
   * hedgeAfterMs, a second node is asked too, and the first useful answer wins
   * (the other call is cancelled).
   */
  private async hedged(
    lease: Lease,
    call: NodeCall,
    tried: Set<NodeState>,
    attempts: AttemptLog,
    plan: CallPlan,
  ): Promise<NodeAnswer | null> {
    let shed: unknown;
    const kept = (answer: Promise<NodeAnswer | null>): Promise<NodeAnswer | null> =>
      answer.catch((err: unknown) => {
        shed = err;
        return null;
      });
    // A shed call ends the read, as it does unhedged.
    const outcome = (answer: NodeAnswer | null): NodeAnswer | null => {
      if (answer === null && shed !== undefined) throw shed;
      return answer;
    };
    const firstAbort = new AbortController();
    const first = kept(
      this.nodeAttempts.run(lease, attemptOf(call, call.timeoutMs, firstAbort.signal), attempts, plan),
    );
    const early = await settlesWithin(first, this.settings.hedgeAfterMs, 'hedge' as const);
    if (early !== 'hedge') return outcome(early);
    const second = this.deps.leases.takeHedge(tried, plan.priority);
    if (second === null) return outcome(await first);
    tried.add(second.node);
    const secondAbort = new AbortController();
    const secondAnswer = kept(
      this.nodeAttempts.run(
        second,
        attemptOf(call, call.timeoutMs - this.settings.hedgeAfterMs, secondAbort.signal),
        attempts,
        plan,
      ),
    );
    return outcome(
      await firstUseful([
        { answer: first, abort: firstAbort },
        { answer: secondAnswer, abort: secondAbort },
      ]),
    );
  }
}
