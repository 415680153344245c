// The admin listener, apart from the public one so metrics are not public:
// /metrics (Prometheus), /healthz (the process is up), /readyz (a node is healthy).
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { NodeError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { ReplyWriter } from './reply.js';
import type { LedgerHeaderNames } from '../ledger/headers.js';

export interface AdminDeps {
  metrics: Metrics;
  ready(): boolean;
  /** per-node states, shown by /readyz so an operator sees why it is not ready */
  upstreams(): Array<{ name: string; state: string }>;
  headerNames: LedgerHeaderNames;
}

export function buildAdminServer(deps: AdminDeps): FastifyInstance {
  const app = Fastify({ logController: new LogController({ disableRequestLogging: true }) });
  const writer = new ReplyWriter(deps.headerNames);
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await deps.metrics.render();
    return reply.header('content-type', contentType).send(body);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const ready = deps.ready();
    return reply.code(ready ? 200 : 503).send({ ready, upstreams: deps.upstreams() });
  });
  app.setNotFoundHandler((request, reply) =>
    writer.error(reply, new NodeError(404, 'web_framework_error', `not found: ${request.method} ${request.url.split('?')[0]}`), null),
  );
  return app;
}
