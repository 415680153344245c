// server.workers > 1: a primary that forks the workers (each a whole proxy with
// its own memory tier, sharing the port and Redis), serves the admin listener for
// all of them (metrics aggregated, readiness asked of each, a cache purge ordered
// of each: cluster/purge.ts), relays SIGHUP, and on SIGTERM fails readiness,
// drains every worker and exits.
//
// Connections are accepted by the workers themselves (SCHED_NONE: the kernel hands
// each to one of the processes waiting on the shared socket). Under node's default
// round-robin the primary accepts and passes each connection on, and one passed to
// a worker that has just died stays open in the primary with nobody to answer it.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { purgeWorkers } from './purge.js';
import type { Config } from '../config/index.js';
import { buildAdminServer, type Readiness, SHUTTING_DOWN } from '../admin/server.js';
import { ledgerHeaderNames } from '../ledger/headers.js';
import { EXIT_CANNOT_LISTEN, listenAs, type ListenError } from '../process/listen-error.js';
import { purgeCounter } from '../metrics/metrics.js';
import { readRoutes } from '../routes/table.js';
import { vendorNames } from '../wire/vendor.js';
import { clusterMetrics, WorkerChannel } from './worker-channel.js';

export { serveAsWorker } from './worker-channel.js';

/** How many workers `server.workers` asks for. */
export function workerCount(setting: Config['server']['workers']): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

/** A worker that does not say whether it is ready within this counts as not ready. */
const READINESS_WAIT_MS = 1000;
/** A worker whose metrics do not come within this is left out of that scrape. */
const METRICS_WAIT_MS = 2000;
/** A worker that died is replaced after this, so a crash loop does not spin. */
const RESTART_DELAY_MS = 1000;
/** After the drain deadline, how long workers may take to exit before they are killed. */
const EXIT_GRACE_MS = 2000;

/** A worker tells the primary it could not listen, with the line to print, before it exits with EXIT_CANNOT_LISTEN. */
const CANNOT_LISTEN = 'ledger-proxy:cannot-listen';

/** In a worker: hands the line that says why a listener could not open to the primary, which prints it once for all, and exits. */
export function workerCannotListen(err: ListenError): void {
  const exit = (): never => process.exit(EXIT_CANNOT_LISTEN);
  if (process.send === undefined || !process.connected) exit();
  process.send?.({ type: CANNOT_LISTEN, message: err.message }, undefined, {}, exit);
}

/** `exit` flushes the log, then ends the process. */
export async function runPrimary(
  config: Config,
  logger: Logger,
  count: number,
  exit: (code: number) => never,
): Promise<void> {
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  let stopping = false;
  const channel = new WorkerChannel();
  // Before any worker: an admin port in use stops the start with nothing forked.
  const admin = config.admin.port !== 0 ? adminFor(config, logger, channel, count, () => stopping) : undefined;
  const adminAddress = admin
    ? await listenAs('admin', config.admin.host, config.admin.port, () =>
        admin.listen({ host: config.admin.host, port: config.admin.port }),
      )
    : undefined;
  const fork = (): void => {
    if (!stopping) cluster.fork();
  };
  cluster.on('fork', (worker) => {
    // A write to a worker that died before the primary noticed is an 'error' event
    // on it; unheard, it would end the primary and every worker with it.
    worker.on('error', (err: Error) => logger.warn({ worker: worker.id, err }, 'worker channel error'));
  });
  cluster.on('online', (worker) => logger.info({ worker: worker.id, workerPid: worker.process.pid }, 'worker started'));
  let cannotListenSaid = false;
  cluster.on('message', (_worker, message: { type?: string; message?: string }) => {
    if (message?.type !== CANNOT_LISTEN) return;
    // Every worker meets the same port in use: said once, and no worker is started again.
    if (!cannotListenSaid) process.stderr.write(`ledger-proxy: ${message.message}\n`);
    cannotListenSaid = true;
    shutdown('cannot listen', EXIT_CANNOT_LISTEN);
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (code === EXIT_CANNOT_LISTEN) return shutdown('cannot listen', EXIT_CANNOT_LISTEN);
    logger.error({ worker: worker.id, workerPid: worker.process.pid, code, signal }, 'worker exited; starting another');
    setTimeout(fork, RESTART_DELAY_MS).unref();
  });
  for (let i = 0; i < count; i++) fork();
  if (adminAddress !== undefined)
    logger.info({ admin: adminAddress, workers: count }, 'ledger-proxy primary: admin listening, workers starting');

  process.on('SIGHUP', () => {
    for (const worker of connected()) worker.process.kill('SIGHUP');
  });
  /** Every worker drains, then the primary exits with `status`; its last line says why (`signal`) and how long the workers took. */
  function shutdown(signal: string, status = 0): void {
    if (stopping) return;
    stopping = true;
    const startedAt = performance.now();
    logger.info({ signal, drainDelayMs: config.server.drainDelayMs }, 'shutting down: not ready; every worker drains');
    const alive = connected();
    const exited = Promise.all(
      alive.map((w) => new Promise((resolve) => (w.isDead() ? resolve(undefined) : w.once('exit', resolve)))),
    );
    // Each worker fails its readiness, keeps accepting for drainDelayMs, then drains.
    for (const worker of alive) worker.process.kill('SIGTERM');
    const kill = setTimeout(
      () => {
        logger.error('workers did not exit in time; killing them');
        for (const worker of connected()) worker.process.kill('SIGKILL');
      },
      config.server.drainDelayMs + config.server.shutdownTimeoutMs + EXIT_GRACE_MS,
    );
    kill.unref();
    void exited.then(async () => {
      clearTimeout(kill);
      await admin?.close();
      const ms = Math.round(performance.now() - startedAt);
      logger.info(
        { signal, ms, workers: alive.length },
        `stopped on ${signal}: every worker drained and exited in ${ms} ms`,
      );
      exit(status);
    });
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

function connected(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
}

/** The admin listener of the primary: every worker's metrics, ready while every worker is, and purges that reach every worker. */
function adminFor(
  config: Config,
  logger: Logger,
  channel: WorkerChannel,
  count: number,
  stopping: () => boolean,
): FastifyInstance {
  const notReady: Readiness = { ready: false, upstreams: [] };
  // The purges are counted here, where they are asked for, and added to the workers' metrics.
  const own = new Registry();
  const purges = purgeCounter([own]);
  // The primary does not probe the nodes, so under vendor: auto it knows no vendor:
  // a purged request is parsed by the workers, and the route families are the same whatever the vendor.
  const vendor = vendorNames(config.vendor === 'auto' ? 'node' : config.vendor);
  const routes = readRoutes(vendor);
  return buildAdminServer({
    settings: config.admin,
    logger,
    metrics: { render: () => clusterMetrics(channel, count, METRICS_WAIT_MS, own) },
    // A load balancer's probe may land on any worker. A booting worker has not
    // said it answers yet: it is not ready, and nobody waits for it.
    readiness: async () => {
      if (stopping()) return { ...notReady, reason: SHUTTING_DOWN };
      const answers = await Promise.all(
        channel.workers().map((w) => channel.ask<Readiness>(w, 'readiness', READINESS_WAIT_MS)),
      );
      const all = answers.map((a) => a ?? notReady);
      const upstreams = all[0]?.upstreams ?? [];
      // Each worker has its own Redis clients: the first answering worker's say how Redis is.
      const redis = all[0]?.redis === undefined ? {} : { redis: all[0].redis };
      const unready = all.findIndex((a) => !a.ready);
      if (all.length === count && unready < 0) return { ready: true, upstreams, ...redis };
      const reason =
        unready < 0
          ? `${count - all.length} of ${count} workers not running`
          : `worker ${unready + 1} of ${count}: ${all[unready].reason ?? 'has not answered'}`;
      return { ready: false, reason, upstreams, ...redis };
    },
    headerNames: ledgerHeaderNames(vendor.headerPrefix),
    purge: {
      run: (scope) => purgeWorkers(channel, scope, config.cache.redis !== undefined),
      families: new Set(routes.map((r) => r.family)),
      logger,
      counted: (scope) => purges.labels(scope).inc(),
    },
  });
}
