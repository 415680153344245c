// The cached routes (routes/table.ts), one fastify route per descriptor: parse,
// read through, reply. Every descriptor is served by the same handler.
import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import { NodeError } from '../errors.js';
import type { Watermark } from '../ledger/watermark.js';
import type { RawRead, RouteDescriptor } from '../routes/route.js';
import { acceptsGzip } from '../serve/compress.js';
import type { ReadResult, ReadThrough } from '../serve/read-through.js';
import type { ReadRequest } from '../wire/read-request.js';
import { preReadBody } from './fast-hits.js';
import { protocolError, type ReplyWriter } from './reply.js';

export interface ReadRoutesDeps {
  reads: ReadThrough;
  watermark: Watermark;
  routes: readonly RouteDescriptor[];
  writer: ReplyWriter;
}

/** What the request log and metrics learn of a served read. */
export interface ServedRead {
  /** the route family (metrics label) */
  endpoint: string;
  upstream?: string;
  tier?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    served?: ServedRead;
  }
}

function rawRead(request: FastifyRequest): RawRead {
  const body = request.body;
  return {
    params: (request.params ?? {}) as RawRead['params'],
    query: (request.query ?? {}) as RawRead['query'],
    contentType: request.headers['content-type'],
    accept: request.headers.accept,
    body: Buffer.isBuffer(body) ? body : Buffer.alloc(0),
  };
}

export function registerReadRoutes(app: FastifyInstance, deps: ReadRoutesDeps, afterFastHits = false): void {
  const { reads, watermark, writer } = deps;

  const serve = (route: RouteDescriptor) => (request: FastifyRequest, reply: FastifyReply) => {
    let req: ReadRequest;
    try {
      const refused = protocolError(request);
      if (refused !== null) throw refused;
      req = route.parse(rawRead(request));
    } catch (err) {
      // A refused read is still a read of this route (metrics and the request log).
      request.served = { endpoint: route.family };
      // Input errors carry no ledger headers, as a node's don't.
      return writer.error(reply, NodeError.from(err), null);
    }
    const done = (result: ReadResult): FastifyReply => {
      request.served = { endpoint: route.family, upstream: result.upstream, tier: result.tier };
      return writer.result(reply, result, result.gzip !== undefined && acceptsGzip(request.headers['accept-encoding']));
    };
    // The proxy's own errors carry the freshest snapshot it knows.
    const failed = (err: unknown): FastifyReply => {
      request.served = { endpoint: route.family };
      return writer.error(reply, NodeError.from(err), watermark.current());
    };
    try {
      const result = reads.read(req);
      return result instanceof Promise ? result.then(done, failed) : done(result);
    } catch (err) {
      return failed(err);
    }
  };

  // Behind the fast path, a request it read but did not answer comes with its body already read.
  const preParsing: preParsingHookHandler | undefined = afterFastHits ? (request, _reply, payload, done) => done(null, preReadBody(request, payload)) : undefined;
  for (const route of deps.routes) {
    app.route({ method: route.method, url: route.url, preParsing: route.method === 'POST' ? preParsing : undefined, handler: serve(route) });
  }
}
