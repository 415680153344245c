// server.workers > 1: a primary that forks the workers (each a whole proxy with
// its own memory tier, sharing the port and Redis), serves the admin listener for
// all of them (metrics aggregated, readiness asked of each), relays SIGHUP, and on
// SIGTERM fails readiness, drains every worker and exits.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from './config/index.js';
import { buildAdminServer, type Readiness } from './http/admin.js';
import { ledgerHeaderNames } from './ledger/headers.js';
import { vendorNames } from './wire/vendor.js';

/** How many workers `server.workers` asks for. */
export function workerCount(setting: Config['server']['workers']): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

const READINESS_REQ = 'ledger-proxy:readiness?';
const READINESS_RES = 'ledger-proxy:readiness';
/** A worker that does not say whether it is ready within this counts as not ready. */
const READINESS_WAIT_MS = 1000;
/** A worker that died is replaced after this, so a crash loop does not spin. */
const RESTART_DELAY_MS = 1000;
/** After the drain deadline, how long workers may take to exit before they are killed. */
const EXIT_GRACE_MS = 2000;

interface ReadinessAnswer extends Readiness {
  type: typeof READINESS_RES;
  id: number;
}

/** In a worker: the primary aggregates this registry, and asks this readiness. */
export function serveAsWorker(registry: Registry, readiness: () => Readiness): void {
  AggregatorRegistry.setRegistries([registry]);
  // prom-client installs a worker's answer to the primary's metrics requests only
  // when an AggregatorRegistry is constructed, in the worker too.
  new AggregatorRegistry();
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type !== READINESS_REQ) return;
    const answer: ReadinessAnswer = { type: READINESS_RES, id: message.id!, ...readiness() };
    process.send?.(answer);
  });
}

/** `exit` flushes the log, then ends the process. */
export async function runPrimary(config: Config, logger: Logger, count: number, exit: (code: number) => never): Promise<void> {
  let stopping = false;
  const fork = (): void => {
    if (!stopping) cluster.fork();
  };
  cluster.on('online', (worker) => logger.info({ worker: worker.id, pid: worker.process.pid }, 'worker started'));
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error({ worker: worker.id, code, signal }, 'worker exited; starting another');
    setTimeout(fork, RESTART_DELAY_MS).unref();
  });
  for (let i = 0; i < count; i++) fork();

  const workers = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
  const aggregator = new AggregatorRegistry();
  let nextId = 0;
  const askReadiness = (worker: Worker): Promise<Readiness> =>
    new Promise((resolve) => {
      const id = nextId++;
      const timer = setTimeout(() => done({ ready: false, upstreams: [] }), READINESS_WAIT_MS);
      const onMessage = (message: ReadinessAnswer): void => {
        if (message?.type === READINESS_RES && message.id === id) done({ ready: message.ready, upstreams: message.upstreams });
      };
      const done = (r: Readiness): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        resolve(r);
      };
      worker.on('message', onMessage);
      worker.send({ type: READINESS_REQ, id });
    });
  const admin =
    config.admin.port !== 0
      ? buildAdminServer({
          metrics: { render: async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }) },
          // Ready while every worker is: a load balancer's probe may land on any of them.
          readiness: async () => {
            const answers = stopping ? [] : await Promise.all(workers().map(askReadiness));
            return { ready: answers.length === count && answers.every((a) => a.ready), upstreams: answers[0]?.upstreams ?? [] };
          },
          headerNames: ledgerHeaderNames(vendorNames(config.vendor).headerPrefix),
        })
      : undefined;
  if (admin) {
    const address = await admin.listen({ host: config.admin.host, port: config.admin.port });
    logger.info({ admin: address, workers: count }, 'ledger-proxy primary: admin listening, workers starting');
  }

  process.on('SIGHUP', () => {
    for (const worker of workers()) worker.process.kill('SIGHUP');
  });
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining every worker');
    const alive = workers();
    const exited = Promise.all(alive.map((w) => new Promise((resolve) => (w.isDead() ? resolve(undefined) : w.once('exit', resolve)))));
    for (const worker of alive) worker.process.kill('SIGTERM');
    const kill = setTimeout(() => {
      logger.error('workers did not exit in time; killing them');
      for (const worker of workers()) worker.process.kill('SIGKILL');
    }, config.server.shutdownTimeoutMs + EXIT_GRACE_MS);
    kill.unref();
    void exited.then(async () => {
      clearTimeout(kill);
      await admin?.close();
      exit(0);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
