// One attempt of a call on one node, on a lease of its budget: the call through
// the node's circuit, its answer judged (a 5xx or a snapshot its node could not
// have sent counts against the node, plausibility.ts; a node shedding load is
// left alone for a moment, without blame, shedding.ts), and why it gave no
// answer to use, for the failover loop to go on with.
import type { Logger } from 'pino';
import { NodeError } from '../errors.js';
import { loggedError } from '../process/log-error.js';
import type { NodeAnswer } from '../model/node-answer.js';
import { tracedAttempt } from './attempt-span.js';
import type { AttemptLog, CallOutcome, CallPlan, NodeFailure, ShedReason } from './call.js';
import type { Lease } from './lease.js';
import type { NodeSet, SnapshotVerdict } from './nodes/node-set.js';
import { BrokenCircuitError, CountedFailure, type NodeState, type ProbeRecord } from './nodes/node-state.js';
import { isOverloaded, NodeShedding, shedBackOffMs } from './nodes/shedding.js';
import type { NodeCall } from './transport/node-client.js';

export interface NodeAttemptsDeps {
  /** routing.probeIntervalMs: how long a node that sheds load without a Retry-After is left alone (at most a second) */
  probeIntervalMs: number;
  nodes: NodeSet;
  logger: Logger;
  /** told of every call shed for the answer bytes in flight, for metrics */
  onShed?: (reason: ShedReason) => void;
  /** told of every call to a node, for metrics */
  onCall?: (upstream: string, outcome: CallOutcome, seconds: number) => void;
  /** told of every streamed answer its node did not finish by the deadline, for metrics */
  onUnfinished?: (upstream: string) => void;
}

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

/** How a node failed, from the reason of the NodeError its call ended in (the node client's words for it). */
function nodeFailure(reason: NodeError['reason']): NodeFailure {
  return reason === 'node_timeout' || reason === 'node_broken' ? reason : 'node_failed';
}

export class NodeAttempts {
  constructor(private readonly deps: NodeAttemptsDeps) {}

  /** One call to one node, on a lease it releases; null (with the reason in `attempts`) when it failed. */
  run(lease: Lease, call: NodeCall, attempts: AttemptLog, plan: CallPlan): Promise<NodeAnswer | null> {
    if (plan.trace === undefined) return this.tryNode(lease, call, attempts, plan);
    return tracedAttempt(plan.trace, lease.node.name, call, attempts, (traced, reasons) =>
      this.tryNode(lease, traced, reasons, plan),
    );
  }

  /** The attempt itself, traced or not. */
  private async tryNode(
    lease: Lease,
    call: NodeCall,
    attempts: AttemptLog,
    plan: CallPlan,
  ): Promise<NodeAnswer | null> {
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
    this.deps.onCall?.(node.name, answer.status >= 500 ? 'node_error' : 'ok', seconds());
    if (answer.ledger !== null) this.deps.nodes.observeAnswer(node, answer.ledger);
    if (node.quarantined) {
      const why = node.otherChain ? `chain id ${answer.ledger?.chainId ?? node.ledger?.chainId}` : 'misbehaving';
      attempts.add(`${node.name}: quarantined (${why})`);
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
      got = await node.client.call(call);
    } catch (err) {
      // A hedge we cancelled, or an answer shed for the proxy's own load, says nothing of the node.
      throw call.signal?.aborted || isShed(err) ? err : new CountedFailure(err);
    }
    if (isOverloaded(got)) throw new NodeShedding(got.retryAfterMs);
    const judging = this.deps.nodes.judge(node, got, {
      latest: plan.latest,
      probedAtSend,
      receivedAt: node.clock(),
      timeoutMs: call.timeoutMs,
    });
    const verdict = judging instanceof Promise ? await judging : judging;
    if (verdict !== null) throw new CountedFailure(new ImplausibleAnswer(verdict));
    if (got.status >= 500) throw new CountedFailure(null, got);
    return got;
  }

  /** The node shed load: it is left alone for a moment, without blame, and the call goes on to another node. */
  private shedding(node: NodeState, shed: NodeShedding, attempts: AttemptLog, seconds: number): null {
    node.shed(shedBackOffMs(shed.retryAfterMs, this.deps.probeIntervalMs));
    this.deps.onCall?.(node.name, 'overloaded', seconds);
    attempts.add(`${node.name}: shedding load (overloaded)`);
    return null;
  }

  /** A call that got no answer to use: why, in `attempts`; a shed call ends the read. */
  private failed(node: NodeState, err: unknown, call: NodeCall, attempts: AttemptLog, seconds: number): null {
    if (isShed(err)) {
      this.deps.onShed?.('answer_bytes');
      throw err;
    }
    if (call.signal?.aborted) return null;
    if (err instanceof BrokenCircuitError) {
      attempts.add(`${node.name}: circuit open`);
      return null;
    }
    this.deps.onCall?.(node.name, 'failed', seconds);
    const cause = err instanceof CountedFailure ? err.cause : err;
    if (cause instanceof ImplausibleAnswer) {
      const why =
        cause.verdict === 'unconfirmed'
          ? "its answer's ledger version could not be confirmed (its probe did not answer)"
          : 'answered an implausible ledger version';
      attempts.add(`${node.name}: ${why}`, 'node_broken');
      return null;
    }
    if (cause instanceof NodeError) attempts.add(cause.message, nodeFailure(cause.reason));
    else attempts.add(`${node.name}: failed`, 'node_failed');
    this.logUnexpected(node, cause, call);
    return null;
  }

  /** A streamed answer its node did not finish by the deadline: counted against the node and logged, once. */
  private unfinished(node: NodeState, err: Error, call: NodeCall): void {
    if (!(err instanceof NodeError && err.reason === 'deadline')) return;
    this.deps.onUnfinished?.(node.name);
    this.deps.logger.warn(
      { reqId: call.requestId, upstream: node.name },
      "upstream misbehaving: it did not deliver a passthrough answer whole by the deadline (routing.deadlineMs); the answer is cut off and the node's call ended",
    );
  }

  /** A failure the node client does not name, with the request's id: `err` at warn, its stack's frames at debug. */
  private logUnexpected(node: NodeState, cause: unknown, call: NodeCall): void {
    const inner = cause instanceof NodeError ? cause.cause : cause;
    if (inner === undefined) return;
    this.deps.logger.warn(
      { reqId: call.requestId, upstream: node.name, err: loggedError(inner, this.deps.logger) },
      'node call failed unexpectedly',
    );
  }
}
