// One connection on the lane: it reads request heads and bodies off the socket,
// hands each request it accepts to the public entry (the handler node:http's
// requests go to), and writes the replies in their requests' order, corked
// across what one read brought. The first request it does not accept, and every
// byte after it, goes to node:http once every earlier reply is written; from then
// on node:http owns the socket. A client's half-close ends the connection once
// every request read before it is answered, as node:http does on this server
// (httpAllowHalfOpen: server.ts).
import type { Socket } from 'node:net';
import type { PublicHandler } from '../../edge/message.js';
import { HAND_OFF, type HeadLimits, type LaneHead, NEED_MORE, parseHead } from './head.js';
import { LaneReply, LaneRequest, type ReplySink } from './message.js';

const EMPTY = Buffer.alloc(0);

/** What a lane connection needs of the lane and the server around it. */
export interface ConnectionDeps {
  limits: HeadLimits;
  /** the server's request handler (it tracks the request on its connection, then the public entry serves it) */
  handle: PublicHandler;
  /** whether the entry serves a request line itself (a cached route): the lane takes no other */
  servesItself(method: string, url: string): boolean;
  /** node:http takes the socket: the bytes not yet read are already back in it */
  handOff(socket: Socket): void;
  /** node:http's 'clientError', for a request not received in time */
  clientError(err: Error & { code: string }, socket: Socket): void;
  /** the server's timeouts, read when each applies: keepAliveTimeout, and requestTimeout (head and body) */
  readonly keepAliveTimeout: number;
  readonly requestTimeout: number;
  /** the server was draining when the connection came: it closes once its replies are written */
  readonly draining: boolean;
  /** the connection ended, or went to node:http */
  gone(connection: LaneConnection): void;
}

export class LaneConnection implements ReplySink {
  /** bytes read and not yet taken by a request */
  private pending: Buffer = EMPTY;
  /** the head of a request whose body is still arriving */
  private waiting: LaneHead | undefined;
  /** replies in their requests' order, not yet written */
  private readonly replies: LaneReply[] = [];
  /**
   * node:http is to read the rest, once every earlier reply is written: those bytes
   * wait back in the socket, in front of what arrives later and of the client's
   * half-close, which the socket then holds back until node:http has read them
   */
  private handing = false;
  /** a reply ends the connection: nothing after its request is read, nothing after it written */
  private ending = false;
  /** paused while the socket's write buffer is above its high-water mark */
  private throttled = false;
  private requestTimer: NodeJS.Timeout | undefined;
  private readonly onData = (chunk: Buffer): void => this.read(chunk);
  private readonly onDrain = (): void => this.unthrottle();
  private readonly onTimeout = (): void => {
    if (this.idle) this.socket.destroy();
  };
  /** the server is draining (the lane says when it starts): the connection closes once idle */
  private draining: boolean;
  /** a request was served: the keep-alive timer is on */
  private served = false;
  private readonly onClose = (): void => this.closed();
  private readonly onEnd = (): void => this.ended();
  private readonly onError = (): void => void this.socket.destroy();

  /** the server's settings as they are now, for the replies' Keep-Alive header */
  readonly server: Pick<ConnectionDeps, 'keepAliveTimeout'>;

  constructor(
    readonly socket: Socket,
    private readonly deps: ConnectionDeps,
  ) {
    this.server = deps;
    this.draining = deps.draining;
    socket.setNoDelay(true);
    socket.on('data', this.onData);
    socket.on('drain', this.onDrain);
    socket.on('timeout', this.onTimeout);
    socket.on('close', this.onClose);
    socket.on('error', this.onError);
    socket.on('end', this.onEnd);
    this.startRequestTimer();
  }

  /** The server drains: from now on the connection closes once idle, and at once when it is. */
  drain(): void {
    this.draining = true;
    if (this.idle) this.socket.destroy();
  }

  /** No request in progress and no reply unwritten: a drain closes it at once. */
  private get idle(): boolean {
    return this.pending.length === 0 && this.waiting === undefined && this.replies.length === 0;
  }

  private read(chunk: Buffer): void {
    if (this.ending) return;
    const socket = this.socket;
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    socket.cork();
    try {
      while (at < buf.length && !this.ending) {
        const head = this.waiting ?? parseHead(buf, at, this.deps.limits);
        if (head === NEED_MORE) break;
        if (head === HAND_OFF || (head !== this.waiting && !this.deps.servesItself(head.method, head.url))) {
          this.handOff(buf.subarray(at));
          buf = EMPTY;
          at = 0;
          break;
        }
        const end = at + head.headLength + head.bodyLength;
        if (end > buf.length) {
          this.waiting = head;
          break;
        }
        this.waiting = undefined;
        const body = head.bodyLength === 0 ? EMPTY : buf.subarray(at + head.headLength, end);
        at = end;
        this.serve(head, body);
      }
    } finally {
      this.pending = at === 0 ? buf : buf.subarray(at);
      // The clock of the next request starts with its first byte (the first request's, when the connection opens).
      if (this.pending.length === 0 && this.waiting === undefined) this.stopRequestTimer();
      else if (this.requestTimer === undefined && !this.handing) this.startRequestTimer();
      socket.uncork();
    }
    this.afterWrites();
  }

  private serve(head: LaneHead, body: Buffer): void {
    const req = new LaneRequest(head, this.socket, body);
    const res = new LaneReply(req, this, head.keepAlive);
    // A request that closes the connection is the last one read (node:http's parser reads none after it).
    if (!head.keepAlive) this.ending = true;
    this.replies.push(res);
    if (!this.served) {
      // Idle between requests for server.keepAliveTimeout, it closes (an inactivity timer: onTimeout spares one in use).
      this.served = true;
      this.socket.setTimeout(this.deps.keepAliveTimeout);
    }
    this.deps.handle(req, res);
  }

  /** A reply is whole: it and every whole reply after it are written, in order. */
  ready(reply: LaneReply): void {
    if (this.replies[0] !== reply) return;
    const socket = this.socket;
    const replies = this.replies;
    while (replies.length > 0 && replies[0]!.bytes !== undefined) {
      const next = replies.shift()!;
      if (socket.destroyed || socket.writableEnded) {
        next.emit('close');
        continue;
      }
      socket.write(next.bytes!);
      next.bytes = undefined;
      next.sent();
      if (next.last) {
        this.ending = true;
        socket.destroySoon();
        for (const dropped of replies.splice(0)) dropped.emit('close');
      }
    }
    this.afterWrites();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** What follows a batch of writes: backpressure, the hand-off once the replies before it are out, the keep-alive timer. */
  private afterWrites(): void {
    const socket = this.socket;
    if (socket.destroyed || this.ending) return;
    // Replies the client is not reading stop the reading of its requests (those answered at once included).
    if (!this.throttled && socket.writableLength > socket.writableHighWaterMark) {
      this.throttled = true;
      socket.pause();
    }
    if (this.replies.length > 0) return;
    if (this.handing) return this.release();
    // Draining, a connection is closed once idle (node:http's closeIdleConnections).
    if (this.draining && this.idle) {
      this.ending = true;
      socket.destroySoon();
    }
  }

  private unthrottle(): void {
    if (!this.throttled) return;
    this.throttled = false;
    if (!this.handing && !this.ending) this.socket.resume();
  }

  /**
   * The request at the start of `bytes` is node:http's: reading stops until the
   * replies before it are written, and the bytes go back in the socket at once
   * (unshifted later, after the socket ended, they would be refused).
   */
  private handOff(bytes: Buffer): void {
    this.handing = true;
    this.socket.pause();
    this.socket.unshift(bytes);
  }

  /** node:http takes the socket, the bytes read and not answered in front of it. */
  private release(): void {
    const socket = this.socket;
    this.detach();
    this.deps.handOff(socket);
    socket.resume();
  }

  /** Stops listening to the socket: it is closed, or node:http's. */
  private detach(): void {
    const socket = this.socket;
    this.stopRequestTimer();
    socket.setTimeout(0);
    socket.off('data', this.onData);
    socket.off('drain', this.onDrain);
    socket.off('timeout', this.onTimeout);
    socket.off('close', this.onClose);
    socket.off('error', this.onError);
    socket.off('end', this.onEnd);
    this.deps.gone(this);
  }

  /**
   * The client half-closed, as node:http takes it on this server: a request cut
   * short is its parser's error at the end of the stream (answered after the
   * replies before it); else every request read is answered, and the connection
   * ends after the last reply, or now when none is due.
   */
  private ended(): void {
    if (!this.ending && (this.pending.length > 0 || this.waiting !== undefined)) {
      this.ending = true;
      this.stopRequestTimer();
      return this.deps.clientError(
        Object.assign(new Error('Parse Error: Invalid EOF state'), { code: 'HPE_INVALID_EOF_STATE' }),
        this.socket,
      );
    }
    this.ending = true;
    const last = this.replies.at(-1);
    if (last !== undefined) last.last = true;
    else if (this.socket.writable) this.socket.end();
  }

  private closed(): void {
    this.detach();
    for (const dropped of this.replies.splice(0)) dropped.emit('close');
  }

  /** A request must arrive whole within server.requestTimeout (node:http's headersTimeout and requestTimeout). */
  private startRequestTimer(): void {
    const ms = this.deps.requestTimeout;
    if (ms <= 0) return;
    this.requestTimer = setTimeout(() => this.timedOut(), ms);
    this.requestTimer.unref();
  }

  private stopRequestTimer(): void {
    if (this.requestTimer === undefined) return;
    clearTimeout(this.requestTimer);
    this.requestTimer = undefined;
  }

  private timedOut(): void {
    this.requestTimer = undefined;
    if (this.ending || this.handing) return;
    this.ending = true;
    this.deps.clientError(
      Object.assign(new Error('request was not received in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
      this.socket,
    );
  }
}
