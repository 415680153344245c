// Requests refused for how they are framed, before anything else is done for
// them, on every path: HTTP/0.9-style request lines and HTTP/1.1 without Host
// (400), and transfer codings the proxy does not implement (501, RFC 9112 §6.1:
// Node's parser removes the chunked framing and leaves any other coding applied,
// so a gzip-coded body would reach a route, or a node, as if it were plain).
import type { PublicRequest } from '../edge/message.js';
import { NodeError } from '../errors.js';

export function framingError(req: PublicRequest): NodeError | null {
  if (req.httpVersionMajor !== 1) return NodeError.badRequest(`unsupported HTTP version ${req.httpVersion}`);
  const headers = req.headers;
  if (headers.host === undefined && req.httpVersionMinor === 1) return NodeError.badRequest('missing Host header');
  const coding = headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
    return new NodeError(
      501,
      'web_framework_error',
      `unsupported transfer coding ${JSON.stringify(coding)}: only chunked is implemented`,
      { reason: 'not_implemented' },
    );
  }
  return null;
}
