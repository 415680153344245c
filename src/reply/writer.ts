// Where replies of the served routes and every error of the proxy are
// written: status, body, ledger headers, the gas and cursor headers, the X-Cache
// headers, and the headers the edge added to the exchange (CORS and its Vary,
// request id).
// Every entry path writes through it, straight to Node's response.
import { ERROR_CONTENT_TYPE, errorBody, type NodeError } from '../errors.js';
import { encodeLedgerHeaders, type HeaderPairs, type LedgerHeaderNames } from '../ledger/headers.js';
import type { LedgerInfo } from '../ledger/info.js';
import type { ReadResult } from '../model/read-result.js';
import { exchangeOf } from '../edge/exchange.js';
import type { PublicReply } from '../edge/message.js';

/** How an error reply ends. */
export interface ReplyOptions {
  /** the connection ends after the reply: the rest of the request was not read */
  close?: boolean;
}

export class ReplyWriter {
  /** the encoded headers of the snapshot sent last, and the names they were encoded with: hits repeat them, so encode once */
  private lastLedger: LedgerInfo | null = null;
  private lastName = '';
  private lastEncoded: HeaderPairs = [];

  constructor(
    private readonly names: LedgerHeaderNames,
    /** the freshest snapshot the proxy knows, for its own errors */
    private readonly snapshot: () => LedgerInfo | null,
    /** told of every internal error, with its cause, which the client is not shown, and the request's id */
    private readonly onInternalError: (cause: unknown, requestId: string | undefined) => void = () => undefined,
  ) {}

  private pushLedger(headers: string[], ledger: LedgerInfo | null): void {
    if (ledger === null) return;
    // The names too: with vendor: auto they are the nodes', once a probe says them.
    const name = this.names.ledgerVersion;
    if (ledger !== this.lastLedger || name !== this.lastName) {
      this.lastEncoded = encodeLedgerHeaders(this.names, ledger);
      this.lastLedger = ledger;
      this.lastName = name;
    }
    for (const [name, value] of this.lastEncoded) headers.push(name, value);
  }

  /**
   * A read's reply. `gzip`: the client accepts gzip, so an entry's compressed
   * copy may be sent. The exchange learns how the read was served.
   */
  result(res: PublicReply, result: ReadResult, { gzip = false }: { gzip?: boolean } = {}): void {
    const headers: string[] = ['content-type', result.contentType];
    this.pushLedger(headers, result.ledger);
    if (result.gasUsed !== undefined) headers.push(this.names.gasUsed, result.gasUsed);
    if (result.cursor !== undefined) headers.push(this.names.cursor, result.cursor);
    headers.push('x-cache', result.cache);
    if (result.tier !== undefined) headers.push('x-cache-tier', result.tier);
    const body = gzip && result.gzip !== undefined ? result.gzip : result.body;
    const exchange = exchangeOf(res.req);
    // One Vary line: the encoding chosen, and the edge's Origin.
    const vary = exchange?.vary;
    if (body !== result.body)
      headers.push(
        'content-encoding',
        'gzip',
        'vary',
        vary === undefined ? 'accept-encoding' : `accept-encoding, ${vary}`,
      );
    else if (vary !== undefined) headers.push('vary', vary);
    headers.push('content-length', String(body.length));
    if (exchange !== undefined) {
      headers.push('x-request-id', exchange.requestId);
      exchange.cache = result.cache;
      exchange.tier = result.tier;
      exchange.upstream = result.upstream;
      exchange.bytes = body.length;
      if (exchange.edgeHeaders !== undefined) headers.push(...exchange.edgeHeaders);
    }
    res.writeHead(result.status, headers);
    res.end(body);
  }

  /**
   * An error of the proxy's own. Input errors carry no ledger headers, as a
   * node's don't (it never got as far as its ledger); every other error the proxy
   * makes carries the freshest snapshot it knows (api.md §8). `close` ends the
   * connection after the reply (the rest of the request was not read).
   */
  error(res: PublicReply, err: NodeError, { close = false }: ReplyOptions = {}): void {
    const exchange = exchangeOf(res.req);
    if (err.cause !== undefined) this.onInternalError(err.cause, exchange?.requestId);
    const body = errorBody(err);
    const headers: string[] = ['content-type', ERROR_CONTENT_TYPE];
    if (err.reason !== 'bad_input' && err.reason !== 'not_implemented') this.pushLedger(headers, this.snapshot());
    headers.push('x-cache', 'BYPASS');
    for (const name in err.headers) headers.push(name, err.headers[name]!);
    headers.push('content-length', String(body.length));
    if (close) headers.push('connection', 'close');
    if (exchange !== undefined) {
      headers.push('x-request-id', exchange.requestId);
      if (exchange.vary !== undefined) headers.push('vary', exchange.vary);
      exchange.cache = 'BYPASS';
      exchange.reason = err.reason;
      exchange.attempts = err.attempts;
      exchange.bytes = body.length;
      if (exchange.edgeHeaders !== undefined) headers.push(...exchange.edgeHeaders);
    }
    res.writeHead(err.status, headers);
    res.end(body);
  }
}

/** A raw HTTP/1.1 error reply, for sockets the server could not parse a request from. */
export function rawErrorResponse(err: NodeError): string {
  const body = errorBody(err);
  return (
    `HTTP/1.1 ${err.status} ${err.status === 400 ? 'Bad Request' : 'Error'}\r\n` +
    `content-type: ${ERROR_CONTENT_TYPE}\r\ncontent-length: ${body.length}\r\nx-cache: BYPASS\r\nconnection: close\r\n\r\n` +
    body.toString('utf8')
  );
}
