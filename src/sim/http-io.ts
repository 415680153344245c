// Reading request bodies and writing replies on node:http, the way nodes do:
// chunked bodies refused (411), an 8 MiB body limit, gzip when the client allows it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { SimReply } from './reply.js';

/** Nodes refuse bodies above 8 MiB. */
const SIM_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

export interface ReadBody {
  body: Buffer;
  /** sent with Transfer-Encoding and no Content-Length: nodes answer 411 */
  chunked: boolean;
  /** over SIM_BODY_LIMIT_BYTES (the body is then empty) */
  tooLarge: boolean;
}

/**
 * Reads the whole body, even one that will be refused: answering and closing while
 * the client still sends would reset the connection and lose the reply.
 */
export function readBody(req: IncomingMessage): Promise<ReadBody> {
  const chunked = req.headers['transfer-encoding'] !== undefined && req.headers['content-length'] === undefined;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= SIM_BODY_LIMIT_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const tooLarge = size > SIM_BODY_LIMIT_BYTES;
      resolve({ body: tooLarge ? Buffer.alloc(0) : Buffer.concat(chunks), chunked, tooLarge });
    });
    // A client that goes away mid-body gets no answer; the request is still counted.
    const partial = (): void => resolve({ body: Buffer.concat(chunks), chunked, tooLarge: false });
    req.on('error', partial);
    req.on('close', partial);
  });
}

/** Does Accept-Encoding allow gzip? (gzip, x-gzip or *, unless its q is 0) */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') return false;
    return !params.some((p) => /^q=0(?:\.0{0,3})?$/.test(p));
  });
}

/** The server's keep-alive timeout, announced in the keep-alive header. */
export const SIM_KEEP_ALIVE_MS = 5000;

/**
 * Writes the reply with every header name lower-case, as nodes send them: Node's own
 * Date / Connection / Keep-Alive would be capitalised, so they are set here instead
 * (mirroring Node's keep-alive decision, so the connection behaves the same).
 */
export function writeReply(res: ServerResponse, out: SimReply, gzip: boolean): void {
  if (res.destroyed || res.writableEnded) return;
  const body = gzip ? gzipSync(out.body) : out.body;
  const headers: Record<string, string> = { ...out.headers };
  if (gzip) headers['content-encoding'] = 'gzip';
  writeHead(res, out.status, headers, body.length);
  res.end(body);
}

/** The status line and headers of a reply whose body of `length` bytes (null: chunked, of no length known) the caller writes. */
export function writeHead(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  length: number | null,
): void {
  const all: Record<string, string> = { ...headers };
  if (length !== null) all['content-length'] = String(length);
  res.sendDate = false;
  all.date = new Date().toUTCString();
  if (res.shouldKeepAlive) {
    all.connection = 'keep-alive';
    all['keep-alive'] = `timeout=${SIM_KEEP_ALIVE_MS / 1000}`;
  } else {
    all.connection = 'close';
  }
  res.writeHead(status, all);
}
