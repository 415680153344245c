// CORS as a node answers it. A node wraps its routes in poem's Cors middleware
// configured with credentials and the methods GET and POST, and nothing else, so
// poem's defaults decide the rest: any origin, echoed; any request header
// allowed (the preflight echoes what the browser asks for); max age 86400; no
// exposed headers. Outside that layer sit the body-size check and the node's
// error conversion, so what they refuse carries no CORS headers, and a
// preflight the layer refuses becomes a node-shaped 403.
import type { IncomingHttpHeaders } from 'node:http';
import { SimError, simErrorBody } from './node-error.js';
import { reply, type SimReply, type SimRequest } from './reply.js';

/** The methods a node allows, in the order its preflight lists them. */
const SIM_CORS_METHODS = ['GET', 'POST'] as const;

/** poem's default Access-Control-Max-Age, which a node keeps. */
export const SIM_CORS_MAX_AGE_SECONDS = 86400;

/**
 * The reply to `req` with the node's CORS layer around `inner`: a request
 * without Origin is not a CORS request and passes untouched; OPTIONS with Origin
 * is a preflight, answered here (the routes never see it); anything else gets
 * its reply with the CORS headers added.
 */
export function simCors(req: SimRequest, inner: () => SimReply): SimReply {
  const origin = req.headers.origin;
  if (origin === undefined) return inner();
  if (req.method === 'OPTIONS') return preflight(req.headers, origin);
  return withSimCors(req.headers, inner());
}

/** Adds the headers a node puts on an actual (not preflight) reply to a request with Origin. */
export function withSimCors(headers: IncomingHttpHeaders, out: SimReply): SimReply {
  const origin = headers.origin;
  if (origin === undefined) return out;
  out.headers['access-control-allow-origin'] = origin;
  out.headers['access-control-allow-credentials'] = 'true';
  // Any origin is allowed, so the answer depends on it. poem sets Vary (replacing
  // any other value), and only here: its preflight carries none.
  out.headers.vary = 'Origin';
  return out;
}

/**
 * The preflight: 200 with an empty body, or a 403 when the method asked for is
 * missing or not one a node allows. Methods are matched as written ("get" is
 * another method), as HTTP methods are.
 */
function preflight(headers: IncomingHttpHeaders, origin: string): SimReply {
  const method = headers['access-control-request-method'];
  if (method === undefined || !(SIM_CORS_METHODS as readonly string[]).includes(method)) {
    // No ledger headers: the node refuses before any handler reads its ledger.
    return reply(
      403,
      'application/json',
      simErrorBody(new SimError(403, 'web_framework_error', 'request-method not allowed')),
    );
  }
  const requested = headers['access-control-request-headers'];
  return {
    status: 200,
    headers: {
      'access-control-allow-origin': origin,
      // poem writes its (empty) list of exposed headers on every preflight: an empty value.
      'access-control-expose-headers': '',
      'access-control-max-age': String(SIM_CORS_MAX_AGE_SECONDS),
      'access-control-allow-methods': SIM_CORS_METHODS.join(', '),
      'access-control-allow-headers': requested ?? '*',
      'access-control-allow-credentials': 'true',
    },
    body: Buffer.alloc(0),
  };
}
