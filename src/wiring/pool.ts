// The pool, built from its parts: the node set (and the parts it keeps its
// knowledge in: the chain, the prober, the transition log, the misbehaving nodes
// and the latest floor), the leases on the nodes' budgets and the failover loop
// over them with its attempts, within the proxy's own bounds (calls and answer bytes
// in flight); NodeSet, Failover and UpstreamPool receive them built.
import type { Logger } from 'pino';
import type { Watermark } from '../ledger/watermark.js';
import type { VendorIdentity } from '../ledger/vendor.js';
import type { ShedFirst } from '../upstream/budgets.js';
import type { CallOutcome, ShedReason } from '../upstream/call.js';
import { NodeAttempts } from '../upstream/attempt.js';
import { Failover } from '../upstream/failover.js';
import { NodeLeases } from '../upstream/lease.js';
import { ChainIdentity } from '../upstream/nodes/chain.js';
import { Prober, type ProbeSchedule } from '../upstream/nodes/health.js';
import { LatestFloor } from '../upstream/nodes/latest-floor.js';
import { MisbehavingNodes } from '../upstream/nodes/misbehaving.js';
import { NodeSet } from '../upstream/nodes/node-set.js';
import type { NodeState } from '../upstream/nodes/node-state.js';
import type { Misbehaviour } from '../upstream/nodes/plausibility.js';
import { type NodeTransition, NodeTransitions } from '../upstream/nodes/transitions.js';
import { UpstreamPool } from '../upstream/pool.js';
import { AnswerBytes } from '../upstream/transport/answer-bytes.js';

interface RoutingSettings {
  attemptTimeoutMs: number;
  deadlineMs: number;
  maxAttempts: number;
  probeIntervalMs: number;
  maxLagVersions: number;
  hedgeAfterMs: number;
  /** bytes of node answers being received at once, over all calls; beyond it a call is shed */
  maxAnswerBytesInFlight: number;
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
  budget?: { waitMs: number; shedFirst: ShedFirst };
  /** when probe rounds run (default: a timer every probeIntervalMs) */
  probeSchedule?: ProbeSchedule;
  /** told of every read shed, by reason, for metrics */
  onShed?: (reason: ShedReason) => void;
  /** told of every call to a node, for metrics */
  onCall?: (upstream: string, outcome: CallOutcome, seconds: number) => void;
  /** told of every latest reply below a version already reported (a failover) */
  onStepBack?: () => void;
  /** told when an established chain is replaced (a devnet reset) */
  onChainChange?: (from: number, to: number) => void;
  /** told of every implausible snapshot a node answered, and of every passthrough answer it did not finish by the deadline ('unfinished'), for metrics */
  onMisbehaving?: (upstream: string, reason: Misbehaviour | 'unfinished') => void;
  /** told of every node state change, for metrics */
  onTransition?: (upstream: string, state: NodeTransition) => void;
  /** the vendor the nodes must bear out (or that they name, with vendor: auto) */
  vendor: VendorIdentity;
}

export function upstreamPoolOf(options: PoolOptions): UpstreamPool {
  const { routing } = options;
  const budget = options.budget ?? { waitMs: 0, shedFirst: 'none' };
  const answerBytes = new AnswerBytes(routing.maxAnswerBytesInFlight);
  const set = nodeSetOf(options);
  const leases = new NodeLeases({
    nodes: () => set.nodes,
    maxLag: routing.maxLagVersions,
    floor: () => set.floor.value(),
    shedFirst: budget.shedFirst,
  });
  const failover = new Failover({
    settings: { ...routing, budgetWaitMs: budget.waitMs },
    nodes: set,
    leases,
    attempts: new NodeAttempts({
      probeIntervalMs: routing.probeIntervalMs,
      nodes: set,
      logger: options.logger,
      onShed: options.onShed,
      onCall: options.onCall,
      onUnfinished: (upstream) => options.onMisbehaving?.(upstream, 'unfinished'),
    }),
    onShed: options.onShed,
  });
  return new UpstreamPool({
    ...{ set, failover, answerBytes },
    deadlineMs: routing.deadlineMs,
    maxInFlight: options.maxInFlight,
    onShed: options.onShed,
  });
}

function nodeSetOf(options: PoolOptions): NodeSet {
  const { routing, logger } = options;
  return new NodeSet({
    nodes: options.nodes,
    maxLagVersions: routing.maxLagVersions,
    watermark: options.watermark,
    logger,
    onChainChange: options.onChainChange,
    vendor: options.vendor,
    chain: new ChainIdentity(options.chainId, logger),
    prober: new Prober({
      intervalMs: routing.probeIntervalMs,
      timeoutMs: routing.attemptTimeoutMs,
      logger,
      schedule: options.probeSchedule,
    }),
    transitions: new NodeTransitions(logger, options.onTransition),
    misbehaving: new MisbehavingNodes({ logger, onMisbehaving: options.onMisbehaving }),
    floor: new LatestFloor(logger, options.onStepBack),
  });
}
