// Raw HTTP/1.1 on a socket, for requests a client library would refuse or fix
// (absolute-form targets, CR/LF in values, hop-by-hop headers), and a decoy
// server that must never be called. Cleanup is registered where they are created.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, expect } from 'vitest';

export interface RawReply {
  status: number;
  /** lower-case names; repeated headers joined with ", " */
  headers: Record<string, string>;
  /** [name, value] as sent, in order */
  headerLines: Array<[string, string]>;
  /** the body, de-chunked */
  body: Buffer;
}

/**
 * Sends `request` as-is on a fresh TCP connection and reads one HTTP reply.
 * Rejects when the connection closes without a complete reply, or after timeoutMs.
 */
export function rawHttp(base: string, request: string | Buffer, timeoutMs = 5000): Promise<RawReply> {
  const { hostname, port } = new URL(base);
  const isHead = Buffer.from(request).subarray(0, 5).toString('latin1') === 'HEAD ';
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let buf = Buffer.alloc(0);
    let settled = false;
    const timer = setTimeout(() => finish(new Error(`no complete reply within ${timeoutMs} ms; got: ${JSON.stringify(buf.toString('latin1').slice(0, 500))}`)), timeoutMs);
    function finish(out: RawReply | Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (out instanceof Error) reject(out);
      else resolve(out);
    }
    const tryParse = (ended: boolean): void => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (ended) finish(new Error(`connection closed without a reply: ${JSON.stringify(buf.toString('latin1').slice(0, 500))}`));
        return;
      }
      const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
      const headers: Record<string, string> = {};
      const headerLines: Array<[string, string]> = [];
      for (const line of lines) {
        const i = line.indexOf(':');
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        headerLines.push([name, value]);
        const lower = name.toLowerCase();
        headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
      }
      const rest = buf.subarray(end + 4);
      // A reply to HEAD, and 1xx/204/304 replies, have no body whatever their headers say.
      if (isHead || status === 204 || status === 304 || (status >= 100 && status < 200)) return finish({ status, headers, headerLines, body: Buffer.alloc(0) });
      if (headers['content-length'] !== undefined) {
        const len = Number(headers['content-length']);
        if (rest.length >= len) finish({ status, headers, headerLines, body: rest.subarray(0, len) });
        else if (ended) finish(new Error('connection closed mid-body'));
        return;
      }
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
        const chunks: Buffer[] = [];
        let at = 0;
        for (;;) {
          const lineEnd = rest.indexOf('\r\n', at);
          if (lineEnd < 0) break;
          const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
          if (size === 0) return finish({ status, headers, headerLines, body: Buffer.concat(chunks) });
          if (rest.length < lineEnd + 2 + size + 2) break;
          chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
          at = lineEnd + 2 + size + 2;
        }
        if (ended) finish(new Error('connection closed mid-chunked-body'));
        return;
      }
      if (ended) finish({ status, headers, headerLines, body: rest });
    };
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (err) => {
      // A reset after a complete reply was read is fine; before it, it is the answer.
      if (!settled) tryParse(true);
      finish(err);
    });
    socket.write(request);
  });
}

/** A request text: the request line, headers (CRLF-joined as given) and a body with its Content-Length unless one is given. */
export function httpRequest(line: string, headers: string[], body?: string | Buffer): Buffer {
  const hasFraming = headers.some((h) => /^(content-length|transfer-encoding)\s*:/i.test(h));
  const all = body !== undefined && !hasFraming ? [...headers, `content-length: ${Buffer.byteLength(body)}`] : headers;
  return Buffer.concat([Buffer.from(`${line}\r\n${all.map((h) => `${h}\r\n`).join('')}\r\n`, 'latin1'), body === undefined ? Buffer.alloc(0) : Buffer.from(body)]);
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

const ALLOWED_ERROR_STATUSES = [400, 403, 404, 410, 500, 503];

/** A node-shaped error reply (SPEC §5): an allowed status and exactly the three members. */
export function expectNodeErrorBody(reply: { status: number; headers: Record<string, string>; body: Buffer }, status?: number, code?: string, label = ''): { message: string; error_code: string; vm_error_code: number | null } {
  const text = reply.body.toString('utf8');
  if (status !== undefined) expect(reply.status, `${label} status; body ${text.slice(0, 300)}`).toBe(status);
  expect(ALLOWED_ERROR_STATUSES, `${label} status ${reply.status}`).toContain(reply.status);
  expect(reply.headers['content-type'], `${label} content type`).toBe('application/json');
  const body = JSON.parse(text);
  expect(Object.keys(body).sort(), `${label} body ${text.slice(0, 300)}`).toEqual(['error_code', 'message', 'vm_error_code']);
  if (code !== undefined) expect(body.error_code, `${label} error_code; message ${body.message}`).toBe(code);
  return body;
}

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
