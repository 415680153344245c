// The lane (server.lane): the public listener's sockets are read here first.
// Requests for the cached routes that the strict parser (head.ts) accepts are
// served on the lane by the server's own request handler, the same handler node:http's
// requests go to; the first request it does not accept, and the rest of its
// connection, go to node:http with the bytes already read (socket.unshift, then
// the server's 'connection' event), and node:http answers them as it would have
// from the start. A faster transport under the same entry, never a second one.
import { maxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { PublicHandler } from '../../edge/message.js';
import { LaneConnection } from './connection.js';

export interface LaneDeps {
  /** the server's request handler */
  handle: PublicHandler;
  /** whether the entry serves a request line itself (a cached route): the lane takes no other */
  servesItself(method: string, url: string): boolean;
  /** server.bodyLimitBytes: a longer body is node:http's to refuse */
  bodyLimitBytes: number;
}

/** Fields beyond this many are node:http's to read (it keeps 2000 by default). */
const MAX_FIELDS = 100;

type ConnectionListener = (socket: Socket) => void;

/** The lane in front of each server, for tests that count what it holds. */
const installed = new WeakMap<Server, Lane>();

export class Lane {
  private readonly connections = new Set<LaneConnection>();
  /** sockets the lane has seen: when one comes back through 'connection', it is node:http's */
  private readonly seen = new WeakSet<Socket>();
  private draining = false;

  private constructor(
    private readonly server: Server,
    private readonly deps: LaneDeps,
  ) {}

  /** Puts the lane in front of node:http's own 'connection' listener on `server`. */
  static install(server: Server, deps: LaneDeps): Lane {
    const lane = new Lane(server, deps);
    installed.set(server, lane);
    const [node] = server.listeners('connection') as ConnectionListener[];
    if (node === undefined) throw new Error('node:http has no connection listener to put the lane in front of');
    server.removeListener('connection', node);
    server.prependListener('connection', (socket: Socket) => {
      if (lane.seen.has(socket)) return node.call(server, socket);
      lane.seen.add(socket);
      lane.accept(socket);
    });
    return lane;
  }

  private accept(socket: Socket): void {
    const server = this.server;
    const limits = {
      maxHeadBytes: (server as { maxHeaderSize?: number }).maxHeaderSize ?? maxHeaderSize,
      maxFields: Math.min(MAX_FIELDS, server.maxHeadersCount || MAX_FIELDS),
      maxBodyBytes: this.deps.bodyLimitBytes,
    };
    const connection = new LaneConnection(socket, {
      limits,
      handle: this.deps.handle,
      servesItself: this.deps.servesItself,
      handOff: (s) => server.emit('connection', s),
      clientError: (err, s) => server.emit('clientError', err, s),
      get keepAliveTimeout() {
        return server.keepAliveTimeout;
      },
      get requestTimeout() {
        return server.requestTimeout;
      },
      draining: this.draining,
      gone: (c) => this.connections.delete(c),
    });
    this.connections.add(connection);
  }

  /** From now on each connection closes once idle; those idle now close at once. */
  drain(): void {
    this.draining = true;
    for (const connection of this.connections) connection.drain();
  }

  /** The drain's deadline: every connection still on the lane closes. */
  closeAll(): void {
    for (const connection of this.connections) connection.socket.destroy();
  }

  /** connections on the lane (a hand-off still pending is one), for tests */
  get size(): number {
    return this.connections.size;
  }

  /** The lane in front of `server`, if server.lane put one there. */
  static of(server: Server): Lane | undefined {
    return installed.get(server);
  }
}
