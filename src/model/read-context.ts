// Whom a read is for, as the edge knows it: what each node call made for it
// carries, how much of a node's budget it may use, and whether it may make a node
// call at all. The read path and the upstream pool both take it.
import type { Priority } from '../config/index.js';
import type { NodeError } from '../errors.js';
import type { TraceScope } from '../tracing/scope.js';

export interface ReadContext {
  /** the request's id: sent to the node, written on the log lines of the call */
  readonly requestId?: string;
  /** the tenant's priority: low is shed before normal, normal before high, when node budgets run short */
  readonly priority?: Priority;
  /**
   * the span the read's work goes under, while tracing is on: the request's, or
   * the lookup's for the node calls it makes (each attempt goes under it, and the
   * node gets its traceparent)
   */
  readonly trace?: TraceScope;
  /** the client's SDK header (x-aptos-client), when well-formed: a node's operators see which SDK called */
  readonly sdkClient?: { readonly name: string; readonly value: string };
  /**
   * null when the request may make a node call; else the refusal (its tenant's
   * node units are spent). The read path asks it; the pool does not.
   */
  nodeCallRefusal(): NodeError | null;
}
