// SIGHUP's appliers, composed: one for each key of LIVE_KEYS (the nodes, the log
// level, the tenants, the change feed); the Reloader reports any other changed
// key as needing a restart.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { TenantDirectory } from '../edge/tenants.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Applier, type LiveKey, Reloader } from '../process/reload.js';
import type { UpstreamPool } from '../upstream/pool.js';
import type { ChangeFeed } from './feed.js';
import { warnIfUnverifiable } from './reads.js';
import type { BuiltInSim } from './sim.js';
import type { Upstreams } from './upstream.js';

export /** The reloader of a running app: each live key applied to the part that holds it. */
function reloaderFor(
  config: Config,
  logger: Logger,
  live: {
    pool: UpstreamPool;
    nodesOf: Upstreams['nodesOf'];
    sim: BuiltInSim;
    tenants: TenantDirectory;
    metrics: Metrics;
    env: NodeJS.ProcessEnv;
    changeFeed: ChangeFeed;
  },
): Reloader {
  const { pool, tenants, metrics } = live;
  return new Reloader(config, logger, {
    upstreams: async (next) => {
      // A 'sim' upstream the running app has no node for: the built-in node starts first.
      await live.sim.startFor(next.upstreams);
      const result = await pool.replaceNodes(live.nodesOf(next.upstreams));
      logger.info({ ...result, upstreams: pool.nodes.map((n) => n.name) }, 'upstreams reloaded');
      warnIfUnverifiable({ ...config, upstreams: next.upstreams }, logger);
    },
    'log.level': (next) => {
      logger.level = next.log.level;
    },
    tenants: (next) => {
      tenants.replace(next.tenants, live.env);
      metrics.tenants.known(tenants.names());
      logger.info({ tenants: tenants.names() }, 'tenants reloaded');
    },
    'latest.changeFeed': (next) => live.changeFeed.apply(next),
  } satisfies Record<LiveKey, Applier>);
}
