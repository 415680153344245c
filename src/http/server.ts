// The public listener: fastify with raw-body parsing, the served endpoints, and
// every framework failure rendered as a node error body.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerFactory } from 'fastify';
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { NodeError } from '../errors.js';
import { fromClientError, fromFrameworkError } from './framework-errors.js';
import { protocolError, rawErrorResponse, writeRawError, type ReplyWriter } from './reply.js';
import { registerReadRoutes, type ReadRoutesDeps } from './read-routes.js';
import type { ClientRateLimiter } from './rate-limit.js';
import { serveUpgradesAsPlainHttp } from './upgrade.js';
import { withFastHits, type FastHitsDeps } from './fast-hits.js';

export interface HttpServerOptions extends ReadRoutesDeps {
  bodyLimitBytes: number;
  /** server.requestTimeoutMs: the whole request, headers included; 0 = no limit */
  requestTimeoutMs: number;
  trustProxy: boolean | number | string;
  writer: ReplyWriter;
  /** registers the passthrough of other /v1 routes, when enabled */
  passthrough?: (app: FastifyInstance) => Promise<void> | void;
  /** per-client rate limiting, when enabled (the fast path checks it too) */
  rateLimit?: ClientRateLimiter;
  /** told of every reply sent, for the request log and metrics */
  onResponse?: (request: FastifyRequest, reply: FastifyReply) => void;
  /** answers memory hits before fastify (off with rate limiting, which must see every request) */
  fastHits?: FastHitsDeps;
}

export async function buildHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const { writer, bodyLimitBytes } = options;
  const connections = new Connections();
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
    clientErrorHandler: (err, socket) => answerClientError(err as { code?: string }, socket, connections),
    requestTimeout: options.requestTimeoutMs,
    serverFactory: serverFactory(connections, options.fastHits, bodyLimitBytes),
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

  // The proxy's own refusals (rate limit, a 5xx of its own) carry the freshest
  // snapshot it knows (SPEC §8); input errors carry none, as a node's don't.
  app.setErrorHandler((err, _request, reply) => {
    const refused = fromFrameworkError(err, bodyLimitBytes);
    writer.error(reply, refused, refused.status >= 500 ? options.watermark.current() : null);
  });
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
  // Every request is counted once, before anything else is done for it; one the
  // fast path counted already is not counted again.
  const limiter = options.rateLimit;
  if (limiter) {
    app.addHook('onRequest', (request, reply, done) => {
      const refused = limiter.admit(request.raw);
      if (refused === null) return done();
      writer.error(reply, refused, options.watermark.current());
    });
  }
  registerReadRoutes(app, options, options.fastHits !== undefined);
  if (options.passthrough) await options.passthrough(app);
  drainingServers.set(app, () => connections.drain());
  return app;
}

/**
 * What the server knows of its connections, kept by its own request handler
 * (Node exposes neither): the reply in progress on each socket, and whether the
 * server is draining, when every reply closes its connection.
 */
class Connections {
  private draining = false;
  /** open connections, tracked per connection (not per request: hits stay cheap) */
  private readonly sockets = new Set<Duplex>();
  /** the latest reply begun on each connection */
  private readonly replying = new WeakMap<Duplex, ServerResponse>();

  /** A connection opened: it is known until it closes. */
  open(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  track(req: IncomingMessage, res: ServerResponse): void {
    if (this.draining) res.setHeader('connection', 'close');
    this.replying.set(req.socket, res);
  }

  /** From now on every reply closes its connection, those in progress included. */
  drain(): void {
    this.draining = true;
    for (const socket of this.sockets) {
      const res = this.replying.get(socket);
      if (res !== undefined && !res.headersSent) res.setHeader('connection', 'close');
    }
  }

  /** The reply in progress on `socket`, if any. */
  inFlight(socket: Duplex): ServerResponse | undefined {
    const res = this.replying.get(socket);
    return res !== undefined && !res.writableFinished ? res : undefined;
  }
}

/** How often Node checks requests against requestTimeout (its default, 30 s, would let a slow client overstay it). */
function checkingIntervalMs(requestTimeoutMs: number): number {
  return requestTimeoutMs > 0 ? Math.min(1000, Math.max(50, Math.floor(requestTimeoutMs / 4))) : 30_000;
}

/**
 * The server fastify would build (getServerInstance in fastify/lib/server.js, with
 * the same settings from its options), whose request handler tracks connections
 * and answers memory hits itself, passing everything else to fastify's.
 */
function serverFactory(connections: Connections, fastHits: FastHitsDeps | undefined, bodyLimitBytes: number): FastifyServerFactory {
  return (handler, options) => {
    const opts = options as { http?: ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
    const inner = fastHits ? withFastHits(fastHits, handler, bodyLimitBytes) : handler;
    const server = createServer({ ...opts.http, connectionsCheckingInterval: checkingIntervalMs(opts.requestTimeout) }, (req, res) => {
      connections.track(req, res);
      inner(req, res);
    });
    server.on('connection', (socket: Duplex) => connections.open(socket));
    server.keepAliveTimeout = opts.keepAliveTimeout;
    server.requestTimeout = opts.requestTimeout;
    // Headers are part of the request: a client trickling them gets no longer.
    if (opts.requestTimeout > 0) server.headersTimeout = opts.requestTimeout;
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
 * idle at the moment it is called; the rest would linger for the keep-alive
 * timeout). Every reply sent from now on says `Connection: close`. At
 * `deadlineMs` the connections still open are closed, whatever the clients do.
 */
export async function closeGracefully(app: FastifyInstance, deadlineMs: number): Promise<void> {
  drainingServers.get(app)?.();
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  const deadline = setTimeout(() => app.server.closeAllConnections(), deadlineMs);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
}

/** How closeGracefully tells a server built here that it is draining. */
const drainingServers = new WeakMap<FastifyInstance, () => void>();

const IDLE_SWEEP_MS = 25;

/**
 * Bytes the parser cannot read. When they follow a complete request on the same
 * connection (pipelined garbage, a body longer than its Content-Length), that
 * request's reply goes first; then the 400, or for bytes after "Connection:
 * close" nothing, and the connection ends.
 */
function answerClientError(err: { code?: string }, socket: Duplex, connections: Connections): void {
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    if (!socket.writable || err.code === 'ECONNRESET') socket.destroy();
    else if (err.code === 'HPE_CLOSED_CONNECTION') socket.end();
    else socket.end(rawErrorResponse(fromClientError(err)));
  };
  // Only a request received whole is waited for: one whose own body broke never ends.
  const inFlight = connections.inFlight(socket);
  if (inFlight && !inFlight.writableFinished && inFlight.req?.complete) {
    inFlight.once('finish', finish);
    inFlight.once('close', finish);
  } else {
    finish();
  }
}
