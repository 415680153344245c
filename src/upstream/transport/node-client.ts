// The transport to one node: its connections, and each call and probe made on
// them. Here transport failures (call-errors.ts) and answers that are not
// node-shaped (answer-shape.ts) become NodeErrors (503 internal_error), and
// nowhere else.
import { Pool } from 'undici';
import { redactUrl } from '../../config/index.js';
import { NodeError } from '../../errors.js';
import { LedgerHeaderDecoder, type LedgerHeaderNames, vendorOfHeaders } from '../../ledger/headers.js';
import { headerNamesNow } from '../../ledger/vendor.js';
import type { NodeAnswer } from '../../model/node-answer.js';
import type { AnswerBytes } from './answer-bytes.js';
import { retryAfterMs, shapeAnswer } from './answer-shape.js';
import { AnswerBytesExhausted, failureOf } from './call-errors.js';
import { callNode, firstHeader, type RawAnswer } from './node-call.js';

export interface NodeCall {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  /** path and query under the node's base url, starting with /v1 */
  path: string;
  headers?: Record<string, string>;
  /** the id of the client request the call is made for (in `headers` too, as X-Request-Id), for log lines */
  requestId?: string;
  body?: Buffer;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * A passthrough call: any answer below 400 is passed on whatever its type, and
   * the answer keeps the node's headers. Errors must still be node-shaped.
   */
  passthrough?: boolean;
  /**
   * A passthrough answer must be whole by then (epoch ms), the time the client
   * was not reading it not counted; past it the answer's stream ends with a
   * NodeError whose reason is 'deadline', and the node's call is aborted.
   */
  deliverBy?: number;
  /** the proxy-wide budget of answer bytes in flight this answer counts against (absent for a probe: its answer is small, and it must not fail for the reads' load) */
  answerBytes?: AnswerBytes;
}

export interface NodeClientOptions {
  /** config's upstreams[].name: the node's one name, clients' messages included (never its address) */
  name: string;
  /** base url without /v1 and without a trailing slash */
  url: string;
  headerNames: LedgerHeaderNames;
  /** sent with every call (an API key): config's upstreams[].headers, names lower-case */
  headers?: Readonly<Record<string, string>>;
  /** keep-alive connections to this node */
  connections?: number;
}

/** A probe's (GET /v1) answer as it came, for the prober to judge. */
export interface ProbeReply {
  status: number;
  contentType: string;
  body: Buffer;
  /** the vendor whose ledger headers it carries (null: none) */
  vendor: string | null;
  /** the node's Retry-After, when it sent one (a node shedding load may) */
  retryAfterMs?: number;
}

/** Why a probe got no answer, in the proxy's words. */
interface ProbeFailure {
  failed: string;
  /** a failure the proxy does not name, for the log */
  cause?: unknown;
}

export type ProbeAnswer = ProbeReply | ProbeFailure;

/**
 * Largest answer we accept from a node, on the wire and decoded; a bigger one is
 * treated as a broken node. The largest real answers (a block with its
 * transactions, a page of resources) are a few MiB.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export class NodeClient {
  readonly name: string;
  readonly url: string;
  /** its base url as the operator's views show it (the probe log, /readyz), never a client: userinfo and query values hidden */
  readonly shownUrl: string;
  /** the path its probe asks for: the base url's path prefix, then /v1 */
  readonly probePath: string;
  readonly headers: Readonly<Record<string, string>>;
  private readonly pool: Pool;
  private readonly names: LedgerHeaderNames;
  /** this node's answers repeat their snapshot until its ledger moves: decoded once per snapshot */
  private readonly ledger = new LedgerHeaderDecoder();
  private readonly basePath: string;

  constructor(options: NodeClientOptions) {
    this.name = options.name;
    this.url = options.url;
    this.headers = options.headers ?? {};
    this.names = options.headerNames;
    const base = new URL(options.url);
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.shownUrl = redactUrl(options.url);
    this.probePath = `${this.basePath}/v1`;
    this.pool = new Pool(base.origin, {
      connections: options.connections ?? 64,
      keepAliveTimeout: 30_000,
      pipelining: 1,
    });
  }

  /** One call to the node. Resolves with any node-shaped answer; rejects with a NodeError otherwise. */
  async call(call: NodeCall): Promise<NodeAnswer> {
    let got: RawAnswer;
    try {
      got = await this.send(call);
    } catch (err) {
      throw this.failure(err, call.timeoutMs);
    }
    const answer = shapeAnswer(got, {
      node: this.name,
      // One lookup of the live names, not one per header read.
      names: headerNamesNow(this.names),
      ledger: this.ledger,
      passthrough: call.passthrough === true,
    });
    if (got.stream !== undefined) answer.stream = got.stream;
    return answer;
  }

  /** A streamed answer not whole by its deadline: the node's, since the client's reading is not counted. */
  private unfinished(): NodeError {
    return NodeError.unavailable(
      `upstream ${this.name}: did not deliver its whole answer within the deadline (routing.deadlineMs)`,
      'deadline',
    );
  }

  /** GET /v1 as a probe: whatever the node answered, unjudged (the prober says what it expected), or why nothing came. */
  async probe(timeoutMs: number): Promise<ProbeAnswer> {
    try {
      const { status, headers, body } = await this.send({
        method: 'GET',
        path: '/v1',
        headers: { accept: 'application/json' },
        timeoutMs,
      });
      const reply: ProbeReply = {
        status,
        contentType: firstHeader(headers['content-type']) ?? '',
        body,
        vendor: vendorOfHeaders(headers),
      };
      const retryAfter = retryAfterMs(firstHeader(headers['retry-after']));
      if (retryAfter !== undefined) reply.retryAfterMs = retryAfter;
      return reply;
    } catch (err) {
      const described = failureOf(err, timeoutMs);
      return described.known ? { failed: described.text } : { failed: described.text, cause: err };
    }
  }

  /** One call to the node; rejects with what the transport threw. */
  private send(call: NodeCall): Promise<RawAnswer> {
    return callNode(
      this.pool,
      {
        method: call.method,
        path: this.basePath + call.path,
        headers: this.headersOf(call),
        body: call.body,
      },
      {
        timeoutMs: call.timeoutMs,
        signal: call.signal,
        maxBytes: MAX_ANSWER_BYTES,
        inFlight: call.answerBytes,
        head: call.method === 'HEAD',
        // A passthrough success goes on to the client as it arrives: it is neither judged nor kept.
        stream: call.passthrough === true,
        delivery:
          call.deliverBy === undefined
            ? undefined
            : { withinMs: call.deliverBy - Date.now(), error: () => this.unfinished() },
      },
    );
  }

  /** The headers a call is sent with, in one object built in one pass. */
  private headersOf(call: NodeCall): Record<string, string> {
    const headers: Record<string, string> = {};
    const own = call.headers;
    for (const name in own) headers[name] = own[name]!;
    // The node's own headers (an API key) win over a passthrough client's.
    const node = this.headers;
    for (const name in node) headers[name] = node[name]!;
    // Nodes gzip by default; we keep raw bytes so answers stay byte-identical.
    headers['accept-encoding'] = 'identity';
    if (call.body) headers['content-length'] = String(call.body.length);
    return headers;
  }

  /** Why the call gave no answer, in the proxy's own words; the transport's error is kept as the cause, for the log. */
  private failure(err: unknown, timeoutMs: number): NodeError {
    if (err instanceof AnswerBytesExhausted) {
      return NodeError.unavailable(
        `overloaded: node answers in flight would hold more than ${err.maxBytes} bytes (routing.maxAnswerBytesInFlight)`,
        'overloaded',
      );
    }
    const described = failureOf(err, timeoutMs);
    const failure = NodeError.unavailable(`upstream ${this.name}: ${described.text}`, described.reason);
    if (!described.known) failure.cause = err;
    return failure;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Drop connections at once (a node that must not be waited for). */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}
