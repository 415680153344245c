// The lane's request and reply: what the entry path needs of a message
// (edge/message.ts), in place of node:http's IncomingMessage and ServerResponse.
// A reply's head is written as node:http's ServerResponse writes it, byte for
// byte: the status line, the headers in the order given (those set before
// writeHead first), Date, and Connection with Keep-Alive; its head and body go
// to the connection as one buffer.
import { type IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { HeadBlock, PublicReply, PublicRequest } from '../../edge/message.js';
import type { LaneHead } from './head.js';

export class LaneRequest implements PublicRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor: number;
  readonly complete = true;
  /** the lane takes only requests for a cached route (lane.ts) */
  readonly servedByEntry = true;

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
  /** the server's settings as they are now: node:http's server.keepAliveTimeout, for the Keep-Alive header */
  readonly server: { readonly keepAliveTimeout: number };
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
  /** the head in order: kept bytes, and text serialised for this reply */
  private head: Array<Buffer | string> = [];
  private listeners: Array<[string, () => void]> | undefined;
  /** what the head's own lines say of the lines node:http adds */
  private date = false;
  private connection: string | undefined = undefined;
  private length = false;
  private defaultKeepAlive = true;

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
    let lines = '';
    if (this.preset === undefined) {
      for (let i = 0; i < headers.length; i += 2) lines += this.line(headers[i]!, headers[i + 1]!);
    } else {
      // As node:http does when headers were set before writeHead: each name of `headers` replaces its entry.
      for (let i = 0; i < headers.length; i += 2) this.setHeader(headers[i]!, headers[i + 1]!);
      for (const [, name, value] of this.preset) lines += this.line(name, value);
    }
    return this.headed(status, [statusLine(status), lines]);
  }

  /** The head as blocks: kept bytes go as they are, the other lines are serialised here. */
  writeBlocks(status: number, blocks: readonly HeadBlock[]): this {
    if (this.preset !== undefined) {
      const flat: string[] = [];
      for (const block of blocks) for (const item of block.pairs) flat.push(item);
      return this.writeHead(status, flat);
    }
    const head: Array<Buffer | string> = [statusLine(status)];
    let lines = '';
    for (const block of blocks) {
      const bytes = block.bytes;
      if (bytes !== undefined) {
        if (lines !== '') head.push(lines);
        lines = '';
        head.push(bytes);
        continue;
      }
      const pairs = block.pairs;
      for (let i = 0; i < pairs.length; i += 2) lines += this.line(pairs[i]!, pairs[i + 1]!);
    }
    if (lines !== '') head.push(lines);
    return this.headed(status, head);
  }

  /** One header line, noting what it says of the lines node:http adds. */
  private line(name: string, value: string): string {
    if (name.length >= 4 && name.length <= 17) {
      switch (name.toLowerCase()) {
        case 'date':
          this.date = true;
          break;
        case 'connection':
          this.connection = value;
          break;
        case 'content-length':
          this.length = true;
          break;
        case 'keep-alive':
          this.defaultKeepAlive = false;
          break;
      }
    }
    return `${name}: ${value}\r\n`;
  }

  /** The head's own lines are in `head`: node:http's Date and Connection lines, and the blank line, follow. */
  private headed(status: number, head: Array<Buffer | string>): this {
    this.statusCode = status;
    if (!this.length) throw new Error('a lane reply states its Content-Length');
    if (!this.date) head.push(dateLine());
    const connection = this.connection;
    if (connection !== undefined) {
      if (CONNECTION_CLOSE.test(connection)) this.last = true;
      head.push(CRLF);
    } else if (this.keepAlive) {
      head.push(keepAliveLines(this.defaultKeepAlive ? this.sink.server.keepAliveTimeout : 0));
    } else {
      head.push(CLOSE_LINES);
    }
    this.head = head;
    this.headersSent = true;
    return this;
  }

  end(body?: Buffer | string): this {
    const chunk = typeof body === 'string' ? Buffer.from(body) : body;
    const status = this.statusCode;
    const hasBody =
      chunk !== undefined && this.req.method !== 'HEAD' && status !== 204 && status !== 304 && status >= 200;
    const head = this.head;
    let headLength = 0;
    for (let i = 0; i < head.length; i++) headLength += head[i]!.length;
    // One buffer, one write: a reply's head and body are copied once, into it.
    const bytes = Buffer.allocUnsafe(headLength + (hasBody ? chunk.length : 0));
    let at = 0;
    for (let i = 0; i < head.length; i++) {
      const part = head[i]!;
      if (typeof part === 'string') at += bytes.write(part, at, 'latin1');
      else {
        bytes.set(part, at);
        at += part.length;
      }
    }
    if (hasBody) bytes.set(chunk, at);
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

  /** Its bytes went to the connection: 'finish', then 'close'. */
  sent(): void {
    this.emit('finish');
    this.emit('close');
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

const CRLF = Buffer.from('\r\n', 'latin1');
const CLOSE_LINES = Buffer.from('Connection: close\r\n\r\n', 'latin1');

/** Status lines by status, serialised once. */
const statusLines = new Map<number, Buffer>();
function statusLine(status: number): Buffer {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = Buffer.from(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`, 'latin1');
    statusLines.set(status, line);
  }
  return line;
}

/** node:http's lines of a kept-alive connection and the blank line, for the last keepAliveTimeout seen (0: no Keep-Alive line). */
let keepAliveMs = -1;
let keepAliveBytes = CRLF;
function keepAliveLines(timeoutMs: number): Buffer {
  if (timeoutMs !== keepAliveMs) {
    keepAliveMs = timeoutMs;
    const keepAlive = timeoutMs ? `Keep-Alive: timeout=${Math.floor(timeoutMs / 1000)}\r\n` : '';
    keepAliveBytes = Buffer.from(`Connection: keep-alive\r\n${keepAlive}\r\n`, 'latin1');
  }
  return keepAliveBytes;
}

/** node:http's Date line: serialised once a second. */
let dateCache: Buffer | undefined;
function dateLine(): Buffer {
  if (dateCache === undefined) {
    const now = new Date();
    dateCache = Buffer.from(`Date: ${now.toUTCString()}\r\n`, 'latin1');
    setTimeout(() => (dateCache = undefined), 1000 - now.getMilliseconds()).unref();
  }
  return dateCache;
}
