// The admin listener, apart from the public one so metrics are not public:
// / (the endpoints, listed), /metrics (Prometheus), /healthz (the process is up),
// /readyz (a node is healthy), POST /cache/purge (purge.ts). Every request passes the guard first
// (guard.ts). With server.workers > 1 the primary serves it for every
// worker, built here too: one listener, one set of rules.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import { NodeError } from '../errors.js';
import { AdminGuard, type AdminSettings, bindsLoopbackOnly } from './guard.js';
import { fromFrameworkError, notFound } from '../http/framework-errors.js';
import { type PurgeRouteDeps, purgeReply } from './purge.js';
import { ReplyWriter } from '../reply/writer.js';
import type { LedgerHeaderNames } from '../ledger/headers.js';
import type { ProbeResult } from '../upstream/nodes/health.js';

/** The largest purge body read: a request to purge carries a read's body. */
const PURGE_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** What /readyz reports: ready or not, and each node's state and last probe, so an operator sees why. */
export interface Readiness {
  ready: boolean;
  /** while not ready: why, in words (shutting down, the vendor, the chain, or each node's last probe) */
  reason?: string;
  /** each node: its name, its url (origin and path; userinfo and query values hidden), its state and last probe */
  upstreams: Array<{ name: string; url: string; state: string; probe?: ProbeResult }>;
  /** each Redis client with cache.redis: up, backing_off or down; none of them makes the proxy unready */
  redis?: Array<{ client: string; state: string }>;
}

/** /readyz's reason while the chain is known and no node of it is healthy: each node's state, and what its probe got. */
export function noHealthyNode(upstreams: Readiness['upstreams']): string {
  const nodes = upstreams.map(({ name, state, probe }) =>
    probe?.ok === false ? `${name}: ${state}, its probe got ${probe.got}` : `${name}: ${state}`,
  );
  return `no node is healthy (${nodes.join('; ')})`;
}

/** /readyz's reason from the start of a shutdown: a load balancer stops sending before the drain. */
export const SHUTTING_DOWN = 'shutting down: draining the requests in flight';

export interface AdminDeps {
  /** config's admin section: where it listens, the Host names it answers, the purge token */
  settings: AdminSettings;
  logger: Logger;
  /** where admin.token given as `{env: VAR}` is read; process.env by default */
  env?: NodeJS.ProcessEnv;
  metrics: { render(): Promise<{ contentType: string; body: string }> };
  readiness(): Readiness | Promise<Readiness>;
  headerNames: LedgerHeaderNames;
  /** POST /cache/purge; absent: no such route */
  purge?: PurgeRouteDeps;
}

export function buildAdminServer(deps: AdminDeps): FastifyInstance {
  const app = Fastify({ logController: new LogController({ disableRequestLogging: true }) });
  const writer = new ReplyWriter(deps.headerNames, () => null);
  const guard = new AdminGuard(deps.settings, deps.logger, deps.env);
  if (!bindsLoopbackOnly(deps.settings.host) && !guard.tokenRequired) {
    deps.logger.warn(
      { host: deps.settings.host },
      'admin listener on a non-loopback address without admin.token: whoever reaches admin.port can purge the cache; set admin.token, or let only your monitoring reach the port',
    );
  }
  // Every error of the admin listener is node-shaped, written by the reply writer.
  const answerError = (reply: FastifyReply, err: NodeError | null): void => {
    if (err === null) return;
    reply.hijack();
    writer.error(reply.raw, err);
  };
  // Before routing, so a refused request learns nothing, not even which paths exist.
  app.addHook('onRequest', async (request, reply) => answerError(reply, guard.admit(request.raw)));
  // What the listener serves, so an operator who finds the port learns its endpoints from it.
  const endpoints = [
    { method: 'GET', path: '/', description: 'this list' },
    { method: 'GET', path: '/metrics', description: 'Prometheus metrics' },
    { method: 'GET', path: '/healthz', description: 'the process is up: 200 while it runs' },
    {
      method: 'GET',
      path: '/readyz',
      description: 'ready to serve: 200, or 503 with the reason; each upstream with its state and last probe',
    },
    ...(deps.purge === undefined
      ? []
      : [{ method: 'POST', path: '/cache/purge', description: 'purge cached answers (admin.token when set)' }]),
  ];
  app.get('/', async () => ({ service: 'ledger-proxy', endpoints }));
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
    // The body is read as bytes (the guard has checked its type): purge-body.ts parses it and says what is wrong.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PURGE_BODY_LIMIT_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    // Before the body is read: a purge without the token or in another type is refused unread.
    const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<void> =>
      answerError(reply, guard.purgeRefusal(request.raw));
    app.post('/cache/purge', { onRequest }, async (request, reply) => {
      const answer = await purgeReply(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0), purge);
      if (answer instanceof NodeError) return answerError(reply, answer);
      return reply.code(answer.status).send(answer.body);
    });
  }
  app.setErrorHandler((err, _request, reply) => answerError(reply, fromFrameworkError(err, PURGE_BODY_LIMIT_BYTES)));
  app.setNotFoundHandler((request, reply) => answerError(reply, notFound(request.raw)));
  return app;
}
