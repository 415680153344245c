// What the public server knows of its connections, and what it does with them
// that Node does not: a graceful drain, a reply to bytes the parser refused sent
// after the reply of the request before them, and a connection whose reply ends
// it read no further.
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { fromClientError } from './framework-errors.js';
import { rawErrorResponse } from '../reply/writer.js';
import type { PublicReply, PublicRequest } from '../edge/message.js';

/**
 * What the server knows of its connections, kept by its own request handler
 * (Node exposes neither): the reply in progress on each socket, and whether the
 * server is draining, when every reply closes its connection.
 */
export class Connections {
  private draining = false;
  /** open connections, tracked per connection (not per request: hits stay cheap) */
  private readonly sockets = new Set<Duplex>();
  /** the latest reply begun on each connection */
  private readonly replying = new WeakMap<Duplex, PublicReply>();
  /** connections whose reply in progress is their last (endWith) */
  private readonly ending = new WeakSet<Duplex>();

  /** A connection opened: it is known until it closes. */
  open(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /**
   * Whether a request just parsed is answered: false when it came after a reply
   * that ends the connection (nothing is done for it). When it is, its reply is
   * what is in progress on its connection.
   */
  answers(req: PublicRequest, res: PublicReply): boolean {
    if (this.ending.has(req.socket)) return false;
    if (this.draining) res.setHeader('connection', 'close');
    this.replying.set(req.socket, res);
    return true;
  }

  /**
   * `res` is the last reply on its connection: what follows its request's head
   * cannot be framed (an unknown transfer coding) or is left unread (a body over
   * the limit), so nothing after it is a request. Reading stops; a request the
   * parser already took from the same bytes is dropped unanswered, bytes it
   * refuses get no reply of their own, and the connection closes once the reply
   * is written.
   */
  endWith(res: PublicReply): void {
    const socket = res.req.socket;
    this.ending.add(socket);
    socket.pause();
    res.once('finish', () => closeWhenWritten(socket));
  }

  /** Whether the reply in progress on `socket` is its last (endWith). */
  isEnding(socket: Duplex): boolean {
    return this.ending.has(socket);
  }

  /** From now on every reply closes its connection, those in progress included. */
  drain(): void {
    this.draining = true;
    for (const socket of this.sockets) {
      const res = this.replying.get(socket);
      if (res !== undefined && !res.headersSent) res.setHeader('connection', 'close');
    }
  }

  /** The reply in progress on `socket`, if any. */
  inFlight(socket: Duplex): PublicReply | undefined {
    const res = this.replying.get(socket);
    return res !== undefined && !res.writableFinished ? res : undefined;
  }
}

/**
 * Stops accepting, lets requests in flight finish, and closes keep-alive
 * connections as soon as they fall idle (server.close() alone closes only those
 * idle at the moment it is called; the rest would linger for the keep-alive
 * timeout). Every reply sent from now on says `Connection: close`. At
 * `deadlineMs` the connections still open are closed, whatever the clients do.
 */
export async function closeGracefully(app: FastifyInstance, deadlineMs: number): Promise<void> {
  const draining = drainingServers.get(app);
  draining?.drain();
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  const deadline = setTimeout(() => {
    app.server.closeAllConnections();
    draining?.closeAll();
  }, deadlineMs);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
}

/**
 * How closeGracefully tells a server built here that it is draining, and that its
 * deadline came (for the connections node:http does not know: the lane's).
 */
export const drainingServers = new WeakMap<FastifyInstance, { drain(): void; closeAll(): void }>();

const IDLE_SWEEP_MS = 25;

/**
 * Bytes the parser cannot read. When they follow a complete request on the same
 * connection (pipelined garbage, a body longer than its Content-Length), that
 * request's reply goes first; then the 400, or for bytes after "Connection:
 * close" nothing, and the connection ends.
 */
export function answerClientError(err: { code?: string }, socket: Duplex, connections: Connections): void {
  // After a reply that ends the connection nothing is a request: no second reply, and the connection closes once that reply is written.
  if (connections.isEnding(socket)) {
    if (connections.inFlight(socket) === undefined) closeWhenWritten(socket);
    return;
  }
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    if (!socket.writable || err.code === 'ECONNRESET') socket.destroy();
    else if (err.code === 'HPE_CLOSED_CONNECTION') socket.end();
    else socket.end(rawErrorResponse(fromClientError(err)));
  };
  afterRepliesDue(socket, connections, finish);
}

/**
 * Calls `then` once every reply due on `socket` is written (or its connection
 * closed): the reply in progress when its request came whole or its reply is
 * ended; when node:http's reply to a request cut short waits behind earlier ones,
 * those first. A reply to a request whose own body broke never comes: it is not
 * waited for.
 */
function afterRepliesDue(socket: Duplex, connections: Connections, then: () => void): void {
  const inFlight = connections.inFlight(socket) as (PublicReply & Partial<ServerResponse>) | undefined;
  if (inFlight === undefined) return then();
  if (inFlight.req.complete || inFlight.writableEnded === true) {
    beforeNodeHttp(inFlight, 'finish', then);
    beforeNodeHttp(inFlight, 'close', then);
    return;
  }
  // node:http gives a reply the socket (its 'socket' event) once every reply before it is written.
  if (inFlight.socket === null) return void inFlight.once('socket', () => afterRepliesDue(socket, connections, then));
  then();
}

/**
 * Listens to a reply ahead of node:http's own listener, which ends the socket
 * after the last reply due when the client half-closed: what `listener` writes
 * then still goes out. The lane ends a connection only after its reply's listeners ran.
 */
function beforeNodeHttp(reply: PublicReply, event: 'finish' | 'close', listener: () => void): void {
  const emitter = reply as PublicReply & Partial<ServerResponse>;
  if (emitter.prependOnceListener !== undefined) emitter.prependOnceListener(event, listener);
  else reply.once(event, listener);
}

/** Ends `socket` once what was written to it is flushed, then destroys it: the client may never close its side. */
function closeWhenWritten(socket: Duplex): void {
  if (socket.destroyed) return;
  if (socket.writableFinished) return void socket.destroy();
  socket.once('finish', () => socket.destroy());
  if (!socket.writableEnded) socket.end();
}
