// The read responder: a parsed read of a cached route (or the error its
// input is) becomes the bytes written, the metrics and the log line. It answers
// every cached route, hit or miss, whatever the entry path; a memory hit is
// answered synchronously, without an async hop.
import { NodeError } from '../errors.js';
import { acceptsGzip } from '../serve/compress.js';
import type { ReadContext } from '../model/read-context.js';
import type { ReadResult } from '../model/read-result.js';
import type { ReadRequest } from '../model/read.js';
import type { Accounting } from '../reply/accounting.js';
import type { Exchange } from '../edge/exchange.js';
import type { Parsed, ReadParser } from './read-parser.js';
import type { ReplyOptions, ReplyWriter } from '../reply/writer.js';
import type { SdkClient } from '../edge/sdk-client.js';

export interface ResponderDeps {
  /** the read path (ReadThrough.read): synchronous on a memory hit; throws or rejects with the proxy's own errors */
  read(req: ReadRequest, context: ReadContext): ReadResult | Promise<ReadResult>;
  /** the refusal of a node call for this exchange (its tenant's node units are spent), or null */
  nodeCallRefusal(exchange: Exchange): NodeError | null;
  /** the client's SDK header to pass on to the node calls made for the exchange (sdk-client.ts) */
  sdkClient?(exchange: Exchange): SdkClient | undefined;
  parser: ReadParser;
  writer: ReplyWriter;
  account: Accounting;
}

export class ReadResponder {
  constructor(private readonly deps: ResponderDeps) {}

  /** Serves a parsed read and accounts for it. */
  respond(exchange: Exchange, parsed: Parsed): void {
    exchange.endpoint = parsed.read.route.family;
    let result: ReadResult | Promise<ReadResult>;
    try {
      result = this.deps.read(parsed.read, new ExchangeContext(exchange, this.deps));
    } catch (err) {
      return this.refuse(exchange, NodeError.from(err));
    }
    if (result instanceof Promise) {
      result
        .then(
          (r) => this.served(exchange, parsed, r),
          (err) => this.refuse(exchange, NodeError.from(err)),
        )
        // A reply that cannot be written (the client is gone mid-write) ends its connection, never the process.
        .catch(() => exchange.res.destroy());
    } else {
      this.served(exchange, parsed, result);
    }
  }

  /** Answers with the proxy's own error (refused input, a limit, not ready, no node could answer) and accounts for it. */
  refuse(exchange: Exchange, err: NodeError, options: ReplyOptions = {}): void {
    this.deps.writer.error(exchange.res, err, options, exchange);
    this.deps.account(exchange, err.status);
  }

  private served(exchange: Exchange, parsed: Parsed, result: ReadResult): void {
    // A hit, from memory or Redis, will be asked again: its spelling, when new, is kept.
    if (result.cache === 'HIT' && parsed.spelling !== undefined)
      this.deps.parser.remember(parsed.spelling, parsed.read);
    this.deps.writer.result(exchange, result, {
      gzip: result.gzip !== undefined && acceptsGzip(exchange.req.headers['accept-encoding']),
    });
    this.deps.account(exchange, result.status);
  }
}

/** A read's context as serve/ sees it: the exchange's request id, its tenant's priority and node units, its span, its SDK. */
class ExchangeContext implements ReadContext {
  /** the request's span, opened with the exchange, before any read: read on every lookup */
  readonly trace: ReadContext['trace'];

  constructor(
    private readonly exchange: Exchange,
    private readonly deps: Pick<ResponderDeps, 'nodeCallRefusal' | 'sdkClient'>,
  ) {
    this.trace = exchange.trace;
  }

  get requestId(): string {
    return this.exchange.requestId;
  }

  get priority(): ReadContext['priority'] {
    return this.exchange.tenant?.priority;
  }

  get sdkClient(): SdkClient | undefined {
    return this.deps.sdkClient?.(this.exchange);
  }

  nodeCallRefusal(): NodeError | null {
    return this.deps.nodeCallRefusal(this.exchange);
  }
}
