// The lane's request-head parser: strict HTTP/1.1 (RFC 9112) for what clients
// send to the cached routes. It accepts only a request it can frame beyond doubt:
// `GET|HEAD|POST SP origin-form SP HTTP/1.1` (or HTTP/1.0, which closes), CRLF
// line ends, field names of tchar, values of visible ASCII, SP and HTAB (no
// obs-fold, no obs-text, no bare CR or LF, no NUL), each name once, and a body
// framed by at most one Content-Length of digits. Anything else is not refused
// here: it is handed to node:http, whose parser answers it as it would have.
// So the lane never answers a request node:http would frame differently, or
// refuse.

import { latin1 } from '../../wire/latin1.js';

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

const METHOD_NAMES = ['GET', 'HEAD', 'POST'] as const;
/** each method with the space after it */
const METHODS = METHOD_NAMES.map((m) => Buffer.from(`${m} `));
/** at the index of their minor version */
const VERSIONS = [Buffer.from('HTTP/1.0\r\n'), Buffer.from('HTTP/1.1\r\n')];
/** Fields that change how node:http frames or treats a request: such a request is node:http's. */
const HANDED_OFF_FIELDS = new Set(['transfer-encoding', 'expect', 'upgrade', 'http2-settings', '__proto__']);
const DIGITS = /^[0-9]{1,15}$/;

/** oneOf: `buf[at..end)` is all of it a prefix of one of the words (more is to come). */
const CUT = -1;
/** oneOf: `buf[at..end)` begins with none of the words. */
const NONE = -2;

/** Which of `words` `buf[at..end)` begins with (its index), or CUT, or NONE; no word is a prefix of another. */
function oneOf(buf: Buffer, at: number, end: number, words: readonly Buffer[]): number {
  for (let w = 0; w < words.length; w++) {
    const word = words[w]!;
    const n = Math.min(word.length, end - at);
    let i = 0;
    while (i < n && buf[at + i] === word[i]) i++;
    if (i === word.length) return w;
    if (i === n) return CUT;
  }
  return NONE;
}

/**
 * Field names most requests carry, by length: found in place, case-insensitively,
 * they are these (interned) strings, and no string is made and lower-cased for them.
 */
const KNOWN_NAMES: Array<Array<[string, Buffer]>> = [];
for (const name of [
  'host',
  'accept',
  'origin',
  'connection',
  'user-agent',
  'content-type',
  'x-request-id',
  'content-length',
  'accept-encoding',
  'accept-language',
]) {
  (KNOWN_NAMES[name.length] ??= []).push([name, Buffer.from(name, 'latin1')]);
}

/** The known name of the tchar bytes `buf[start..end)`, if it is one (tchar `| 0x20` is lower case only for letters). */
function knownName(buf: Buffer, start: number, end: number): string | undefined {
  const known = KNOWN_NAMES[end - start];
  if (known === undefined) return undefined;
  for (const [name, bytes] of known) {
    let i = 0;
    while (i < bytes.length && (buf[start + i]! | 0x20) === bytes[i]) i++;
    if (i === bytes.length) return name;
  }
  return undefined;
}

/** The head of the request at `start` in `buf`. */
export function parseHead(buf: Buffer, start: number, limits: HeadLimits): HeadOutcome {
  const end = Math.min(buf.length, start + limits.maxHeadBytes);
  const more = (): HeadOutcome => (end - start >= limits.maxHeadBytes ? HAND_OFF : NEED_MORE);
  // The method.
  let at = start;
  const m = oneOf(buf, at, end, METHODS);
  if (m === CUT) return more();
  if (m === NONE) return HAND_OFF;
  const method = METHOD_NAMES[m]!;
  at += METHODS[m]!.length;
  // The target. (A scan may run past `end`, up to the buffer's end at most: what it finds there is never taken.)
  if (at >= end) return more();
  if (buf[at] !== 0x2f) return HAND_OFF;
  const targetStart = at;
  while (TARGET[buf[at]!] === 1) at++;
  if (at >= end) return more();
  if (buf[at] !== SP) return HAND_OFF;
  const url = latin1(buf, targetStart, at);
  at++;
  // The version.
  const minor = oneOf(buf, at, end, VERSIONS) as 0 | 1 | typeof CUT | typeof NONE;
  if (minor === CUT) return more();
  if (minor === NONE) return HAND_OFF;
  at += VERSIONS[minor]!.length;
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
    while (TCHAR[buf[at]!] === 1) at++;
    if (at >= end) return more();
    if (buf[at] !== COLON || at === nameStart) return HAND_OFF;
    const name = knownName(buf, nameStart, at) ?? latin1(buf, nameStart, at).toLowerCase();
    at++;
    while (buf[at] === SP || buf[at] === HTAB) at++;
    const valueStart = at;
    let valueEnd = at;
    // The buffer's end (undefined) ends the value too.
    for (; ; at++) {
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
    headers[name] = latin1(buf, valueStart, valueEnd);
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
