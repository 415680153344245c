// The failover loop: one call tried on node after node (each through a lease on
// its budget, lease.ts) until one answers usefully, the attempts run out or the
// deadline passes; a latest read may be hedged on a second node. An answer whose
// snapshot its node could not have sent (plausibility.ts) is not used: the call
// goes on to another node, as after a broken answer. A node shedding load
// (shedding.ts) is left alone for a moment, without blame, and the call goes on.
import type { Logger } from 'pino';
import { loggedError } from '../process/log-error.js';
import { NodeError } from '../errors.js';
import type { TraceScope } from '../tracing/scope.js';
import type { NodeAnswer } from '../model/node-answer.js';
import type { AnswerBytes } from './transport/answer-bytes.js';
import { tracedAttempt } from './attempt-span.js';
import type { Priority } from './budgets.js';
import type { Lease, NodeLeases } from './lease.js';
import type { NodeCall } from './transport/node-client.js';
import type { NodeSet, SnapshotVerdict } from './nodes/node-set.js';
import { BrokenCircuitError, CountedFailure, type NodeState, type ProbeRecord } from './nodes/node-state.js';
import { betterFallback, firstUseful, isNodeSpecific } from './outcomes.js';
import { isOverloaded, NodeShedding, shedBackOffMs, sheddingError } from './nodes/shedding.js';

export type ShedReason = 'overload' | 'budget' | 'answer_bytes';

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

export interface FailoverOptions {
  settings: FailoverSettings;
  nodes: NodeSet;
  leases: NodeLeases;
  /** the proxy-wide budget of answer bytes in flight */
  answerBytes: AnswerBytes;
  logger: Logger;
  /** told of every call shed, by reason, for metrics */
  onShed?: (reason: ShedReason) => void;
  /** told of every call to a node, for metrics */
  onCall?: (upstream: string, outcome: CallOutcome, seconds: number) => void;
  /** told of every streamed answer its node did not finish by the deadline, for metrics */
  onUnfinished?: (upstream: string) => void;
}

/** How a call to a node went: answered, answered its own 5xx, shed load (`overloaded`), or no answer. */
export type CallOutcome = 'ok' | 'node_error' | 'overloaded' | 'failed';

/** How one call is routed and retried. */
export interface CallPlan {
  /** a node that covers this version; null: the most advanced */
  version: bigint | null;
  /** may be retried on another node and hedged; a write is sent once */
  idempotent: boolean;
  /** a latest read: its answer's snapshot names the version its data was read at */
  latest: boolean;
  /** epoch ms */
  deadline: number;
  /** the tenant's priority: how much of a node's budget the call may use */
  priority?: Priority;
  /** nodes never asked (a cross-check's first node) */
  exclude?: ReadonlySet<NodeState>;
  /** the span the attempts go under, while tracing is on: each gets its own, and the node its traceparent */
  trace?: TraceScope;
}

export type Call = Omit<NodeCall, 'timeoutMs'>;

/** A shed call's client may come back in a second: budgets free up as calls end and tokens return. */
export const RETRY_SOON = { 'retry-after': '1' };

/** An answer whose snapshot its node could not have sent, or could not confirm. */
class ImplausibleAnswer extends Error {
  constructor(readonly verdict: NonNullable<SnapshotVerdict>) {
    super('implausible ledger snapshot');
  }
}

/** A call refused for the proxy's own load: not the node's failure, and not retried. */
function isShed(err: unknown): boolean {
  return err instanceof NodeError && err.reason === 'overloaded';
}

export class Failover {
  private readonly s: FailoverSettings;

  constructor(private readonly o: FailoverOptions) {
    this.s = o.settings;
  }

  async run(call: Call, plan: CallPlan): Promise<NodeAnswer> {
    const maxAttempts = plan.idempotent ? this.s.maxAttempts : 1;
    const tried = new Set<NodeState>(plan.exclude);
    const attempts: string[] = [];
    const startedAt = Date.now();
    let fallback: NodeAnswer | null = null;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const remaining = plan.deadline - Date.now();
      if (remaining <= 0) {
        attempts.push(`deadline of ${this.s.deadlineMs} ms reached`);
        break;
      }
      const choice = await this.o.leases.take(
        plan.version,
        tried,
        Math.min(remaining, this.s.budgetWaitMs),
        plan.priority,
      );
      if (choice.kind === 'pruned') throw NodeError.pruned(plan.version!);
      if (choice.kind === 'none') break;
      if (choice.kind === 'exhausted') throw this.exhausted(choice.node);
      const { lease } = choice;
      tried.add(lease.node);
      const timed = { ...call, timeoutMs: Math.min(this.s.attemptTimeoutMs, remaining) };
      // Only a latest read is hedged: a passthrough answer is streamed on, and a second one could not be taken back.
      const hedge = plan.latest && this.s.hedgeAfterMs > 0 && this.s.hedgeAfterMs < timed.timeoutMs;
      const answer = hedge
        ? await this.hedged(lease, timed, tried, attempts, plan)
        : await this.attempt(lease, timed, attempts, plan);
      if (answer === null) continue;
      if (!isNodeSpecific(answer) && !this.aheadOf(answer, tried)) return answer;
      const answered = this.o.nodes.nodes.find((n) => n.name === answer.upstream) ?? lease.node;
      attempts.push(`${answered.name}: HTTP ${answer.status} ${answer.errorCode ?? ''}`.trim());
      fallback = betterFallback(fallback, answer);
    }
    // A node's own JSON error (500, version_not_found, version_pruned) is passed
    // through when no other node did better.
    if (fallback !== null) return fallback;
    const shedding = sheddingError(this.o.nodes.nodes, startedAt, attempts);
    if (shedding !== null) throw shedding;
    if (attempts.length === 0) attempts.push('no upstream is available');
    throw NodeError.unavailable(`no upstream could answer: ${attempts.join('; ')}`);
  }

  private exhausted(node: NodeState): NodeError {
    this.o.onShed?.('budget');
    const { maxInFlight, maxRps } = node.budget;
    const limits = `maxInFlight ${maxInFlight ?? 'unlimited'}, maxRps ${maxRps ?? 'unlimited'}`;
    return NodeError.unavailable(
      `node budget exhausted: ${node.name} (${limits}) after waiting ${this.s.budgetWaitMs} ms`,
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
    return this.o.nodes.nodes.some(
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
    attempts: string[],
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
    const first = kept(this.attempt(lease, { ...call, signal: firstAbort.signal }, attempts, plan));
    let timer: NodeJS.Timeout | undefined;
    const due = new Promise<'hedge'>((resolve) => {
      timer = setTimeout(() => resolve('hedge'), this.s.hedgeAfterMs);
    });
    const early = await Promise.race([first, due]);
    clearTimeout(timer);
    if (early !== 'hedge') return outcome(early);
    const second = this.o.leases.takeHedge(tried, plan.priority);
    if (second === null) return outcome(await first);
    tried.add(second.node);
    const secondAbort = new AbortController();
    const secondAnswer = kept(
      this.attempt(
        second,
        { ...call, timeoutMs: call.timeoutMs - this.s.hedgeAfterMs, signal: secondAbort.signal },
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

  /** One call to one node, on a lease it releases; null (with the reason in `attempts`) when it failed. */
  private attempt(lease: Lease, call: NodeCall, attempts: string[], plan: CallPlan): Promise<NodeAnswer | null> {
    if (plan.trace === undefined) return this.tryNode(lease, call, attempts, plan);
    return tracedAttempt(plan.trace, lease.node.name, call, attempts, (traced, reasons) =>
      this.tryNode(lease, traced, reasons, plan),
    );
  }

  /** The attempt itself, traced or not. */
  private async tryNode(lease: Lease, call: NodeCall, attempts: string[], plan: CallPlan): Promise<NodeAnswer | null> {
    const node = lease.node;
    const probedAtSend = node.probed;
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    let answer: NodeAnswer;
    try {
      // Through the node's circuit: a transport failure, a 5xx or an implausible
      // snapshot counts against it, a success closes a half-open one; a hedge we
      // cancel, or load shedding, counts as nothing.
      answer = await node.guard(() => this.judged(node, call, plan, probedAtSend));
    } catch (err) {
      lease.release();
      if (err instanceof NodeShedding) return this.shedding(node, err, attempts, seconds());
      const own = err instanceof CountedFailure ? (err.answer as NodeAnswer | undefined) : undefined;
      if (own === undefined) return this.failed(node, err, call, attempts, seconds());
      answer = own;
    }
    // A streamed answer holds its slot of the node's budget until its last byte is passed on (or its reader leaves, or its deadline passes).
    if (answer.stream !== undefined) {
      answer.stream.once('close', () => lease.release());
      answer.stream.once('error', (err) => this.unfinished(node, err, call));
    } else {
      lease.release();
    }
    this.o.onCall?.(node.name, answer.status >= 500 ? 'node_error' : 'ok', seconds());
    if (answer.ledger !== null) this.o.nodes.observeAnswer(node, answer.ledger);
    if (node.quarantined) {
      const why = node.otherChain ? `chain id ${answer.ledger?.chainId ?? node.ledger?.chainId}` : 'misbehaving';
      attempts.push(`${node.name}: quarantined (${why})`);
      return null;
    }
    return answer;
  }

  /** The node's answer, judged: a 5xx or an implausible snapshot is thrown as a CountedFailure, load shedding as NodeShedding. */
  private async judged(
    node: NodeState,
    call: NodeCall,
    plan: CallPlan,
    probedAtSend: ProbeRecord | null,
  ): Promise<NodeAnswer> {
    let got: NodeAnswer;
    try {
      got = await node.client.call({ ...call, answerBytes: this.o.answerBytes });
    } catch (err) {
      // A hedge we cancelled, or an answer shed for the proxy's own load, says nothing of the node.
      throw call.signal?.aborted || isShed(err) ? err : new CountedFailure(err);
    }
    if (isOverloaded(got)) throw new NodeShedding(got.retryAfterMs);
    const verdict = await this.o.nodes.judge(node, got, {
      latest: plan.latest,
      probedAtSend,
      receivedAt: node.clock(),
      timeoutMs: call.timeoutMs,
    });
    if (verdict !== null) throw new CountedFailure(new ImplausibleAnswer(verdict));
    if (got.status >= 500) throw new CountedFailure(null, got);
    return got;
  }

  /** The node shed load: it is left alone for a moment, without blame, and the call goes on to another node. */
  private shedding(node: NodeState, shed: NodeShedding, attempts: string[], seconds: number): null {
    node.shed(shedBackOffMs(shed.retryAfterMs, this.s.probeIntervalMs));
    this.o.onCall?.(node.name, 'overloaded', seconds);
    attempts.push(`${node.name}: shedding load (overloaded)`);
    return null;
  }

  /** A call that got no answer to use: why, in `attempts`; a shed call ends the read. */
  private failed(node: NodeState, err: unknown, call: NodeCall, attempts: string[], seconds: number): null {
    if (isShed(err)) {
      this.o.onShed?.('answer_bytes');
      throw err;
    }
    if (call.signal?.aborted) return null;
    if (err instanceof BrokenCircuitError) {
      attempts.push(`${node.name}: circuit open`);
      return null;
    }
    this.o.onCall?.(node.name, 'failed', seconds);
    const cause = err instanceof CountedFailure ? err.cause : err;
    if (cause instanceof ImplausibleAnswer) {
      const why =
        cause.verdict === 'unconfirmed'
          ? "its answer's ledger version could not be confirmed (its probe did not answer)"
          : 'answered an implausible ledger version';
      attempts.push(`${node.name}: ${why}`);
      return null;
    }
    attempts.push(cause instanceof NodeError ? cause.message : `${node.name}: failed`);
    this.logUnexpected(node, cause, call);
    return null;
  }

  /** A streamed answer its node did not finish by the deadline: counted against the node and logged, once. */
  private unfinished(node: NodeState, err: Error, call: NodeCall): void {
    if (!(err instanceof NodeError && err.reason === 'deadline')) return;
    this.o.onUnfinished?.(node.name);
    const reqId = call.headers?.['x-request-id'];
    this.o.logger.warn(
      { reqId, upstream: node.name },
      "upstream misbehaving: it did not deliver a passthrough answer whole by the deadline (routing.deadlineMs); the answer is cut off and the node's call ended",
    );
  }

  /** A failure the node client does not name, with the request's id: `err` at warn, its stack's frames at debug. */
  private logUnexpected(node: NodeState, cause: unknown, call: NodeCall): void {
    const inner = cause instanceof NodeError ? cause.cause : cause;
    if (inner === undefined) return;
    const reqId = call.headers?.['x-request-id'];
    this.o.logger.warn(
      { reqId, upstream: node.name, err: loggedError(inner, this.o.logger) },
      'node call failed unexpectedly',
    );
  }
}
