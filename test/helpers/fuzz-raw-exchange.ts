// HTTP/1.1 over a raw TCP socket for the fuzz suites: requests no HTTP client will
// send (CRLF or NUL in header values, raw UTF-8 in the request line, broken
// framing, truncated bodies). Never rejects: the outcome says whether a reply came,
// whether the server closed without one, or whether it hung.
import { connect } from 'node:net';

export interface RawReply {
  statusLine: string;
  status: number;
  /** lower-case names; repeated headers joined with ', ' */
  headers: Record<string, string>;
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
   * server ends a connection whose client half-closed after a complete request
   * without answering it, so complete requests are not half-closed at once.
   */
  halfCloseAtOnce?: boolean;
  /** half-close when no reply came within this many ms (default 400) */
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
  for (const line of lines.slice(1)) {
    const at = line.indexOf(':');
    if (at < 0) continue;
    const name = line.slice(0, at).trim().toLowerCase();
    const value = line.slice(at + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const statusLine = lines[0];
  const status = Number(statusLine.split(' ')[1]);
  const rest = buf.subarray(end + 4);
  if (noBody || (status >= 100 && status < 200) || status === 204 || status === 304) return { reply: { statusLine, status, headers, body: Buffer.alloc(0) }, rest };
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
    const body = dechunk(rest);
    if (body === null) return final ? { reply: { statusLine, status, headers, body: rest }, rest: Buffer.alloc(0) } : null;
    return { reply: { statusLine, status, headers, body: body.body }, rest: rest.subarray(body.used) };
  }
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (rest.length < length) return final ? { reply: { statusLine, status, headers, body: rest }, rest: Buffer.alloc(0) } : null;
    return { reply: { statusLine, status, headers, body: rest.subarray(0, length) }, rest: rest.subarray(length) };
  }
  return final ? { reply: { statusLine, status, headers, body: rest }, rest: Buffer.alloc(0) } : null;
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
export function parseFirstReply(buf: Buffer, final: boolean, noBody = false): RawReply | null {
  return rawReplies(buf, final, noBody).find((r) => r.status < 100 || r.status >= 200) ?? null;
}

/** Writes `data` on a fresh connection to 127.0.0.1:port and reads the first final reply. Never rejects. */
export function rawExchange(port: number, data: Buffer | string, options: RawExchangeOptions = {}): Promise<RawOutcome> {
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
      if (!options.untilClose) timers.push(setTimeout(halfClose, halfCloseAfterMs));
      timers.push(setTimeout(() => finish({ reply: parseFirstReply(received, true, options.head), closedWithoutReply: false, timedOut: true }), timeoutMs));
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
