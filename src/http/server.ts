// The public listener: fastify with raw-body parsing, the served endpoints, and
// every framework failure rendered as a node error body.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerFactory } from 'fastify';
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { NodeError } from '../errors.js';
import { fromClientError, fromFrameworkError } from './framework-errors.js';
import { protocolError, rawErrorResponse, writeRawError, type ReplyWriter } from './reply.js';
import { registerReadRoutes, type ReadRoutesDeps } from './read-routes.js';
import { registerRateLimit, type RateLimitSettings } from './rate-limit.js';
import { serveUpgradesAsPlainHttp } from './upgrade.js';
import { withFastHits, type FastHitsDeps } from './fast-hits.js';

export interface HttpServerOptions extends ReadRoutesDeps {
  bodyLimitBytes: number;
  trustProxy: boolean | number | string;
  writer: ReplyWriter;
  /** registers the passthrough of other /v1 routes, when enabled */
  passthrough?: (app: FastifyInstance) => Promise<void> | void;
  /** per-client rate limiting, when enabled */
  rateLimit?: RateLimitSettings;
  /** told of every reply sent, for the request log and metrics */
  onResponse?: (request: FastifyRequest, reply: FastifyReply) => void;
  /** answers memory hits before fastify (off with rate limiting, which must see every request) */
  fastHits?: FastHitsDeps;
}

export async function buildHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const { writer, bodyLimitBytes } = options;
  const app = Fastify({
    // No logger for fastify itself: it would build a child logger per request, and
    // every line worth writing (one per request, errors) is written by us.
    bodyLimit: bodyLimitBytes,
    trustProxy: toTrustProxy(options.trustProxy),
    return503OnClosing: false,
    // Node would answer a missing Host itself with an empty 400; the routes answer
    // it with the error body (protocolError), in their handlers rather than in a
    // hook that every request would pay for.
    http: { requireHostHeader: false },
    // No length limit on a path parameter: a longer one makes the router miss the
    // route, and the request would fall through to the passthrough and reach a node.
    routerOptions: { maxParamLength: Number.MAX_SAFE_INTEGER, ignoreDuplicateSlashes: false },
    frameworkErrors: (err, _request, reply) => writer.error(reply, fromFrameworkError(err, bodyLimitBytes), null),
    clientErrorHandler: (err, socket) => answerClientError(err as { code?: string }, socket),
    ...(options.fastHits ? { serverFactory: fastHitServerFactory(options.fastHits) } : {}),
  });

  // CONNECT would otherwise get its socket dropped without a reply.
  app.server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.end(rawErrorResponse(NodeError.badRequest('CONNECT is not supported: this is a ledger node API, not a forward proxy')));
  });
  serveUpgradesAsPlainHttp(app.server);
  // Node answers an Expect other than 100-continue with an empty 417 (not an allowed status).
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    writeRawError(res, NodeError.badRequest(`unsupported Expect header: ${JSON.stringify(req.headers.expect ?? '')}`));
  });

  // Bodies stay raw bytes: the routes validate them, and forward the client's own.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: bodyLimitBytes }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err, _request, reply) => writer.error(reply, fromFrameworkError(err, bodyLimitBytes), null));
  app.setNotFoundHandler((request, reply) =>
    writer.error(reply, protocolError(request) ?? new NodeError(404, 'web_framework_error', `not found: ${request.method} ${request.url.split('?')[0]}`), null),
  );

  const onResponse = options.onResponse;
  if (onResponse) {
    app.addHook('onResponse', (request, reply, done) => {
      onResponse(request, reply);
      done();
    });
  }
  // Before the routes: the limit applies to routes registered after it.
  if (options.rateLimit) await registerRateLimit(app, options.rateLimit);
  registerReadRoutes(app, options, options.fastHits !== undefined);
  if (options.passthrough) await options.passthrough(app);
  return app;
}

/**
 * The server fastify would build (getServerInstance in fastify/lib/server.js, with
 * the same settings from its options), whose request handler answers memory hits
 * itself and passes everything else to fastify's.
 */
function fastHitServerFactory(deps: FastHitsDeps): FastifyServerFactory {
  return (handler, options) => {
    const opts = options as { http?: ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
    const server = createServer(opts.http ?? {}, withFastHits(deps, handler));
    server.keepAliveTimeout = opts.keepAliveTimeout;
    server.requestTimeout = opts.requestTimeout;
    server.setTimeout(opts.connectionTimeout);
    if (opts.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket;
    return server;
  };
}

/** A hop count becomes proxy-addr's "trust the first n hops" function. */
function toTrustProxy(setting: boolean | number | string): boolean | string | ((addr: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting;
  return (_addr, hop) => hop < setting;
}

/**
 * Stops accepting, lets requests in flight finish, and closes keep-alive
 * connections as soon as they fall idle (server.close() alone closes only those
 * idle at the moment it is called; the rest would linger for the keep-alive timeout).
 */
export async function closeGracefully(app: FastifyInstance): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
  }
}

const IDLE_SWEEP_MS = 25;

/**
 * Bytes the parser cannot read. When they follow a complete request on the same
 * connection (pipelined garbage, a body longer than its Content-Length), that
 * request's reply goes first; then the 400, or for bytes after "Connection:
 * close" nothing, and the connection ends.
 */
function answerClientError(err: { code?: string }, socket: Duplex): void {
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    if (!socket.writable || err.code === 'ECONNRESET') socket.destroy();
    else if (err.code === 'HPE_CLOSED_CONNECTION') socket.end();
    else socket.end(rawErrorResponse(fromClientError(err)));
  };
  // Node keeps the response in progress on the socket (no public accessor). Only
  // a request received whole is waited for: one whose own body broke never ends.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight && !inFlight.writableFinished && inFlight.req?.complete) {
    inFlight.once('finish', finish);
    inFlight.once('close', finish);
  } else {
    finish();
  }
}
