// The transport to one node, and the ONLY place where transport failures and
// answers that are not node-shaped become NodeErrors (503 internal_error).
import { Pool } from 'undici';
import { NodeError, ERROR_STATUSES, isErrorCode } from '../../errors.js';
import { decodeGasUsed, decodeLedgerHeaders, type LedgerHeaderNames, vendorOfHeaders } from '../../ledger/headers.js';
import { mediaType } from '../../wire/media-type.js';
import type { NodeAnswer } from '../../model/node-answer.js';
import type { AnswerBytes } from './answer-bytes.js';
import { AnswerBytesExhausted, AnswerTooLarge, AnswerUndecodable, callNode, CallTimeout } from './node-call.js';

export interface NodeCall {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  /** path and query under the node's base url, starting with /v1 */
  path: string;
  headers?: Record<string, string>;
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
export interface ProbeFailure {
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
  readonly headers: Readonly<Record<string, string>>;
  private readonly pool: Pool;
  private readonly names: LedgerHeaderNames;
  private readonly basePath: string;

  constructor(options: NodeClientOptions) {
    this.name = options.name;
    this.url = options.url;
    this.headers = options.headers ?? {};
    this.names = options.headerNames;
    const base = new URL(options.url);
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.pool = new Pool(base.origin, {
      connections: options.connections ?? 64,
      keepAliveTimeout: 30_000,
      pipelining: 1,
    });
  }

  /** One call to the node. Resolves with any node-shaped answer; rejects with a NodeError otherwise. */
  async call(call: NodeCall): Promise<NodeAnswer> {
    let got: Awaited<ReturnType<typeof callNode>>;
    try {
      got = await this.send(call);
    } catch (err) {
      throw this.failure(err, call.timeoutMs);
    }
    const answer = this.shape(got.status, got.headers, got.body, call.passthrough === true);
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
  private send(call: NodeCall): ReturnType<typeof callNode> {
    return callNode(
      this.pool,
      {
        method: call.method,
        path: this.basePath + call.path,
        headers: {
          // The node's own headers (an API key) win over a passthrough client's.
          ...call.headers,
          ...this.headers,
          // Nodes gzip by default; we keep raw bytes so answers stay byte-identical.
          'accept-encoding': 'identity',
          ...(call.body ? { 'content-length': String(call.body.length) } : {}),
        },
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

  private shape(
    status: number,
    headers: Record<string, string | string[] | undefined>,
    body: Buffer,
    passthrough: boolean,
  ): NodeAnswer {
    const contentType = firstHeader(headers['content-type']) ?? '';
    const type = mediaType(contentType);
    const answer: NodeAnswer = {
      upstream: this.name,
      status,
      contentType,
      body,
      gasUsed: decodeGasUsed(this.names, headers),
      ledger: decodeLedgerHeaders(this.names, headers),
    };
    // A page's pointer to the next one (resources, modules): part of the answer.
    const cursor = firstHeader(headers[this.names.cursor]);
    if (cursor !== undefined) answer.cursor = cursor;
    const broken = (what: string): never => {
      throw NodeError.unavailable(`upstream ${this.name}: ${what}`);
    };
    if (passthrough) {
      answer.headers = headers;
      if (status < 400) return answer;
    }
    if (status === 200) {
      if (type === 'application/x-bcs') return answer;
      if (type === 'application/json') {
        const parsed = parseJson(body);
        if (parsed === NOT_JSON) broken('answered 200 with a body that is not JSON');
        answer.json = parsed;
        return answer;
      }
      return broken(`answered 200 with content type '${contentType || 'none'}'`);
    }
    if (status === 429) broken('answered 429 Too Many Requests (rate limited)');
    // A refusal of the proxy's own credentials is the deployment's failure, not the client's.
    if ((status === 401 || status === 403 || status === 407) && parseErrorBody(body) === null) {
      broken(`answered HTTP ${status}: check the node's upstreams[].headers (API key)`);
    }
    if (!(ERROR_STATUSES as readonly number[]).includes(status)) {
      broken(`answered HTTP ${status}${type ? ` ${type}` : ''}${body.length === 0 ? ' with an empty body' : ''}`);
    }
    const error = parseErrorBody(body);
    if (error === null) {
      broken(
        `answered HTTP ${status} without a node error body${body.length === 0 ? ' (empty)' : type ? ` (${type})` : ''}`,
      );
    }
    answer.errorCode = error!.code;
    answer.vmErrorCode = error!.vmErrorCode;
    const retryAfter = retryAfterMs(firstHeader(headers['retry-after']));
    if (retryAfter !== undefined) answer.retryAfterMs = retryAfter;
    return answer;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Drop connections at once (a node that must not be waited for). */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A Retry-After (RFC 9110 §10.2.3: delta seconds or an HTTP date) in ms from now; undefined when absent or unreadable. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

const NOT_JSON = Symbol('not JSON');

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

function parseErrorBody(body: Buffer): { code: string; vmErrorCode: number | null } | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    if (typeof parsed !== 'object' || parsed === null) return null;
    if (typeof parsed.message !== 'string' || !isErrorCode(parsed.error_code)) return null;
    const vm = parsed.vm_error_code;
    return { code: parsed.error_code, vmErrorCode: typeof vm === 'number' ? vm : null };
  } catch {
    return null;
  }
}

interface TransportFailure {
  text: string;
  reason: 'node_timeout' | 'node_failed' | 'node_broken';
  /** false: a failure this list does not name (the caller logs its message and code) */
  known: boolean;
}

/** Why a call gave no answer, in the proxy's words: never the library's message text. */
function failureOf(err: unknown, timeoutMs: number): TransportFailure {
  if (err instanceof AnswerTooLarge)
    return {
      text: `answered more than the ${err.maxBytes / 1024 / 1024} MiB an answer may have`,
      reason: 'node_broken',
      known: true,
    };
  if (err instanceof AnswerUndecodable) {
    const what = err.known
      ? `a body that does not decompress (${err.encoding})`
      : `an unknown content encoding '${err.encoding}'`;
    return { text: `answered ${what}`, reason: 'node_broken', known: true };
  }
  return describeTransportError(err, timeoutMs);
}

/** A transport failure in the proxy's words: never the library's message text. */
function describeTransportError(err: unknown, timeoutMs: number): TransportFailure {
  const timedOut: TransportFailure = { text: `timed out after ${timeoutMs} ms`, reason: 'node_timeout', known: true };
  if (err instanceof CallTimeout) return timedOut;
  const e = err as { code?: string; name?: string };
  const failed = (text: string): TransportFailure => ({ text, reason: 'node_failed', known: true });
  switch (e.code) {
    case 'ECONNREFUSED':
      return failed('connection refused');
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return failed('connection reset');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return timedOut;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return failed('host not found');
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return failed('answer shorter or longer than its Content-Length');
  }
  if (e.name === 'AbortError') return failed('request aborted');
  return { text: 'the call failed', reason: 'node_failed', known: false };
}
