// HTTP/1.1 on a raw TCP socket: requests a client library would refuse or fix
// (absolute-form targets, CR/LF or NUL in values, raw UTF-8 in the request line,
// hop-by-hop headers, broken framing, truncated bodies), one reply parser for them
// all, and a decoy server that must never be called. Two ways to send: rawHttp
// wants one complete reply and rejects otherwise (exact-reply tests); rawExchange
// never rejects and says what happened (the fuzzers: a reply, a close without one,
// a hang). Cleanup is registered where things are created.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';

export interface RawReply {
  statusLine: string;
  status: number;
  /** lower-case names; repeated headers joined with ', ' */
  headers: Record<string, string>;
  /** [name, value] as sent, in order */
  headerLines: Array<[string, string]>;
  /** the body, de-chunked */
  body: Buffer;
}

export interface RawOutcome {
  /** the first complete final reply, or null when none came */
  reply: RawReply | null;
  /** the server closed (or reset) the connection before a complete reply */
  closedWithoutReply: boolean;
  /** we half-closed our side to signal the end of the request */
  halfClosed: boolean;
  /** no reply and no close within the time limit */
  timedOut: boolean;
  /** everything the server sent */
  received: Buffer;
}

export interface RawExchangeOptions {
  /**
   * Half-close right after writing: for a request we know is incomplete (a body
   * shorter than announced), so the server sees the end of the stream. Node's http
   * server, as the sim runs it, ends a connection whose client half-closed after a
   * complete request without answering it (the proxy answers it), so complete
   * requests are not half-closed at once.
   */
  halfCloseAtOnce?: boolean;
  /** half-close when no reply came within this many ms (default 400; Infinity: never) */
  halfCloseAfterMs?: number;
  /** give up this many ms after writing (default 4000) */
  timeoutMs?: number;
  /** the request is a HEAD: its reply has headers only */
  head?: boolean;
  /** read until the server closes and return every reply (see rawReplies) */
  untilClose?: boolean;
}

/** Splits off the first reply of `buf`; null while it is incomplete (unless `final`). */
function splitReply(buf: Buffer, final: boolean, noBody: boolean): { reply: RawReply; rest: Buffer } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  const headerLines: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const at = line.indexOf(':');
    if (at < 0) continue;
    const name = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    headerLines.push([name, value]);
    const lower = name.toLowerCase();
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  const statusLine = lines[0];
  const status = Number(statusLine.split(' ')[1]);
  const rest = buf.subarray(end + 4);
  if (noBody || (status >= 100 && status < 200) || status === 204 || status === 304)
    return { reply: { statusLine, status, headers, headerLines, body: Buffer.alloc(0) }, rest };
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
    const body = dechunk(rest);
    if (body === null)
      return final ? { reply: { statusLine, status, headers, headerLines, body: rest }, rest: Buffer.alloc(0) } : null;
    return { reply: { statusLine, status, headers, headerLines, body: body.body }, rest: rest.subarray(body.used) };
  }
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (rest.length < length)
      return final ? { reply: { statusLine, status, headers, headerLines, body: rest }, rest: Buffer.alloc(0) } : null;
    return {
      reply: { statusLine, status, headers, headerLines, body: rest.subarray(0, length) },
      rest: rest.subarray(length),
    };
  }
  return final ? { reply: { statusLine, status, headers, headerLines, body: rest }, rest: Buffer.alloc(0) } : null;
}

/** A complete chunked body and the bytes it used, or null while it is incomplete. */
function dechunk(buf: Buffer): { body: Buffer; used: number } | null {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', pos);
    if (lineEnd < 0) return null;
    const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1').split(';')[0].trim(), 16);
    if (!Number.isFinite(size)) return null;
    pos = lineEnd + 2;
    if (size === 0) {
      const trailerEnd = buf.indexOf('\r\n', pos);
      return trailerEnd < 0 ? null : { body: Buffer.concat(parts), used: trailerEnd + 2 };
    }
    if (buf.length < pos + size + 2) return null;
    parts.push(buf.subarray(pos, pos + size));
    pos += size + 2;
  }
}

/** Every reply in `buf`, in order, interim 1xx replies included; the last may be partial when `final`. */
export function rawReplies(buf: Buffer, final: boolean, noBody = false): RawReply[] {
  const out: RawReply[] = [];
  let rest = buf;
  for (;;) {
    const next = splitReply(rest, final, noBody);
    if (next === null) return out;
    out.push(next.reply);
    if (next.rest.length === rest.length) return out;
    rest = next.rest;
    if (rest.length === 0) return out;
  }
}

/** The first complete final reply (1xx skipped); null while there is none. */
function parseFirstReply(buf: Buffer, final: boolean, noBody = false): RawReply | null {
  return rawReplies(buf, final, noBody).find((r) => r.status < 100 || r.status >= 200) ?? null;
}

/** Writes `data` on a fresh connection to 127.0.0.1:port and reads the first final reply. Never rejects. */
export function rawExchange(
  port: number,
  data: Buffer | string,
  options: RawExchangeOptions = {},
): Promise<RawOutcome> {
  const halfCloseAfterMs = options.halfCloseAfterMs ?? 400;
  const timeoutMs = options.timeoutMs ?? 4000;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let halfClosed = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (outcome: Omit<RawOutcome, 'received' | 'halfClosed'>): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      socket.destroy();
      resolve({ ...outcome, halfClosed, received });
    };
    const halfClose = (): void => {
      if (halfClosed || settled) return;
      halfClosed = true;
      socket.end();
    };
    socket.on('connect', () => {
      socket.write(data, () => {
        if (options.halfCloseAtOnce) halfClose();
      });
      if (!options.untilClose && Number.isFinite(halfCloseAfterMs))
        timers.push(setTimeout(halfClose, halfCloseAfterMs));
      timers.push(
        setTimeout(
          () =>
            finish({ reply: parseFirstReply(received, true, options.head), closedWithoutReply: false, timedOut: true }),
          timeoutMs,
        ),
      );
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (options.untilClose) return;
      const reply = parseFirstReply(received, false, options.head);
      if (reply !== null) finish({ reply, closedWithoutReply: false, timedOut: false });
    });
    const closed = (): void => {
      const reply = parseFirstReply(received, true, options.head);
      finish({ reply, closedWithoutReply: reply === null, timedOut: false });
    };
    socket.on('end', closed);
    socket.on('close', closed);
    // A reset after a reply was read is fine; without a reply it counts as closed.
    socket.on('error', closed);
  });
}

/**
 * Sends `request` as-is on a fresh TCP connection and reads one complete HTTP
 * reply. Rejects when the connection closes without one (or mid-body), or after
 * timeoutMs. It never half-closes: a server may drop a request whose client did
 * (Node's http server by default, as the sim runs it).
 */
export async function rawHttp(base: string, request: string | Buffer, timeoutMs = 5000): Promise<RawReply> {
  const head = Buffer.from(request).subarray(0, 5).toString('latin1') === 'HEAD ';
  const outcome = await rawExchange(Number(new URL(base).port), request, {
    halfCloseAfterMs: Number.POSITIVE_INFINITY,
    timeoutMs,
    head,
  });
  const seen = JSON.stringify(outcome.received.toString('latin1').slice(0, 500));
  // Complete by its framing; without Content-Length or chunking, complete when the server closed.
  const unframed = (r: RawReply): boolean =>
    r.headers['content-length'] === undefined && !/chunked/i.test(r.headers['transfer-encoding'] ?? '');
  const complete =
    parseFirstReply(outcome.received, false, head) ??
    (!outcome.timedOut && outcome.reply !== null && unframed(outcome.reply) ? outcome.reply : null);
  if (complete !== null) return complete;
  if (outcome.timedOut) throw new Error(`no complete reply within ${timeoutMs} ms; got: ${seen}`);
  throw new Error(
    outcome.reply === null ? `connection closed without a reply: ${seen}` : `connection closed mid-body: ${seen}`,
  );
}

/** A request text: the request line, headers (CRLF-joined as given) and a body with its Content-Length unless one is given. */
export function httpRequest(line: string, headers: string[], body?: string | Buffer): Buffer {
  const hasFraming = headers.some((h) => /^(content-length|transfer-encoding)\s*:/i.test(h));
  const all = body !== undefined && !hasFraming ? [...headers, `content-length: ${Buffer.byteLength(body)}`] : headers;
  return Buffer.concat([
    Buffer.from(`${line}\r\n${all.map((h) => `${h}\r\n`).join('')}\r\n`, 'latin1'),
    body === undefined ? Buffer.alloc(0) : Buffer.from(body),
  ]);
}

/** A body in chunked framing, in chunks of `size` bytes. */
export function chunked(body: string | Buffer, size = 512): Buffer {
  const bytes = Buffer.from(body);
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    const chunk = bytes.subarray(at, at + size);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** A node's error statuses, and the proxy's own (401 and 429 at the edge, 501 for a transfer coding it does not implement). */
export { expectNodeErrorBody } from './expect.js';

export interface Decoy {
  /** host:port */
  host: string;
  port: number;
  hits: Array<{ method: string; url: string; headers: IncomingHttpHeaders }>;
}

const decoys: Server[] = [];
afterEach(async () => {
  while (decoys.length > 0) {
    const d = decoys.pop()!;
    d.closeAllConnections();
    await new Promise<void>((r) => d.close(() => r()));
  }
});

/** An HTTP server on 127.0.0.1 that records every request; nothing may ever reach it. */
export async function decoy(): Promise<Decoy> {
  const out: Decoy = { host: '', port: 0, hits: [] };
  const server = createServer((req, res) => {
    out.hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"decoy":true}');
  });
  // A raw CONNECT or upgrade reaching it counts too.
  server.on('connect', (req, socket) => {
    out.hits.push({ method: req.method ?? 'CONNECT', url: req.url ?? '', headers: req.headers });
    socket.destroy();
  });
  server.on('upgrade', (req, socket) => {
    out.hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  decoys.push(server);
  out.port = (server.address() as { port: number }).port;
  out.host = `127.0.0.1:${out.port}`;
  return out;
}

/** A raw connection kept open by a test: what it received so far, and when it closed. */
export interface OpenSocket {
  socket: Socket;
  received(): string;
  closed: Promise<void>;
}

const openSockets: Socket[] = [];
afterEach(() => {
  for (const socket of openSockets.splice(0)) socket.destroy();
});

/** Connects to `base` and keeps the connection for the test to write to, byte by byte if it likes; destroyed after the test. */
export async function openSocket(base: string): Promise<OpenSocket> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  openSockets.push(socket);
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => data, closed };
}
