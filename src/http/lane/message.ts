// The lane's request and reply: what the entry path needs of a message
// (edge/message.ts), in place of node:http's IncomingMessage and ServerResponse.
// A reply's head is written as node:http's ServerResponse writes it, byte for
// byte: the status line, the headers in the order given (those set before
// writeHead first), Date, and Connection with Keep-Alive; its head and body go
// to the connection as one buffer.
import { type IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { PublicReply, PublicRequest } from '../../edge/message.js';
import type { LaneHead } from './head.js';

export class LaneRequest implements PublicRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor: number;
  readonly complete = true;

  constructor(
    head: LaneHead,
    readonly socket: Socket,
    readonly body: Buffer,
  ) {
    this.method = head.method;
    this.url = head.url;
    this.headers = head.headers as IncomingHttpHeaders;
    this.httpVersionMinor = head.minor;
  }

  get httpVersion(): string {
    return this.httpVersionMinor === 1 ? '1.1' : '1.0';
  }
}

/** Where a reply goes once it is whole: its connection, which writes replies in their requests' order. */
export interface ReplySink {
  /** `reply` is whole (its bytes are set) */
  ready(reply: LaneReply): void;
  /** the reply gave up its connection (node:http's res.destroy()) */
  destroy(): void;
  /** node:http's server.keepAliveTimeout, for the Keep-Alive header */
  readonly keepAliveTimeout: number;
}

/** Connection: close, as node:http recognises it in a reply's own headers. */
const CONNECTION_CLOSE = /(?:^|\W)close(?:$|\W)/i;

export class LaneReply implements PublicReply {
  statusCode = 200;
  headersSent = false;
  writableFinished = false;
  /** the head and body to write, once the reply is whole */
  bytes: Buffer | undefined;
  /** the connection closes after this reply */
  last: boolean;
  /** headers set before writeHead (the drain's Connection: close): [lower-case name, name, value] */
  private preset: Array<[string, string, string]> | undefined;
  private head = '';
  private listeners: Array<[string, () => void]> | undefined;

  constructor(
    readonly req: LaneRequest,
    private readonly sink: ReplySink,
    /** what the request asked: HTTP/1.1 without Connection: close */
    private readonly keepAlive: boolean,
  ) {
    this.last = !keepAlive;
  }

  setHeader(name: string, value: string): this {
    const lower = name.toLowerCase();
    const preset = (this.preset ??= []);
    const at = preset.findIndex((entry) => entry[0] === lower);
    if (at >= 0) preset[at] = [lower, name, value];
    else preset.push([lower, name, value]);
    return this;
  }

  writeHead(status: number, headers: string[]): this {
    this.statusCode = status;
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    let date = false;
    let connection: string | undefined;
    let length = false;
    let defaultKeepAlive = true;
    const take = (name: string, value: string): void => {
      head += `${name}: ${value}\r\n`;
      if (name.length < 4 || name.length > 17) return;
      switch (name.toLowerCase()) {
        case 'date':
          date = true;
          break;
        case 'connection':
          connection = value;
          break;
        case 'content-length':
          length = true;
          break;
        case 'keep-alive':
          defaultKeepAlive = false;
          break;
      }
    };
    if (this.preset === undefined) {
      for (let i = 0; i < headers.length; i += 2) take(headers[i]!, headers[i + 1]!);
    } else {
      // As node:http does when headers were set before writeHead: each name of `headers` replaces its entry.
      for (let i = 0; i < headers.length; i += 2) this.setHeader(headers[i]!, headers[i + 1]!);
      for (const [, name, value] of this.preset) take(name, value);
    }
    if (!length) throw new Error('a lane reply states its Content-Length');
    if (!date) head += `Date: ${utcDate()}\r\n`;
    if (connection !== undefined) {
      if (CONNECTION_CLOSE.test(connection)) this.last = true;
    } else if (this.keepAlive) {
      head += 'Connection: keep-alive\r\n';
      const timeout = this.sink.keepAliveTimeout;
      if (timeout && defaultKeepAlive) head += `Keep-Alive: timeout=${Math.floor(timeout / 1000)}\r\n`;
    } else {
      head += 'Connection: close\r\n';
    }
    this.head = head + '\r\n';
    this.headersSent = true;
    return this;
  }

  end(body?: Buffer | string): this {
    const chunk = typeof body === 'string' ? Buffer.from(body) : body;
    const status = this.statusCode;
    const hasBody =
      chunk !== undefined && this.req.method !== 'HEAD' && status !== 204 && status !== 304 && status >= 200;
    const headLength = Buffer.byteLength(this.head, 'latin1');
    const bytes = Buffer.allocUnsafe(headLength + (hasBody ? chunk.length : 0));
    bytes.write(this.head, 0, headLength, 'latin1');
    if (hasBody) chunk.copy(bytes, headLength);
    this.bytes = bytes;
    this.sink.ready(this);
    return this;
  }

  destroy(): this {
    this.sink.destroy();
    return this;
  }

  once(event: 'finish' | 'close', listener: () => void): this {
    (this.listeners ??= []).push([event, listener]);
    return this;
  }

  /** Its bytes went to the connection ('finish'), or the connection closed ('close'). */
  emit(event: 'finish' | 'close'): void {
    if (event === 'finish') this.writableFinished = true;
    const listeners = this.listeners;
    if (listeners === undefined) return;
    this.listeners = listeners.filter(([name]) => name !== event);
    for (const [name, listener] of listeners) if (name === event) listener();
  }
}

/** node:http's Date value: one string a second. */
let dateCache: string | undefined;
function utcDate(): string {
  if (dateCache === undefined) {
    const now = new Date();
    dateCache = now.toUTCString();
    setTimeout(() => (dateCache = undefined), 1000 - now.getMilliseconds()).unref();
  }
  return dateCache;
}
