// The public listener: Node's HTTP server whose every request enters the public
// entry (entry.ts), with fastify behind it for everything that is not a cached
// route (passthrough, unknown routes), and every framework failure rendered as a
// node error body by the reply writer (reply/writer.ts).
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerFactory } from 'fastify';
import { NodeError } from '../errors.js';
import { answerClientError, Connections, drainingServers } from './connections.js';
import type { PublicEntry } from './entry.js';
import type { PublicHandler } from '../edge/message.js';
import { fromFrameworkError, notFound } from './framework-errors.js';
import { rawErrorResponse, type ReplyWriter } from '../reply/writer.js';
import { serveUpgradesAsPlainHttp } from './upgrade.js';
import { Lane } from './lane/lane.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpServerOptions {
  bodyLimitBytes: number;
  /** server.requestTimeoutMs: the whole request, headers included; 0 = no limit */
  requestTimeoutMs: number;
  /** server.lane: the requests of cached routes are read off the socket by the lane (lane/) */
  lane: boolean;
  trustProxy: boolean | number | string;
  writer: ReplyWriter;
  /** the public entry, given fastify's handler for what it does not answer itself, and the server's connections */
  entry(next: Handler, connections: Connections): PublicEntry;
  /** registers the passthrough of other /v1 routes, when enabled */
  passthrough?: (app: FastifyInstance) => Promise<void> | void;
}

export async function buildHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const { writer, bodyLimitBytes } = options;
  const connections = new Connections();
  let entry: PublicEntry | undefined;
  let onRequest: PublicHandler | undefined;
  /** fastify's replies of the proxy's own errors go through the reply writer */
  const refuse = (reply: FastifyReply, err: NodeError): void => {
    reply.hijack();
    writer.error(reply.raw, err);
  };
  const app = Fastify({
    // No logger for fastify itself: it would build a child logger per request, and
    // every line worth writing (one per request, errors) is written by us.
    bodyLimit: bodyLimitBytes,
    trustProxy: toTrustProxy(options.trustProxy),
    return503OnClosing: false,
    // The entry answers a missing Host (framing.ts) with the error body; Node would answer it with an empty 400.
    http: { requireHostHeader: false },
    // No length limit on a path parameter, and no slash folding: what a client sends is what is refused or forwarded.
    routerOptions: { maxParamLength: Number.MAX_SAFE_INTEGER, ignoreDuplicateSlashes: false },
    frameworkErrors: (err, _request, reply) => refuse(reply, fromFrameworkError(err, bodyLimitBytes)),
    clientErrorHandler: (err, socket) => answerClientError(err as { code?: string }, socket, connections),
    requestTimeout: options.requestTimeoutMs,
    serverFactory: serverFactory(connections, (next) => {
      entry = options.entry(next, connections);
      const { handle } = entry;
      onRequest = (req, res) => {
        if (connections.answers(req, res)) handle(req, res);
      };
      return onRequest;
    }),
  });
  // The lane reads the sockets first and gives the requests it takes to the server's own handler.
  const lane = options.lane
    ? Lane.install(app.server, { handle: onRequest!, servesItself: entry!.servesItself, bodyLimitBytes })
    : undefined;

  // CONNECT would otherwise get its socket dropped without a reply.
  app.server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.end(
      rawErrorResponse(
        NodeError.badRequest('CONNECT is not supported: this is a ledger node API, not a forward proxy'),
      ),
    );
  });
  serveUpgradesAsPlainHttp(app.server);
  // Node answers an Expect other than 100-continue with an empty 417 (not an allowed status).
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    entry!.refuse(
      req,
      res,
      NodeError.badRequest(`unsupported Expect header: ${JSON.stringify(req.headers.expect ?? '')}`),
    );
  });

  // Bodies stay raw bytes: passthrough forwards the client's own.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: bodyLimitBytes }, (_req, body, done) =>
    done(null, body),
  );
  app.setErrorHandler((err, _request, reply) => refuse(reply, fromFrameworkError(err, bodyLimitBytes)));
  app.setNotFoundHandler((request, reply) => refuse(reply, notFound(request.raw)));
  if (options.passthrough) await options.passthrough(app);
  drainingServers.set(app, {
    drain: () => {
      connections.drain();
      lane?.drain();
    },
    closeAll: () => lane?.closeAll(),
  });
  return app;
}

/** How often Node checks requests against requestTimeout (its default, 30 s, would let a slow client overstay it). */
function checkingIntervalMs(requestTimeoutMs: number): number {
  return requestTimeoutMs > 0 ? Math.min(1000, Math.max(50, Math.floor(requestTimeoutMs / 4))) : 30_000;
}

/**
 * The server fastify would build (getServerInstance in fastify/lib/server.js, with
 * the same settings from its options), whose request handler (`handlerOf`: it
 * tracks connections and hands every request to the public entry, which passes
 * what it does not answer to fastify's handler) is made from fastify's.
 */
function serverFactory(connections: Connections, handlerOf: (next: Handler) => PublicHandler): FastifyServerFactory {
  return (handler, options) => {
    const opts = options as {
      http?: ServerOptions;
      keepAliveTimeout: number;
      requestTimeout: number;
      connectionTimeout: number;
      maxRequestsPerSocket: number;
    };
    const server = createServer(
      { ...opts.http, connectionsCheckingInterval: checkingIntervalMs(opts.requestTimeout) },
      handlerOf(handler as Handler),
    );
    server.on('connection', (socket: Duplex) => connections.open(socket));
    // A client's half-close ends its connection once every request read before it is answered: with
    // httpAllowHalfOpen off, node:http ends the socket on the FIN and the replies still due are never
    // written (socketOnEnd in Node's lib/_http_server.js). The lane takes a half-close the same way.
    (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
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

export { closeGracefully } from './connections.js';
