// The nodes, as buildApp wires them: each node's client, circuit and budget (a
// 'sim' upstream's url is the built-in node's, started through wiring/sim.ts), and
// the pool that routes every call, its events counted in the metrics.
import type { Logger } from 'pino';
import type { PassthroughDeps } from '../http/passthrough.js';
import type { Config } from '../config/index.js';
import { SIM_URL } from '../config/index.js';
import type { LedgerHeaderNames } from '../ledger/headers.js';
import type { PruneClock } from '../ledger/prune-clock.js';
import type { Watermark } from '../ledger/watermark.js';
import type { Metrics } from '../metrics/metrics.js';
import type { BuiltInSim } from './sim.js';
import type { ProbeSchedule } from '../upstream/nodes/health.js';
import { NodeClient } from '../upstream/transport/node-client.js';
import { NodeState } from '../upstream/nodes/node-state.js';
import type { UpstreamPool } from '../upstream/pool.js';
import { upstreamPoolOf } from './pool.js';
import type { VendorIdentity } from '../ledger/vendor.js';

export interface UpstreamDeps {
  logger: Logger;
  metrics: Metrics;
  watermark: Watermark;
  pruneClock: PruneClock;
  vendor: VendorIdentity;
  headerNames: LedgerHeaderNames;
  sim: BuiltInSim;
  probeSchedule?: ProbeSchedule;
}

export interface Upstreams {
  pool: UpstreamPool;
  /** the nodes of a reloaded upstreams list (kept ones keep their state in the pool) */
  nodesOf(upstreams: Config['upstreams']): NodeState[];
}

export function buildUpstreams(config: Config, deps: UpstreamDeps): Upstreams {
  const nodesOf = (upstreams: Config['upstreams']): NodeState[] =>
    nodeStates(upstreams, config, deps.headerNames, deps.sim);
  const upstream = deps.metrics.upstream;
  const pool = upstreamPoolOf({
    nodes: nodesOf(config.upstreams),
    vendor: deps.vendor,
    routing: config.routing,
    chainId: config.chainId,
    watermark: deps.watermark,
    logger: deps.logger,
    maxInFlight: config.shedding.maxInFlight,
    budget: { waitMs: config.shedding.budgetWaitMs, shedFirst: config.shedding.shedFirst },
    onShed: (reason) => upstream.shed(reason),
    onCall: (name, outcome, seconds) => upstream.call(name, outcome, seconds),
    onStepBack: () => upstream.stepBack(),
    onMisbehaving: (name, reason) => upstream.misbehaving(name, reason),
    onTransition: (name, state) => upstream.transition(name, state),
    probeSchedule: deps.probeSchedule,
    // A devnet reset: the old chain's pruning rate says nothing of the new one.
    onChainChange: () => deps.pruneClock.reset(),
  });
  return { pool, nodesOf };
}

/** The nodes of `upstreams`, each with its client, circuit breaker and budget. */
function nodeStates(
  upstreams: Config['upstreams'],
  config: Config,
  headerNames: LedgerHeaderNames,
  sim: BuiltInSim,
): NodeState[] {
  return upstreams.map((u) =>
    Object.assign(
      new NodeState(
        new NodeClient({
          name: u.name,
          // Started before its upstream is made: at start-up, or by the reload that adds it.
          url: u.url === SIM_URL ? sim.node!.url : u.url,
          headers: u.headers,
          headerNames,
        }),
        u.role,
        u.weight,
        config.routing.breaker,
        () => Date.now(),
        { maxInFlight: u.maxInFlight, maxRps: u.maxRps },
      ),
      { spreadVersions: u.spreadVersions },
    ),
  );
}

/** Passthrough calls go through the pool: routed like reads; only idempotent methods are retried. */
export function forwardVia(pool: UpstreamPool): PassthroughDeps['forward'] {
  return async (call, minVersion, priority, trace) => {
    const idempotent = call.method === 'GET' || call.method === 'HEAD' || call.method === 'OPTIONS';
    // A literal, not a spread of the client's call (model/read.ts, EveryField, says why).
    const { method, path, headers, requestId, body } = call;
    const sent = { method, path, headers, requestId, body, passthrough: true };
    const answer = await pool.forward(sent, { idempotent, minVersion, priority, trace });
    return {
      status: answer.status,
      headers: answer.headers ?? {},
      body: answer.stream ?? answer.body,
      upstream: answer.upstream,
    };
  };
}
