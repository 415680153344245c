// Fastify's and Node's own errors, turned into node-shaped ones (api.md §7: a
// framework's error JSON or HTML never reaches a client; 411/413/415 become 400).
// Messages are the proxy's own, chosen by the error's code: a library's message
// text is not a stable contract and never reaches a client.
import { NodeError } from '../errors.js';
import type { PublicRequest } from '../edge/message.js';

interface FrameworkError {
  code?: string;
  statusCode?: number;
  message?: string;
}

export function fromFrameworkError(err: unknown, bodyLimitBytes: number): NodeError {
  if (err instanceof NodeError) return err;
  const e = (err ?? {}) as FrameworkError;
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return NodeError.badRequest(`request body is larger than the limit of ${bodyLimitBytes} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return NodeError.badRequest('unsupported request content type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return NodeError.badRequest('request body length does not match its content-length');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return NodeError.badRequest('request body is empty where JSON is expected');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_INVALID_URL':
      return NodeError.badRequest('malformed request URL');
  }
  const status = e.statusCode ?? 500;
  if (status >= 400 && status < 500)
    return NodeError.badRequest(`malformed request${e.code === undefined ? '' : ` (${e.code})`}`);
  return NodeError.from(err);
}

/** Node's parser errors on a raw socket (bad framing, oversized headers). */
export function fromClientError(err: { code?: string; message?: string }): NodeError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return NodeError.badRequest('request headers are too large');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
    case 'HPE_INVALID_CHUNK_SIZE':
      return NodeError.badRequest('malformed chunked request body');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return NodeError.badRequest('request was not received in time');
  }
  return NodeError.badRequest(`malformed HTTP request${err.code === undefined ? '' : ` (${err.code})`}`);
}

/** What fastify answers for a route it does not have, node-shaped: an input error, without ledger headers. */
export function notFound(req: Pick<PublicRequest, 'method' | 'url'>): NodeError {
  return new NodeError(404, 'web_framework_error', `not found: ${req.method} ${(req.url ?? '').split('?')[0]}`, {
    reason: 'bad_input',
  });
}
