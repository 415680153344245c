// The one place replies of the served endpoints and every error are written:
// status, body, ledger headers, the gas and cursor headers, and the X-Cache headers.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NodeError, errorBody, ERROR_CONTENT_TYPE } from '../errors.js';
import { encodeLedgerHeaders, type HeaderPairs, type LedgerHeaderNames } from '../ledger/headers.js';
import type { LedgerInfo } from '../ledger/info.js';
import type { CacheStatus, ReadResult } from '../serve/read-through.js';

export class ReplyWriter {
  /** the encoded headers of the snapshot sent last: hits repeat it, so encode once */
  private lastLedger: LedgerInfo | null = null;
  private lastEncoded: HeaderPairs = [];

  constructor(
    private readonly names: LedgerHeaderNames,
    /** told of every internal error, with its cause, which the client is not shown */
    private readonly onInternalError: (cause: unknown) => void = () => undefined,
  ) {}

  private encoded(ledger: LedgerInfo): HeaderPairs {
    if (ledger !== this.lastLedger) {
      this.lastEncoded = encodeLedgerHeaders(this.names, ledger);
      this.lastLedger = ledger;
    }
    return this.lastEncoded;
  }

  private ledgerHeaders(reply: FastifyReply, ledger: LedgerInfo | null): void {
    if (ledger === null) return;
    for (const [name, value] of this.encoded(ledger)) reply.header(name, value);
  }

  /** `gzipOk`: the client accepts gzip, so an entry's compressed copy may be sent. */
  result(reply: FastifyReply, result: ReadResult, gzipOk = false): FastifyReply {
    reply.code(result.status).header('content-type', result.contentType);
    this.ledgerHeaders(reply, result.ledger);
    if (result.gasUsed !== undefined) reply.header(this.names.gasUsed, result.gasUsed);
    if (result.cursor !== undefined) reply.header(this.names.cursor, result.cursor);
    reply.header('x-cache', result.cache);
    if (result.tier !== undefined) reply.header('x-cache-tier', result.tier);
    if (gzipOk && result.gzip !== undefined) {
      reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding');
      return reply.send(result.gzip);
    }
    return reply.send(result.body);
  }

  /**
   * The same reply as result(), written straight to Node's response: for the
   * reads answered before fastify (fast-hits.ts).
   */
  writeRaw(res: ServerResponse, result: ReadResult, gzipOk = false): void {
    const headers: string[] = ['content-type', result.contentType];
    if (result.ledger !== null) for (const [name, value] of this.encoded(result.ledger)) headers.push(name, value);
    if (result.gasUsed !== undefined) headers.push(this.names.gasUsed, result.gasUsed);
    if (result.cursor !== undefined) headers.push(this.names.cursor, result.cursor);
    headers.push('x-cache', result.cache);
    if (result.tier !== undefined) headers.push('x-cache-tier', result.tier);
    const body = gzipOk && result.gzip !== undefined ? result.gzip : result.body;
    if (body !== result.body) headers.push('content-encoding', 'gzip', 'vary', 'accept-encoding');
    headers.push('content-length', String(body.length));
    res.writeHead(result.status, headers);
    res.end(body);
  }

  /** The same reply as error(), written straight to Node's response (the fast path's refusals). */
  writeRawError(res: ServerResponse, err: NodeError, ledger: LedgerInfo | null): void {
    const body = errorBody(err);
    const headers: string[] = ['content-type', ERROR_CONTENT_TYPE];
    if (ledger !== null) for (const [name, value] of this.encoded(ledger)) headers.push(name, value);
    headers.push('x-cache', 'BYPASS', 'content-length', String(body.length));
    res.writeHead(err.status, headers);
    res.end(body);
  }

  /** An error body. `ledger` is null for input errors, which a node answers without ledger headers. */
  error(reply: FastifyReply, err: NodeError, ledger: LedgerInfo | null, cache: CacheStatus = 'BYPASS'): FastifyReply {
    if (err.cause !== undefined) this.onInternalError(err.cause);
    reply.code(err.status).header('content-type', ERROR_CONTENT_TYPE);
    this.ledgerHeaders(reply, ledger);
    reply.header('x-cache', cache);
    return reply.send(errorBody(err));
  }
}

/** A raw HTTP/1.1 error reply, for sockets the framework could not parse a request from. */
export function rawErrorResponse(err: NodeError): string {
  const body = errorBody(err);
  return (
    `HTTP/1.1 ${err.status} ${err.status === 400 ? 'Bad Request' : 'Error'}\r\n` +
    `content-type: ${ERROR_CONTENT_TYPE}\r\ncontent-length: ${body.length}\r\nx-cache: BYPASS\r\nconnection: close\r\n\r\n` +
    body.toString('utf8')
  );
}

/** An error reply on Node's own response, for requests that never reach the framework. No ledger headers. */
export function writeRawError(res: ServerResponse, err: NodeError): void {
  const body = errorBody(err);
  res.writeHead(err.status, { 'content-type': ERROR_CONTENT_TYPE, 'content-length': body.length, 'x-cache': 'BYPASS', connection: 'close' });
  res.end(body);
}

/**
 * A request the routes must refuse before anything else: HTTP/0.9-style request
 * lines (Node reads a request line with a bare LF as one, and the next line as a
 * header), and HTTP/1.1 without Host (RFC 9112 §3.2).
 */
export function protocolError(request: FastifyRequest): NodeError | null {
  if (request.raw.httpVersionMajor !== 1) return NodeError.badRequest(`unsupported HTTP version ${request.raw.httpVersion}`);
  if (request.headers.host === undefined && request.raw.httpVersionMinor === 1) return NodeError.badRequest('missing Host header');
  return null;
}
