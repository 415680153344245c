// The lane's request-head parser: strict HTTP/1.1 (RFC 9112) for what clients
// send to the cached routes. It accepts only a request it can frame beyond doubt:
// `GET|HEAD|POST SP origin-form SP HTTP/1.1` (or HTTP/1.0, which closes), CRLF
// line ends, field names of tchar, values of visible ASCII, SP and HTAB (no
// obs-fold, no obs-text, no bare CR or LF, no NUL), each name once, and a body
// framed by at most one Content-Length of digits. Anything else is not refused
// here: it is handed to node:http, whose parser answers it as it would have.
// So the lane never answers a request node:http would frame differently, or
// refuse.

export interface LaneHead {
  method: 'GET' | 'HEAD' | 'POST';
  /** the request target, origin-form */
  url: string;
  /** HTTP/1.<minor> */
  minor: 0 | 1;
  /** lower-case names, each once */
  headers: Record<string, string>;
  /** bytes of the head, its blank line included */
  headLength: number;
  /** bytes of the body that follow the head */
  bodyLength: number;
  /** the connection stays open after the reply */
  keepAlive: boolean;
}

/** The head is not complete yet, and what came so far may begin one the lane accepts. */
export const NEED_MORE = 0;
/** node:http reads this request (and every byte after it on the connection). */
export const HAND_OFF = 1;
export type HeadOutcome = LaneHead | typeof NEED_MORE | typeof HAND_OFF;

export interface HeadLimits {
  /** a longer head is handed off: node:http's maxHeaderSize, counted over fewer bytes, is never passed here */
  maxHeadBytes: number;
  /** more fields are handed off */
  maxFields: number;
  /** a longer body is handed off (node:http's path refuses it and closes) */
  maxBodyBytes: number;
}

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

/** tchar (RFC 9110 §5.6.2) */
const TCHAR = table("!#$%&'*+-.^_`|~");
/** origin-form bytes: RFC 3986 pchar, "/" and "?", and "<>" of Move types as SDKs send them ("%" unchecked, as node:http leaves it) */
const TARGET = table("-._~!$&'()*+,;=:@/?%<>");

function table(extra: string): Uint8Array {
  const t = new Uint8Array(256);
  for (let c = 0x30; c <= 0x39; c++) t[c] = 1;
  for (let c = 0x41; c <= 0x5a; c++) t[c] = 1;
  for (let c = 0x61; c <= 0x7a; c++) t[c] = 1;
  for (const ch of extra) t[ch.charCodeAt(0)] = 1;
  return t;
}

const METHODS = ['GET ', 'HEAD ', 'POST '].map((m) => Buffer.from(m, 'latin1'));
const HTTP11 = Buffer.from('HTTP/1.1\r\n', 'latin1');
const HTTP10 = Buffer.from('HTTP/1.0\r\n', 'latin1');
/** Fields that change how node:http frames or treats a request: such a request is node:http's. */
const HANDED_OFF_FIELDS = new Set(['transfer-encoding', 'expect', 'upgrade', 'http2-settings', '__proto__']);
const DIGITS = /^[0-9]{1,15}$/;

/** Whether `buf[at..end)` is a prefix of `word` (NEED_MORE), all of it (the length), or neither (HAND_OFF). */
function expect(buf: Buffer, at: number, end: number, word: Buffer): number {
  const n = Math.min(word.length, end - at);
  for (let i = 0; i < n; i++) if (buf[at + i] !== word[i]) return -1;
  return n === word.length ? word.length : 0;
}

/** The head of the request at `start` in `buf`. */
export function parseHead(buf: Buffer, start: number, limits: HeadLimits): HeadOutcome {
  const end = Math.min(buf.length, start + limits.maxHeadBytes);
  const more = (): HeadOutcome => (end - start >= limits.maxHeadBytes ? HAND_OFF : NEED_MORE);
  // The method.
  let at = start;
  let method: LaneHead['method'] | undefined;
  for (let m = 0; m < METHODS.length && method === undefined; m++) {
    const got = expect(buf, at, end, METHODS[m]!);
    if (got === 0) return more();
    if (got > 0) {
      method = m === 0 ? 'GET' : m === 1 ? 'HEAD' : 'POST';
      at += got;
    }
  }
  if (method === undefined) return HAND_OFF;
  // The target.
  if (at >= end) return more();
  if (buf[at] !== 0x2f) return HAND_OFF;
  const targetStart = at;
  while (at < end && TARGET[buf[at]!] === 1) at++;
  if (at >= end) return more();
  if (buf[at] !== SP) return HAND_OFF;
  const url = buf.toString('latin1', targetStart, at);
  at++;
  // The version.
  const v11 = expect(buf, at, end, HTTP11);
  const v10 = v11 > 0 ? -1 : expect(buf, at, end, HTTP10);
  if (v11 === 0 || v10 === 0) return more();
  if (v11 < 0 && v10 < 0) return HAND_OFF;
  const minor = v11 > 0 ? 1 : 0;
  at += HTTP11.length;
  // The fields.
  const headers: Record<string, string> = {};
  let fields = 0;
  for (;;) {
    if (at >= end) return more();
    if (buf[at] === CR) {
      if (at + 1 >= end) return more();
      if (buf[at + 1] !== LF) return HAND_OFF;
      at += 2;
      break;
    }
    if (++fields > limits.maxFields) return HAND_OFF;
    const nameStart = at;
    while (at < end && TCHAR[buf[at]!] === 1) at++;
    if (at >= end) return more();
    if (buf[at] !== COLON || at === nameStart) return HAND_OFF;
    const name = buf.toString('latin1', nameStart, at).toLowerCase();
    at++;
    while (at < end && (buf[at] === SP || buf[at] === HTAB)) at++;
    const valueStart = at;
    let valueEnd = at;
    for (; at < end; at++) {
      const c = buf[at]!;
      if (c > SP && c < 0x7f) valueEnd = at + 1;
      else if (c !== SP && c !== HTAB) break;
    }
    if (at < end && buf[at] !== CR) return HAND_OFF;
    if (at + 1 >= end) return more();
    if (buf[at + 1] !== LF) return HAND_OFF;
    at += 2;
    if (name in headers || HANDED_OFF_FIELDS.has(name)) return HAND_OFF;
    // Whitespace after a Content-Length's digits llhttp refuses, and after a Connection option it reads otherwise.
    if (valueEnd !== at - 2 && (name === 'content-length' || name === 'connection')) return HAND_OFF;
    headers[name] = buf.toString('latin1', valueStart, valueEnd);
  }
  return framed(method, url, minor, headers, at - start, limits);
}

/** How the complete head frames its body and its connection; HAND_OFF when not beyond doubt. */
function framed(
  method: LaneHead['method'],
  url: string,
  minor: 0 | 1,
  headers: Record<string, string>,
  headLength: number,
  limits: HeadLimits,
): HeadOutcome {
  let bodyLength = 0;
  const length = headers['content-length'];
  if (length !== undefined) {
    if (!DIGITS.test(length)) return HAND_OFF;
    bodyLength = Number(length);
    if (bodyLength > limits.maxBodyBytes || (bodyLength > 0 && method !== 'POST')) return HAND_OFF;
  }
  let keepAlive = minor === 1;
  const connection = headers.connection;
  if (connection !== undefined) {
    // HTTP/1.0 keep-alive, and any connection option but these two, are node:http's to judge.
    const option = connection.toLowerCase();
    if (option === 'close') keepAlive = false;
    else if (option !== 'keep-alive' || minor === 0) return HAND_OFF;
  }
  // HTTP/1.1 without Host is refused by the entry either way; node:http's parser sees it first.
  if (minor === 1 && headers.host === undefined) return HAND_OFF;
  return { method, url, minor, headers, headLength, bodyLength, keepAlive };
}
