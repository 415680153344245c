// The admin listener, composed: health, readiness, metrics and the cache purge of
// this process's read path. A worker of server.workers > 1 builds none (the
// primary serves it for all) but still runs the purges the primary orders.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { localPurges } from '../admin/purge.js';
import type { PurgeScope } from '../admin/purge-body.js';
import { buildAdminServer, type Readiness } from '../admin/server.js';
import type { Config } from '../config/index.js';
import type { NodeError } from '../errors.js';
import type { LedgerHeaderNames } from '../ledger/headers.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RouteDescriptor } from '../routes/route.js';
import type { CachePurge, PurgeDone, PurgeOrder } from '../serve/purge.js';

export interface AdminListenerDeps {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  metrics: Metrics;
  readiness(): Readiness;
  headerNames: LedgerHeaderNames;
  routes: readonly RouteDescriptor[];
  /** the read path's purges */
  purge: CachePurge;
  /** false in a worker: the primary serves the admin listener */
  serve: boolean;
}

export interface AdminListener {
  /** absent when admin.port is 0, or in a worker */
  admin?: FastifyInstance;
  /** a purge in this process: the admin listener's own, or the primary's order to a worker */
  purgeHere(scope: PurgeScope, order: PurgeOrder): Promise<PurgeDone | NodeError>;
}

export function buildAdminListener(config: Config, deps: AdminListenerDeps): AdminListener {
  const { logger, metrics } = deps;
  const purges = localPurges(deps.purge, deps.routes, logger, (scope) => metrics.purged(scope));
  const admin =
    config.admin.port !== 0 && deps.serve
      ? buildAdminServer({
          ...{ settings: config.admin, logger, env: deps.env, metrics },
          readiness: deps.readiness,
          headerNames: deps.headerNames,
          purge: purges.route,
        })
      : undefined;
  return { admin, purgeHere: purges.here };
}
