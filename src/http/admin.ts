// The admin listener, apart from the public one so metrics are not public:
// /metrics (Prometheus), /healthz (the process is up), /readyz (a node is healthy),
// POST /cache/purge (purge.ts). With server.workers > 1 the primary serves it for
// every worker.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { NodeError } from '../errors.js';
import { fromFrameworkError, notFound } from './framework-errors.js';
import { type PurgeRouteDeps, purgeReply } from './purge.js';
import { ReplyWriter } from './reply.js';
import type { LedgerHeaderNames } from '../ledger/headers.js';

/** The largest purge body read: a request to purge carries a read's body. */
const PURGE_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** What /readyz reports: ready or not, and each node's state so an operator sees why. */
export interface Readiness {
  ready: boolean;
  upstreams: Array<{ name: string; state: string }>;
}

export interface AdminDeps {
  metrics: { render(): Promise<{ contentType: string; body: string }> };
  readiness(): Readiness | Promise<Readiness>;
  headerNames: LedgerHeaderNames;
  /** POST /cache/purge; absent: no such route */
  purge?: PurgeRouteDeps;
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
  const purge = deps.purge;
  if (purge !== undefined) {
    // The body is read as bytes whatever its content type: purge-body.ts parses it and says what is wrong.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PURGE_BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));
    app.post('/cache/purge', async (request, reply) => {
      const answer = await purgeReply(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0), purge);
      if (answer instanceof NodeError) {
        reply.hijack();
        writer.error(reply.raw, answer);
        return;
      }
      return reply.code(answer.status).send(answer.body);
    });
  }
  app.setErrorHandler((err, _request, reply) => {
    reply.hijack();
    writer.error(reply.raw, fromFrameworkError(err, PURGE_BODY_LIMIT_BYTES));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.hijack();
    writer.error(reply.raw, notFound(request.raw));
  });
  return app;
}
