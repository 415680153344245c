// The admin listener, apart from the public one so metrics are not public:
// /metrics (Prometheus), /healthz (the process is up), /readyz (a node is healthy).
// With server.workers > 1 the primary serves it for every worker.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { notFound } from './framework-errors.js';
import { ReplyWriter } from './reply.js';
import type { LedgerHeaderNames } from '../ledger/headers.js';

/** What /readyz reports: ready or not, and each node's state so an operator sees why. */
export interface Readiness {
  ready: boolean;
  upstreams: Array<{ name: string; state: string }>;
}

export interface AdminDeps {
  metrics: { render(): Promise<{ contentType: string; body: string }> };
  readiness(): Readiness | Promise<Readiness>;
  headerNames: LedgerHeaderNames;
}

export function buildAdminServer(deps: AdminDeps): FastifyInstance {
  const app = Fastify({ logController: new LogController({ disableRequestLogging: true }) });
  const writer = new ReplyWriter(deps.headerNames, () => null);
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await deps.metrics.render();
    return reply.header('content-type', contentType).send(body);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const readiness = await deps.readiness();
    return reply.code(readiness.ready ? 200 : 503).send(readiness);
  });
  app.setNotFoundHandler((request, reply) => {
    reply.hijack();
    writer.error(reply.raw, notFound(request.raw));
  });
  return app;
}
