// POST /cache/purge on the admin listener: the body checked (purge-body.ts), the
// purge run where it must be (this process, or every worker through the primary),
// counted, logged, and answered with what was purged. A purge is safe to repeat:
// one that could not finish (Redis did not answer, a worker was silent) answers
// 503 with what it did, and the operator sends it again.
import type { Logger } from 'pino';
import { NodeError } from '../errors.js';
import type { RouteDescriptor } from '../routes/route.js';
import { type RouteMatcher, routeMatcher } from '../routes/table.js';
import type { CachePurge, PurgeDone, PurgeOrder } from '../serve/purge.js';
import { cacheScopeOf, type PurgeScope, purgeScopeOf, versionOf } from './purge-body.js';

/** What a purge did, over every process it reached. */
export interface PurgeReport extends Omit<PurgeDone, 'redis' | 'announced'> {
  /** PurgeDone's, or 'unknown': the worker asked to purge Redis did not answer */
  redis: PurgeDone['redis'] | 'unknown';
  /** server.workers > 1: how many workers purged, and the ids of those that did not answer in time */
  workers?: { answered: number; unanswered: number[] };
}

export interface PurgeRouteDeps {
  /**
   * runs a purge: in this process, or through the primary in every worker. A
   * request is parsed there, by the vendor the nodes named (a primary knows none).
   */
  run(scope: PurgeScope): Promise<PurgeReport | NodeError>;
  /** every cached route family */
  families: ReadonlySet<string>;
  logger: Logger;
  /** counts a purge that ran (ledger_proxy_purges_total) */
  counted(scope: PurgeScope['scope']): void;
}

export interface PurgeReply {
  status: 200 | 503;
  body: { purged: Record<string, unknown>; message?: string };
}

/** The admin's purge, answered: what was purged, or the 400 (or 503 not ready) that says why nothing was. */
export async function purgeReply(body: Buffer, deps: PurgeRouteDeps): Promise<PurgeReply | NodeError> {
  const scope = purgeScopeOf(body, deps.families);
  if (scope instanceof NodeError) return scope;
  const report = await deps.run(scope);
  if (report instanceof NodeError) return report;
  deps.counted(scope.scope);
  // In this order; an absent count is left out (JSON has no undefined). The
  // purge's number among Redis's (PurgeDone.announced) is the workers' business.
  const { generation, memoryEntries, redis, redisEntries, workers, named } = report;
  const purged = { ...described(scope, named), generation, memoryEntries, redis, redisEntries, workers };
  const unanswered = report.workers?.unanswered ?? [];
  const incomplete = report.redis === 'failed' || report.redis === 'unknown' || unanswered.length > 0;
  if (!incomplete) {
    deps.logger.info(purged, 'cache purged');
    return { status: 200, body: { purged } };
  }
  const message = [
    report.redis === 'failed' ? 'Redis did not answer: its entries are not purged.' : '',
    report.redis === 'unknown'
      ? 'The worker asked to purge Redis did not answer in time: its entries may not be purged.'
      : '',
    unanswered.length > 0
      ? `Workers ${unanswered.join(', ')} did not answer in time: their memory tiers may not be purged.`
      : '',
    'A purge is safe to repeat.',
  ]
    .filter((part) => part !== '')
    .join(' ');
  deps.logger.warn(purged, 'cache purge incomplete');
  return { status: 503, body: { purged, message } };
}

/** The purges of one process: run here (for a worker, ordered by the primary), and the admin route's, which purges Redis too. */
export function localPurges(
  purge: CachePurge,
  routes: readonly RouteDescriptor[],
  logger: Logger,
  counted: PurgeRouteDeps['counted'],
): { here: (scope: PurgeScope, order: PurgeOrder) => Promise<PurgeDone | NodeError>; route: PurgeRouteDeps } {
  const matcher = routeMatcher(routes);
  const here = (scope: PurgeScope, order: PurgeOrder): Promise<PurgeDone | NodeError> =>
    purgeHere(purge, matcher, scope, order);
  return {
    here,
    route: {
      run: (scope) => here(scope, { shared: true }),
      families: new Set(routes.map((r) => r.family)),
      logger,
      counted,
    },
  };
}

/**
 * A purge run in this process (`order.shared`: Redis too), for the admin listener
 * or a worker. A request is parsed here, by the routes of the vendor the nodes
 * named, into the key its reads use; not before the nodes have named it.
 */
async function purgeHere(
  purge: CachePurge,
  routes: RouteMatcher,
  scope: PurgeScope,
  order: PurgeOrder,
): Promise<PurgeDone | NodeError> {
  const refused = scope.scope === 'request' ? purge.requestRefusal() : undefined;
  if (refused !== undefined) return refused;
  const parsed = cacheScopeOf(scope, routes);
  if (parsed instanceof NodeError) return parsed;
  try {
    const done = await purge.run(parsed, order);
    return parsed.scope === 'request'
      ? { ...done, named: { family: parsed.read.route.family, version: versionOf(parsed.read) } }
      : done;
  } catch (err) {
    return NodeError.from(err);
  }
}

/** What the purge named, for the answer and the log line: never a request's path or body, only its family and version (`named`, as parsed where it ran). */
function described(scope: PurgeScope, named: PurgeDone['named']): Record<string, unknown> {
  if (scope.scope === 'all') return { scope: 'all' };
  if (scope.scope === 'family')
    return {
      scope: 'family',
      family: scope.family,
      fromVersion: scope.fromVersion,
      ...(scope.toVersion === null ? {} : { toVersion: scope.toVersion }),
    };
  return { scope: 'request', family: named?.family, version: named?.version };
}
