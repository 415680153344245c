// What /readyz says, as buildApp wires it: not ready from the start of a shutdown,
// or while the chain is unknown or no node of it is healthy; each node with its
// url, state and last probe; and each Redis client's state, which never makes the
// proxy unready (Redis is a cache: the proxy serves from memory and nodes without it).
import { noHealthyNode, type Readiness, SHUTTING_DOWN } from '../admin/server.js';
import { probeResult } from '../upstream/nodes/health.js';
import type { UpstreamPool } from '../upstream/pool.js';

export interface ReadinessSources {
  pool: UpstreamPool;
  /** a shutdown has begun */
  closing(): boolean;
  /** each Redis client's state; [] without cache.redis */
  redisStates(): NonNullable<Readiness['redis']>;
}

export function readinessOf({ pool, closing, redisStates }: ReadinessSources): () => Readiness {
  return () => {
    const upstreams = pool.nodes.map((n) => ({
      name: n.name,
      url: n.client.shownUrl,
      state: pool.health(n),
      probe: probeResult(n),
    }));
    const states = redisStates();
    const redis = states.length > 0 ? { redis: states } : {};
    // Fails first on shutdown, so a load balancer stops sending before the drain.
    if (closing()) return { ready: false, reason: SHUTTING_DOWN, upstreams, ...redis };
    if (pool.ready()) return { ready: true, upstreams, ...redis };
    // The chain unknown: the vendor, or the nodes' chains or probes, say why; known, the nodes' health does.
    const reason = pool.chainId() === undefined ? pool.notReadyReason() : noHealthyNode(upstreams);
    return { ready: false, reason, upstreams, ...redis };
  };
}
