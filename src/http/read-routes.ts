// POST /v1/tables/{handle}/raw_item and POST /v1/view: parse, read through, reply.
import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import { NodeError } from '../errors.js';
import type { Watermark } from '../ledger/watermark.js';
import { acceptsGzip } from '../serve/compress.js';
import type { ReadResult, ReadThrough } from '../serve/read-through.js';
import type { ReadRequest } from '../wire/read-request.js';
import type { VendorNames } from '../wire/vendor.js';
import { parseRawItem, parseView, type RawRead } from './parse-read.js';
import { preReadBody } from './fast-hits.js';
import { protocolError, type ReplyWriter } from './reply.js';

export interface ReadRoutesDeps {
  reads: ReadThrough;
  watermark: Watermark;
  vendor: VendorNames;
  writer: ReplyWriter;
}

/** What the request log and metrics learn of a served read. */
export interface ServedRead {
  endpoint: ReadRequest['endpoint'];
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
    handle: (request.params as { handle?: string }).handle,
    query: (request.query ?? {}) as Record<string, unknown>,
    contentType: request.headers['content-type'],
    accept: request.headers.accept,
    body: Buffer.isBuffer(body) ? body : Buffer.alloc(0),
  };
}

export function registerReadRoutes(app: FastifyInstance, deps: ReadRoutesDeps, afterFastHits = false): void {
  const { reads, watermark, vendor, writer } = deps;

  const serve = (endpoint: ReadRequest['endpoint'], parse: (raw: RawRead) => ReadRequest) => (request: FastifyRequest, reply: FastifyReply) => {
    let req: ReadRequest;
    try {
      const refused = protocolError(request);
      if (refused !== null) throw refused;
      req = parse(rawRead(request));
    } catch (err) {
      // A refused read is still a read of this endpoint (metrics and the request log).
      request.served = { endpoint };
      // Input errors carry no ledger headers, as a node's don't.
      return writer.error(reply, NodeError.from(err), null);
    }
    const done = (result: ReadResult): FastifyReply => {
      request.served = { endpoint: req.endpoint, upstream: result.upstream, tier: result.tier };
      return writer.result(reply, result, result.gzip !== undefined && acceptsGzip(request.headers['accept-encoding']));
    };
    // The proxy's own errors carry the freshest snapshot it knows.
    const failed = (err: unknown): FastifyReply => {
      request.served = { endpoint: req.endpoint };
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
  app.post('/v1/tables/:handle/raw_item', { preParsing }, serve('raw_item', parseRawItem));
  app.post('/v1/view', { preParsing }, serve('view', (raw) => parseView(raw, vendor)));
}
