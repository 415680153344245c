// A request's whole body, in any framing Node's parser accepts (Content-Length
// or chunked), bounded by server.bodyLimitBytes. The served routes' bodies are
// small and parsed whole, so they are collected, not streamed.
import type { IncomingMessage } from 'node:http';
import { NodeError } from '../errors.js';

const EMPTY = Buffer.alloc(0);

/**
 * Calls `done` once: with the body when it ended; with a NodeError when it is
 * larger than `limit` (the rest is left unread: the reply must close the
 * connection); with null when the request broke before its end (a framing error
 * is answered by the server's client-error handler, and a client that went away
 * gets nothing).
 */
export function readBody(req: IncomingMessage, limit: number, done: (body: Buffer | NodeError | null) => void): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return done(tooLarge(limit));
  if (declared === '0' || (declared === undefined && req.headers['transfer-encoding'] === undefined)) {
    // Nothing to read: the stream only ends.
    return done(EMPTY);
  }
  // Nearly every body arrives in one chunk: a list is made only for a second one.
  let first: Buffer | undefined;
  let rest: Buffer[] | undefined;
  let received = 0;
  let settled = false;
  const settle = (outcome: Buffer | NodeError | null): void => {
    if (settled) return;
    settled = true;
    done(outcome);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > limit) {
      req.off('data', onData);
      req.pause();
      return settle(tooLarge(limit));
    }
    if (first === undefined) first = chunk;
    else (rest ??= [first]).push(chunk);
  };
  req.on('data', onData);
  req.on('end', () => settle(rest !== undefined ? Buffer.concat(rest, received) : (first ?? EMPTY)));
  req.on('error', () => settle(null));
}

function tooLarge(limit: number): NodeError {
  return NodeError.badRequest(`request body is larger than the limit of ${limit} bytes`);
}
