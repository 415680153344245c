// Every other /v1 route goes to a healthy node unchanged (status, headers, body),
// so a real SDK works through the proxy. @fastify/http-proxy refuses paths that
// would leave /v1 (dot segments, encoded slashes, absolute URLs); what the client
// sends never picks the host: the pool does.
import type { IncomingHttpHeaders } from 'node:http';
import httpProxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUSES, NodeError } from '../errors.js';
import type { Watermark } from '../ledger/watermark.js';
import { protocolError, type ReplyWriter } from './reply.js';

/** Where a passthrough call goes: a node's base url (with any path prefix, without /v1) and its extra headers. */
export interface PassthroughTarget {
  base: string;
  headers: Readonly<Record<string, string>>;
}

export interface PassthroughDeps {
  /** the node to send a request to now, or null when none is available */
  pickUpstream(): PassthroughTarget | null;
  /** any configured node: used when none is available, so the call fails cleanly */
  fallbackUpstream: () => PassthroughTarget;
  writer: ReplyWriter;
  watermark: Watermark;
  timeoutMs: number;
}

/** Per-connection headers (RFC 9110 §7.6.1): they describe one hop, not the message. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

/** Client headers that must not reach a node: they would name another host. */
const FORWARDING_HEADERS = ['x-forwarded-host', 'forwarded', 'x-forwarded-proto', 'x-forwarded-port'];

/** Drops hop-by-hop headers, and every header the Connection header names. */
function withoutHopByHop<T extends Record<string, unknown>>(headers: T, extra: readonly string[] = []): T {
  const out: Record<string, unknown> = { ...headers };
  const listed = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  for (const name of [...HOP_BY_HOP, ...listed, ...extra]) delete out[name];
  return out as T;
}

/**
 * The client's headers as a node may see them. fastify drops the body of a GET or
 * HEAD: its length must go too, or the node waits for a body that never comes.
 */
function clientHeaders<T extends Record<string, unknown>>(request: { method?: string }, headers: T): T {
  return withoutHopByHop(headers, request.method === 'GET' || request.method === 'HEAD' ? [...FORWARDING_HEADERS, 'content-length'] : FORWARDING_HEADERS);
}

/** Paths a client could use to step outside /v1 on some server: dot segments, empty segments, encoded or back slashes. */
const UNSAFE_PATH = /(?:^|\/)\.{1,2}(?:\/|$)|\/\/|%2f|%5c|%2e|\\/i;

export async function registerPassthrough(app: FastifyInstance, deps: PassthroughDeps): Promise<void> {
  await app.register(httpProxy, {
    preHandler: (request, reply, done) => {
      const refused = protocolError(request as FastifyRequest);
      if (refused !== null) {
        deps.writer.error(reply as FastifyReply, refused, null);
        return;
      }
      const path = request.url.split('?', 1)[0];
      if (UNSAFE_PATH.test(path)) {
        deps.writer.error(reply as FastifyReply, NodeError.badRequest(`refused path: ${JSON.stringify(path)} (dot segments, empty segments and encoded slashes are not forwarded)`), null);
        return;
      }
      done();
    },
    // A preValidation of our own makes http-proxy skip its stream parsers, so the
    // server's buffering parser applies: with server.bodyLimitBytes, and the body
    // is forwarded with a Content-Length (nodes answer 411 to chunked bodies).
    preValidation: (_request, _reply, done) => done(),
    // The node is picked once per request: the url and the headers must be the same node's.
    // dest is '/v1/…'; made relative, it resolves under the node's path prefix
    // (https://host/prefix/ + v1/…) instead of replacing it.
    handler: (request, reply, dest, options) => {
      const target = deps.pickUpstream() ?? deps.fallbackUpstream();
      const perNode = {
        ...options,
        getUpstream: () => `${target.base}/`,
        rewriteRequestHeaders: (req: { method?: string }, headers: IncomingHttpHeaders) => ({ ...clientHeaders(req, headers), ...target.headers }),
      };
      const relative = dest.replace(/^\/+/, '');
      return Buffer.isBuffer(request.body)
        ? reply.from(relative, { ...perNode, body: request.body, contentType: request.headers['content-type'] ?? 'application/octet-stream' })
        : reply.from(relative, perNode);
    },
    upstream: new URL(deps.fallbackUpstream().base).origin,
    prefix: '/v1',
    rewritePrefix: '/v1',
    http: { requestOptions: { timeout: deps.timeoutMs } },
    replyOptions: {
      // No retries of a node's 503 (reply-from would retry a GET up to 10 times).
      retryDelay: () => null,
      rewriteHeaders: (headers) => ({ ...withoutHopByHop(headers), 'x-cache': 'BYPASS' }),
      // A node's answer passes through when it is node-shaped; an HTML or empty
      // error, a 429 or a 502 from something in front of the node does not.
      onResponse: (_request, reply, raw) => {
        // At run time reply-from hands over { statusCode, headers, stream }.
        const res = raw as unknown as { statusCode: number; headers: Record<string, string | string[] | undefined>; stream: NodeJS.ReadableStream };
        const type = String(res.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
        const status = res.statusCode;
        if (status < 400 || ((ERROR_STATUSES as readonly number[]).includes(status) && type === 'application/json')) {
          reply.send(res.stream);
          return;
        }
        res.stream.resume();
        for (const name of Object.keys(res.headers)) reply.removeHeader(name);
        const what = `upstream answered HTTP ${status}${type ? ` ${type}` : ''}`;
        // A refusal of the proxy's own credentials is the deployment's failure, not the client's.
        const refusedProxy = status === 401 || status === 403 || status === 407;
        const err =
          status >= 500 || status === 429 || refusedProxy
            ? NodeError.unavailable(refusedProxy ? `${what}: check the node's upstreams[].headers (API key)` : what)
            : NodeError.badRequest(what);
        deps.writer.error(reply as FastifyReply, err, deps.watermark.current());
      },
      onError: (reply, { error }) => {
        const reason = (error as { code?: string; message?: string }).code ?? error.message;
        deps.writer.error(reply as FastifyReply, NodeError.unavailable(`passthrough to a node failed: ${reason}`), deps.watermark.current());
      },
    },
  });
}
