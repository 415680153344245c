// Every other /v1 route goes to a node unchanged (status, headers, body), so a
// real SDK works through the proxy. The call is routed like a cached read (api.md
// §8): the pool picks a healthy node on the right chain, one that covers
// ?ledger_version=N, within its budget, and fails a GET over to another node on
// connection errors, timeouts and 5xx. What the client sends never picks the
// host: the pool does, and the path must stay under /v1.
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Priority } from '../config/index.js';
import { NodeError } from '../errors.js';
import type { TraceScope } from '../tracing/scope.js';
import { parseU64 } from '../wire/u64.js';
import { joinVary } from '../edge/cors.js';
import { exchangeOf } from '../edge/exchange.js';
import type { ReplyWriter } from '../reply/writer.js';
import { sdkClientOf } from '../edge/sdk-client.js';

/** A passthrough request as a node gets it: path (with the query) under /v1, and the client's end-to-end headers. */
interface PassthroughCall {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  path: string;
  headers: Record<string, string>;
  /** the request's id (in `headers` too), for the node call's log lines */
  requestId?: string;
  body?: Buffer;
}

/** A node's answer to a passthrough call, passed on as it came. */
interface PassthroughAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** a success as it arrives (streamed on, never held), or an error read whole */
  body: Buffer | Readable;
  /** the node's name (config), for the log */
  upstream: string;
}

export interface PassthroughDeps {
  /**
   * Sends the call to a node chosen by the pool (one covering `minVersion` when
   * set); rejects with a NodeError when no node could answer. `trace`: the
   * request's span, while tracing is on (each node attempt goes under it).
   */
  forward(
    call: PassthroughCall,
    minVersion: bigint | undefined,
    priority: Priority | undefined,
    trace?: TraceScope,
  ): Promise<PassthroughAnswer>;
  writer: ReplyWriter;
  /** the name of the client's SDK header (x-<vendor>-client): it goes on only when well-formed (sdk-client.ts) */
  sdkClientHeader?(): string;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Per-connection headers (RFC 9110 §7.6.1): they describe one hop, not the message. */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/**
 * Client headers that must not reach a node: they would name another host, or
 * are the proxy's to set. An Expect is met by the proxy itself (Node answered
 * 100-continue before the body came): the node gets the whole body at once. A
 * client's Authorization is the proxy's (its API key, api.md §10.2): nodes get
 * only upstreams[].headers.
 */
const NOT_FORWARDED = [
  'host',
  'x-forwarded-host',
  'forwarded',
  'x-forwarded-proto',
  'x-forwarded-port',
  'content-length',
  'accept-encoding',
  'expect',
  'authorization',
];

/** Node headers the proxy sets itself: CORS is the proxy's own (cors.ts). */
const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
];

/** An answer read whole was decoded and is re-framed: its length and coding are the proxy's. */
const NOT_RELAYED = ['content-length', 'content-encoding', ...CORS_HEADERS];

/** A streamed answer passes on as the node framed it (identity), and a HEAD answer's Content-Length describes the GET's body. */
const KEPT_LENGTH_NOT_RELAYED = ['content-encoding', ...CORS_HEADERS];

/** Drops hop-by-hop headers, every header the Connection header names, and `extra`. */
function withoutHopByHop(
  headers: Record<string, string | string[] | undefined>,
  extra: readonly string[],
): Record<string, string | string[]> {
  const listed = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const drop = new Set([...HOP_BY_HOP, ...listed, ...extra]);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !drop.has(name)) out[name] = value;
  return out;
}

/** The client's headers as a node may see them (the node client adds the node's own, such as an API key). */
function clientHeaders(headers: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(withoutHopByHop(headers, NOT_FORWARDED)))
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** Paths a client could use to step outside /v1 on some server: dot segments, empty segments, encoded or back slashes. */
const UNSAFE_PATH = /(?:^|\/)\.{1,2}(?:\/|$)|\/\/|%2f|%5c|%2e|\\/i;

/** `?ledger_version=N` when it is one u64: the version the node must cover (anything else is the node's to judge). */
function pinnedVersion(query: unknown): bigint | undefined {
  const value = (query as Record<string, unknown> | undefined)?.ledger_version;
  return typeof value === 'string' ? (parseU64(value) ?? undefined) : undefined;
}

export function registerPassthrough(app: FastifyInstance, deps: PassthroughDeps): void {
  const refuse = (reply: FastifyReply, err: NodeError): void => {
    reply.hijack();
    deps.writer.error(reply.raw, err);
  };
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const path = request.url.split('?', 1)[0];
    if (!path.startsWith('/v1') || UNSAFE_PATH.test(path)) {
      return refuse(
        reply,
        NodeError.badRequest(
          `refused path: ${JSON.stringify(path)} (dot segments, empty segments and encoded slashes are not forwarded)`,
        ),
      );
    }
    const method = request.method as PassthroughCall['method'];
    const body = Buffer.isBuffer(request.body) && method !== 'GET' && method !== 'HEAD' ? request.body : undefined;
    const exchange = exchangeOf(request.raw);
    const headers = clientHeaders(request.headers);
    // The node sees the request's id as the proxy gave it, not a client's it did not keep.
    if (exchange !== undefined) headers['x-request-id'] = exchange.requestId;
    const sdkHeader = deps.sdkClientHeader?.();
    if (sdkHeader !== undefined && sdkClientOf(request.headers, sdkHeader) === undefined) delete headers[sdkHeader];
    let answer: PassthroughAnswer;
    try {
      answer = await deps.forward(
        { method, path: request.url, headers, requestId: exchange?.requestId, body },
        pinnedVersion(request.query),
        exchange?.tenant?.priority,
        exchange?.trace,
      );
    } catch (err) {
      return refuse(reply, NodeError.from(err));
    }
    if (exchange !== undefined) {
      exchange.upstream = answer.upstream;
      if (Buffer.isBuffer(answer.body)) exchange.bytes = answer.body.length;
    }
    const streamed = !Buffer.isBuffer(answer.body);
    const relayed = withoutHopByHop(
      answer.headers,
      method === 'HEAD' || streamed ? KEPT_LENGTH_NOT_RELAYED : NOT_RELAYED,
    );
    // The edge set its own Vary (Origin) on the response; the node's would replace it, so the two are one line, each name once.
    if (exchange?.vary !== undefined && relayed.vary !== undefined)
      relayed.vary = joinVary(relayed.vary, exchange.vary);
    // The request's id is the proxy's: a node's own would replace it.
    delete relayed['x-request-id'];
    // Set on the copy itself: a spread with a field added would make a hidden class per reply (model/read.ts, EveryField).
    relayed['x-cache'] = 'BYPASS';
    reply.code(answer.status).headers(relayed);
    return reply.send(answer.body);
  };
  for (const url of ['/v1', '/v1/*']) app.route({ method: [...METHODS], url, handler, exposeHeadRoute: false });
}
