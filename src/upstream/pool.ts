// The configured nodes, as one: every read and passthrough call goes through the
// failover loop (failover.ts) to nodes chosen on a lease of their budget
// (lease.ts), within the proxy's own bounds (calls and answer bytes in flight).
// The node set (node-set.ts) keeps what is known of the nodes: snapshots, chain,
// pruning, readiness. Latest reads never step back below the highest version
// already reported (read-your-latest, api.md §8), but when no node at or above it
// answers, and such a step back is counted.
import { NodeError } from '../errors.js';
import type { TraceScope } from '../tracing/scope.js';
import type { ReadContext } from '../model/read-context.js';
import type { EveryField, ReadRequest } from '../model/read.js';
import type { NodeAnswer } from '../model/node-answer.js';
import type { AnswerBytes } from './transport/answer-bytes.js';
import type { Priority } from '../config/index.js';
import { PRIORITY_SHARE } from './budgets.js';
import { type Call, RETRY_SOON, type ShedReason } from './call.js';
import type { Failover } from './failover.js';
import type { NodeSet } from './nodes/node-set.js';
import type { NodeHealth, NodeState } from './nodes/node-state.js';

export interface PoolParts {
  /** what is known of the nodes: snapshots, chain, pruning, readiness */
  set: NodeSet;
  /** the loop every call goes through, to nodes chosen on a lease of their budget */
  failover: Failover;
  /** node answer bytes being received, over all calls (routing.maxAnswerBytesInFlight) */
  answerBytes: AnswerBytes;
  /** routing.deadlineMs */
  deadlineMs: number;
  /** node calls in flight across all nodes beyond which reads are shed with 503 (default: no bound) */
  maxInFlight?: number;
  /** told of every read shed, by reason, for metrics */
  onShed?: (reason: ShedReason) => void;
}

/** How a passthrough call is routed. */
export interface ForwardRoute {
  /** GET, HEAD, OPTIONS: may be retried on another node and hedged; a write is sent once */
  idempotent: boolean;
  /** ?ledger_version=N: a node that covers N */
  minVersion?: bigint;
  /** the tenant's priority: how much of the budgets the call may use */
  priority?: Priority;
  /** the request's span, while tracing is on: each node attempt goes under it */
  trace?: TraceScope;
  /** a node not to ask, by name: a second opinion is asked of another */
  exclude?: string;
}

export class UpstreamPool {
  /** node answer bytes being received, over all calls (routing.maxAnswerBytesInFlight) */
  readonly answerBytes: AnswerBytes;
  private readonly set: NodeSet;
  private readonly failover: Failover;
  private readonly deadlineMs: number;
  private readonly maxInFlight: number;
  private readonly onShed: PoolParts['onShed'];
  private inFlight = 0;

  constructor(parts: PoolParts) {
    this.set = parts.set;
    this.failover = parts.failover;
    this.answerBytes = parts.answerBytes;
    this.deadlineMs = parts.deadlineMs;
    this.maxInFlight = parts.maxInFlight ?? Number.POSITIVE_INFINITY;
    this.onShed = parts.onShed;
  }

  /** Replaced whole by replaceNodes (SIGHUP reload); never mutated in place. */
  get nodes(): readonly NodeState[] {
    return this.set.nodes;
  }

  /** Reads from the best node for the request, failing over until the deadline. */
  async read(req: ReadRequest, call: { deadlineAt?: number; context?: ReadContext } = {}): Promise<NodeAnswer> {
    const { deadlineAt, context } = call;
    // A path that names a version (a transaction, a block) goes to a node that has it.
    const version = req.route.routingVersion(req);
    const latest = version === null && req.route.pin === 'version';
    const deadline = deadlineAt ?? Date.now() + this.deadlineMs;
    const priority = context?.priority;
    const answer = await this.admitted(
      () =>
        this.failover.run(this.readCall(req, context), {
          version,
          idempotent: true,
          latest,
          deadline,
          priority,
          trace: context?.trace,
        }),
      priority,
    );
    if (latest) this.set.floor.reported(answer, this.set.chainId());
    return answer;
  }

  /**
   * The same read, from a node other than `other.exclude` whose snapshot covers
   * `other.covering` (the version the first answer belongs to): a second opinion
   * before an answer is stored. null when no such node can take a call now; then
   * nothing is asked.
   */
  async readFromAnother(
    req: ReadRequest,
    other: { exclude: string; covering: bigint },
    deadlineAt: number,
    context?: ReadContext,
  ): Promise<NodeAnswer | null> {
    const nodes = this.set.nodes;
    if (!nodes.some((n) => n.name !== other.exclude && n.available() && n.covers(other.covering))) return null;
    const exclude = new Set(nodes.filter((n) => n.name === other.exclude));
    const priority = context?.priority;
    const plan = {
      version: other.covering,
      idempotent: true,
      latest: false,
      deadline: deadlineAt,
      priority,
      exclude,
      trace: context?.trace,
    };
    return this.admitted(() => this.failover.run(this.readCall(req, context), plan), priority);
  }

  /**
   * A passthrough call, routed like a read (api.md §8): healthy nodes of the chain
   * only, a node covering ?ledger_version=N, within the budgets and counted in
   * the metrics; only an idempotent call is retried on another node or hedged.
   */
  async forward(call: Call, route: ForwardRoute): Promise<NodeAnswer> {
    // Nothing is served before the chain is known (api.md §8), passthrough included.
    if (this.set.chainId() === undefined) throw NodeError.notReady(this.notReadyReason());
    // A version every node has pruned is the node's to judge (it may not even be a read route).
    const version = route.minVersion !== undefined && !this.isPruned(route.minVersion) ? route.minVersion : null;
    const deadline = Date.now() + this.deadlineMs;
    const excluded = route.exclude;
    const plan = {
      version,
      idempotent: route.idempotent,
      latest: false,
      deadline,
      priority: route.priority,
      trace: route.trace,
      exclude: excluded === undefined ? undefined : new Set(this.set.nodes.filter((n) => n.name === excluded)),
    };
    // The answer ends within the deadline too: it streams on after the call returns.
    // Every field named, not spread (model/read.ts, EveryField, says why).
    const sent: EveryField<Call> = {
      method: call.method,
      path: call.path,
      headers: call.headers,
      requestId: call.requestId,
      body: call.body,
      signal: call.signal,
      passthrough: call.passthrough,
      deliverBy: deadline,
      answerBytes: this.answerBytes,
    };
    return this.admitted(() => this.failover.run(sent, plan), route.priority);
  }

  /**
   * Overload (shedding.maxInFlight): answer at once rather than queue without
   * bound. Coalesced requests share one read, so they count once. A lower
   * priority may use less of it: it is shed first.
   */
  private async admitted<T>(run: () => Promise<T>, priority: Priority = 'high'): Promise<T> {
    const cap = Math.max(1, Math.floor(this.maxInFlight * PRIORITY_SHARE[priority]));
    if (this.inFlight >= cap) {
      this.onShed?.('overload');
      throw NodeError.unavailable(
        `overloaded: ${this.inFlight} reads are in flight to the nodes (shedding.maxInFlight ${this.maxInFlight}, of which ${priority} priority may use ${cap})`,
        'overloaded',
        RETRY_SOON,
      );
    }
    this.inFlight++;
    try {
      return await run();
    } finally {
      this.inFlight--;
    }
  }

  /**
   * The share of node budget left (0 to 1): the smallest over the nodes that can
   * take a call now, and the proxy's own shedding.maxInFlight. A layer in front
   * sheds before the proxy has to (X-Proxy-Headroom, ledger_proxy_node_headroom).
   */
  headroom(): number {
    let left = Number.isFinite(this.maxInFlight) ? Math.max(0, 1 - this.inFlight / this.maxInFlight) : 1;
    for (const node of this.set.nodes) if (node.available()) left = Math.min(left, node.headroom());
    return left;
  }

  health(node: NodeState): NodeHealth {
    return this.set.health(node);
  }

  /** api.md §7: N is pruned when it is below the oldest version of every node that could serve it. */
  isPruned(n: bigint): boolean {
    return this.set.belowEveryHistory(n, 'oldestLedgerVersion');
  }

  /** As isPruned, for a block height (blocks/by_height answers 410 block_pruned below a node's oldest block). */
  isBlockPruned(height: bigint): boolean {
    return this.set.belowEveryHistory(height, 'oldestBlockHeight');
  }

  /** Ready: the chain is known and some node of it is healthy. */
  ready(): boolean {
    return this.set.ready();
  }

  /** Probes now, then every probeIntervalMs. */
  start(): Promise<void> {
    return this.set.start();
  }

  /**
   * Swaps in a new node list without dropping requests: nodes kept (same name and
   * url) keep their state; removed nodes finish their calls in flight, then close.
   */
  replaceNodes(next: NodeState[]): Promise<{ added: string[]; removed: string[] }> {
    return this.set.replaceNodes(next);
  }

  close(): Promise<void> {
    return this.set.close();
  }

  /** The chain this pool fronts, undefined while not known (then nothing is served or cached). */
  chainId(): number | undefined {
    return this.set.chainId();
  }

  /** Why the chain is not known: each node's chain or last probe failure (names, never URLs). */
  notReadyReason(): string {
    return this.set.notReadyReason();
  }

  /**
   * A read as a node call: its Accept, its body, the request id and SDK it is made
   * for (a shared call: the first caller's), and the answer bytes it counts against.
   */
  private readCall(req: ReadRequest, context: ReadContext | undefined): Call {
    const headers: Record<string, string> = { accept: req.accept };
    if (req.contentType !== undefined) headers['content-type'] = req.contentType;
    const requestId = context?.requestId;
    if (requestId !== undefined) headers['x-request-id'] = requestId;
    const sdk = context?.sdkClient;
    if (sdk !== undefined) headers[sdk.name] = sdk.value;
    const body = req.method === 'POST' ? req.body : undefined;
    return { method: req.method, path: req.path, headers, requestId, body, answerBytes: this.answerBytes };
  }
}
