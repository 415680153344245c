// Where replies of the served routes and every error of the proxy are
// written: status, body, ledger headers, the gas and cursor headers, the X-Cache
// headers, and the headers the edge added to the exchange (CORS and its Vary,
// request id).
// Every entry path writes through it, straight to Node's response.
import { ERROR_CONTENT_TYPE, errorBody, type NodeError } from '../errors.js';
import { encodeLedgerHeaders, type LedgerHeaderNames } from '../ledger/headers.js';
import type { LedgerInfo } from '../ledger/info.js';
import { headerNamesNow } from '../ledger/vendor.js';
import type { ReadResult } from '../model/read-result.js';
import { type Exchange, exchangeOf } from '../edge/exchange.js';
import type { HeadBlock, PublicReply } from '../edge/message.js';
import { cacheBlock, contentTypeBlock, flatten, keptBlock, NO_LINES } from './head-blocks.js';

/** How an error reply ends. */
export interface ReplyOptions {
  /** the connection ends after the reply: the rest of the request was not read */
  close?: boolean;
}

export class ReplyWriter {
  /** the ledger block of the snapshot sent last, and the names it was encoded with: hits repeat it, so serialise once */
  private lastLedger: LedgerInfo | null = null;
  private lastNames: LedgerHeaderNames | undefined;
  private lastBlock: HeadBlock = NO_LINES;

  constructor(
    /** live with vendor: auto (the nodes' once a probe says them): read once a reply, as a plain set */
    private readonly names: LedgerHeaderNames,
    /** the freshest snapshot the proxy knows, for its own errors */
    private readonly snapshot: () => LedgerInfo | null,
    /** told of every internal error, with its cause, which the client is not shown, and the request's id */
    private readonly onInternalError: (cause: unknown, requestId: string | undefined) => void = () => undefined,
  ) {}

  /** The ledger headers of `ledger` under `names`, serialised once per snapshot. */
  private ledgerBlock(ledger: LedgerInfo, names: LedgerHeaderNames): HeadBlock {
    if (ledger !== this.lastLedger || names !== this.lastNames) {
      this.lastBlock = keptBlock(encodeLedgerHeaders(names, ledger).flat());
      this.lastLedger = ledger;
      this.lastNames = names;
    }
    return this.lastBlock;
  }

  /**
   * A read's reply. `gzip`: the client accepts gzip, so an entry's compressed
   * copy may be sent. The exchange learns how the read was served.
   */
  result(exchange: Exchange, result: ReadResult, { gzip = false }: { gzip?: boolean } = {}): void {
    const names = headerNamesNow(this.names);
    const blocks: HeadBlock[] = [contentTypeBlock(result.contentType)];
    if (result.ledger !== null) blocks.push(this.ledgerBlock(result.ledger, names));
    if (result.gasUsed !== undefined || result.cursor !== undefined) {
      const answer: string[] = [];
      if (result.gasUsed !== undefined) answer.push(names.gasUsed, result.gasUsed);
      if (result.cursor !== undefined) answer.push(names.cursor, result.cursor);
      blocks.push({ pairs: answer });
    }
    blocks.push(cacheBlock(result.cache, result.tier));
    const body = gzip && result.gzip !== undefined ? result.gzip : result.body;
    const own: string[] = [];
    // One Vary line: the encoding chosen, and the edge's Origin.
    const vary = exchange.vary;
    if (body !== result.body)
      own.push('content-encoding', 'gzip', 'vary', vary === undefined ? 'accept-encoding' : `accept-encoding, ${vary}`);
    else if (vary !== undefined) own.push('vary', vary);
    own.push('content-length', String(body.length), 'x-request-id', exchange.requestId);
    const edge = exchange.edgeHeaders;
    if (edge !== undefined) for (let i = 0; i < edge.length; i++) own.push(edge[i]!);
    blocks.push({ pairs: own });
    exchange.cache = result.cache;
    exchange.tier = result.tier;
    exchange.upstream = result.upstream;
    exchange.bytes = body.length;
    const res = exchange.res;
    if (res.writeBlocks !== undefined) res.writeBlocks(result.status, blocks);
    else res.writeHead(result.status, flatten(blocks));
    res.end(body);
  }

  /**
   * An error of the proxy's own. Input errors carry no ledger headers, as a
   * node's don't (it never got as far as its ledger); every other error the proxy
   * makes carries the freshest snapshot it knows (api.md §8). `close` ends the
   * connection after the reply (the rest of the request was not read).
   * `exchange`: the request's, when the caller holds it; else the one the entry opened for `res`'s request.
   */
  error(
    res: PublicReply,
    err: NodeError,
    { close = false }: ReplyOptions = {},
    exchange: Exchange | undefined = exchangeOf(res.req),
  ): void {
    if (err.cause !== undefined) this.onInternalError(err.cause, exchange?.requestId);
    const body = errorBody(err);
    const headers: string[] = ['content-type', ERROR_CONTENT_TYPE];
    if (err.reason !== 'bad_input' && err.reason !== 'not_implemented') {
      const ledger = this.snapshot();
      if (ledger !== null)
        for (const item of this.ledgerBlock(ledger, headerNamesNow(this.names)).pairs) headers.push(item);
    }
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
