// The public listener's request handler: every request enters here. The edge
// runs once for each (CORS, limits); a request for a cached route is then parsed
// by the read parser and answered by the read responder (responder/), in whatever framing it
// came (Content-Length, chunked, HTTP/1.0, after 100-continue), and whichever
// transport carried it (node:http, or the lane: lane/). Everything else
// (passthrough, unknown routes, which the lane never takes) goes on to fastify, carrying the same exchange, so
// its reply gets the edge's headers and the same accounting.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeError } from '../errors.js';
import type { Accounting } from '../reply/accounting.js';
import { readBody } from './body.js';
import type { Connections } from './connections.js';
import type { Edge } from '../edge/edge.js';
import { type Exchange, openExchange } from '../edge/exchange.js';
import type { PublicHandler, PublicReply, PublicRequest } from '../edge/message.js';
import { framingError } from './framing.js';
import { notFound } from './framework-errors.js';
import type { ReadParser } from '../responder/read-parser.js';
import type { RequestIds } from '../edge/request-id.js';
import { openRequestSpan } from '../reply/request-span.js';
import type { ReadResponder } from '../responder/responder.js';
import type { Tracing } from '../tracing/scope.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface EntryDeps {
  requestIds: RequestIds;
  parser: ReadParser;
  responder: ReadResponder;
  edge: Edge;
  account: Accounting;
  bodyLimitBytes: number;
  /** the server's connections: a reply that ends one is the last thing done on it */
  connections: Pick<Connections, 'endWith'>;
  /** while tracing is on (tracing.otlpEndpoint): every request gets a span */
  tracing?: Tracing;
}

const EMPTY = Buffer.alloc(0);
const V1 = /^\/v1(?:[/?]|$)/;

export interface PublicEntry {
  /** the request handler */
  handle: PublicHandler;
  /** answers a request Node refuses before the handler runs (an Expect it cannot meet), through the edge */
  refuse(req: PublicRequest, res: PublicReply, err: NodeError): void;
  /** whether a request line is one the entry serves itself (a cached route), not fastify: the only ones the lane takes */
  servesItself(method: string, url: string): boolean;
}

/** `next`: fastify's handler, for everything that is not a cached route. */
export function publicEntry(deps: EntryDeps, next: Handler): PublicEntry {
  const { requestIds, parser, responder, edge, account, bodyLimitBytes, connections, tracing } = deps;

  const delegate = (exchange: Exchange): void => delegated(deps, next, exchange);

  /** An error reply after which nothing more is read from the connection: the rest of what the client sent cannot be taken for a request. */
  const refuseAndEnd = (exchange: Exchange, err: NodeError): void => {
    connections.endWith(exchange.res);
    responder.refuse(exchange, err, { close: true });
  };

  const serve = (exchange: Exchange, method: string, url: string, body: Buffer): void => {
    const parsed = parser.parse(exchange.req, method, url, body);
    if (parsed === undefined) return responder.refuse(exchange, notFound(exchange.req));
    if (parsed.read === undefined) {
      exchange.endpoint = parsed.family;
      return responder.refuse(exchange, parsed.error);
    }
    responder.respond(exchange, parsed);
  };

  /**
   * Every request's start, whichever path answers it: its exchange, its span, and a
   * CORS preflight answered by the edge (and accounted), which leaves nothing to serve.
   */
  const open = (req: PublicRequest, res: PublicReply, endpoint: string): Exchange | undefined => {
    const exchange = openExchange(req, res, endpoint, requestIds.of(req));
    if (tracing !== undefined) openRequestSpan(tracing, exchange);
    if (!edge.answeredPreflight(exchange)) return exchange;
    account(exchange, res.statusCode);
    return undefined;
  };

  const handle: PublicHandler = (req, res) => {
    const url = req.url ?? '';
    // HEAD of a cached GET route is its hit without the body (Node sends no body to a HEAD).
    const method = req.method === 'HEAD' ? 'GET' : req.method!;
    // The lane found it already: it takes no other request.
    const cached =
      req.servedByEntry === true || ((method === 'GET' || method === 'POST') && parser.mayMatch(method, url));
    const exchange = open(req, res, cached || !V1.test(url) ? 'other' : 'passthrough');
    if (exchange === undefined) return;
    const refused = framingError(req) ?? edge.admit(exchange);
    if (refused !== null) {
      if (cached) exchange.endpoint = parser.familyOf(method, url);
      // A body in a transfer coding the proxy cannot undo has no known end: nothing after the head is read.
      return refused.reason === 'not_implemented'
        ? refuseAndEnd(exchange, refused)
        : responder.refuse(exchange, refused);
    }
    if (!cached) return delegate(exchange);
    if (method === 'GET') return serve(exchange, method, url, EMPTY);
    // The lane reads a body before the entry sees its request; node:http's requests stream theirs.
    if (req.body !== undefined) return serve(exchange, method, url, req.body);
    readBody(req as IncomingMessage, bodyLimitBytes, (body) => {
      // A body that broke is answered by the server's client-error handler, or by no one (the client left).
      if (body === null) return;
      if (body instanceof NodeError) {
        exchange.endpoint = parser.familyOf(method, url);
        return refuseAndEnd(exchange, body);
      }
      serve(exchange, method, url, body);
    });
  };

  const refuse = (req: PublicRequest, res: PublicReply, err: NodeError): void => {
    // A preflight is answered before its Expect is judged, as on every other path.
    const exchange = open(req, res, 'other');
    if (exchange !== undefined) refuseAndEnd(exchange, err);
  };

  const servesItself = (method: string, url: string): boolean => {
    const asked = method === 'HEAD' ? 'GET' : method;
    return (asked === 'GET' || asked === 'POST') && parser.mayMatch(asked, url);
  };

  return { handle, refuse, servesItself };
}

/** What fastify serves (passthrough, unknown routes), with the exchange's edge headers, and accounted once its reply is done. */
function delegated(deps: EntryDeps, next: Handler, exchange: Exchange): void {
  const { req, res } = exchange;
  // Passthrough always needs a node: a tenant whose node units are spent is refused before it goes.
  const spent = exchange.endpoint === 'passthrough' ? deps.edge.nodeWorkRefusal(exchange) : null;
  if (spent !== null) return deps.responder.refuse(exchange, spent);
  const extra = exchange.edgeHeaders;
  // fastify writes its replies with writeHead(status, object), which keeps headers set here.
  res.setHeader('x-request-id', exchange.requestId);
  if (extra !== undefined) for (let i = 0; i < extra.length; i += 2) res.setHeader(extra[i]!, extra[i + 1]!);
  if (exchange.vary !== undefined) res.setHeader('vary', exchange.vary);
  res.once('close', () => deps.account(exchange, res.statusCode));
  // Only node:http's requests come here: the lane takes no request that fastify serves.
  next(req as IncomingMessage, res as ServerResponse);
}
