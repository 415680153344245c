// A call to the nodes as the failover loop takes it: what is sent, how it is
// routed and retried, how each attempt went, and why a call is shed.
import type { Priority } from '../config/index.js';
import type { ErrorReason } from '../errors.js';
import type { EveryField } from '../model/read.js';
import type { TraceScope } from '../tracing/scope.js';
import type { NodeState } from './nodes/node-state.js';
import type { NodeCall } from './transport/node-client.js';

/** Why a call was refused for the proxy's own load: its in-flight cap, a node's budget, the answer bytes in flight. */
export type ShedReason = 'overload' | 'budget' | 'answer_bytes';

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

/** A call as the pool hands it over: each attempt gets its own timeout. */
export type Call = Omit<NodeCall, 'timeoutMs'>;

/**
 * One attempt of `call`: its timeout, and, where they are not the call's own, the
 * signal that cancels it (a hedge's) and the headers it is sent with (a traced
 * attempt's). Every field named, not `{ ...call, timeoutMs }` (model/read.ts,
 * EveryField, says why): the transport reads them all.
 */
export function attemptOf(call: Call, timeoutMs: number, signal = call.signal, headers = call.headers): NodeCall {
  const attempt: EveryField<NodeCall> = {
    method: call.method,
    path: call.path,
    headers,
    requestId: call.requestId,
    body: call.body,
    timeoutMs,
    signal,
    passthrough: call.passthrough,
    deliverBy: call.deliverBy,
    answerBytes: call.answerBytes,
  };
  return attempt;
}

/** A shed call's client may come back in a second: budgets free up as calls end and tokens return. */
export const RETRY_SOON = { 'retry-after': '1' };

/** Why a node gave no answer, as the metrics and the access line name it. */
export type NodeFailure = Extract<ErrorReason, 'node_failed' | 'node_timeout' | 'node_broken'>;

/**
 * Why each attempt of one call gave no answer to use, in the proxy's words (the
 * client's 503 says them, the access line lists them), and the last way a node
 * failed, which becomes the reply's reason when no node answered.
 */
export class AttemptLog {
  readonly texts: string[] = [];
  /** how the last node that failed failed; undefined while none did (every node shed, was open or quarantined) */
  failure: NodeFailure | undefined;

  add(text: string, failure?: NodeFailure): void {
    this.texts.push(text);
    if (failure !== undefined) this.failure = failure;
  }

  /** Another log's attempts (a traced attempt's own), after these. */
  take(other: AttemptLog): void {
    this.texts.push(...other.texts);
    if (other.failure !== undefined) this.failure = other.failure;
  }
}
