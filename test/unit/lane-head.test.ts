// The lane's head parser at its edges: what it takes and exactly how it frames
// it, what it hands to node:http (each shape it must not take, and whether llhttp
// refuses it or node:http only treats it otherwise), and its limits at the
// boundary: exactly maxHeadBytes and one byte more, exactly maxFields and one
// field more, a body of exactly maxBodyBytes and one byte more. The differential
// fuzz (test/fuzz/lane-parser.test.ts) checks that what the lane takes, llhttp
// takes the same way; these pin what it must not take, and where.
import { describe, expect, it } from 'vitest';
import { HAND_OFF, type HeadLimits, type LaneHead, NEED_MORE, parseHead } from '../../src/http/lane/head.js';
import { llhttp } from '../helpers/llhttp.js';

const LIMITS: HeadLimits = { maxHeadBytes: 16384, maxFields: 100, maxBodyBytes: 4096 };
const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');
const parse = (text: string | Buffer, limits: Partial<HeadLimits> = {}, start = 0) =>
  parseHead(typeof text === 'string' ? bytes(text) : text, start, { ...LIMITS, ...limits });

/** The head of a request line with `fields` (Host first unless given), ended by its blank line. */
const head = (line: string, ...fields: string[]): string => `${line}\r\n${fields.map((f) => `${f}\r\n`).join('')}\r\n`;
const GET = (...fields: string[]): string => head('GET /v1 HTTP/1.1', 'Host: x', ...fields);

/** Requests the lane takes, and the head it makes of each. */
const TAKEN: Array<[string, string, Omit<LaneHead, 'headLength'>]> = [
  ['a GET', GET(), { method: 'GET', url: '/v1', minor: 1, headers: { host: 'x' }, bodyLength: 0, keepAlive: true }],
  [
    'a HEAD',
    head('HEAD /v1/accounts/0x1 HTTP/1.1', 'Host: x'),
    { method: 'HEAD', url: '/v1/accounts/0x1', minor: 1, headers: { host: 'x' }, bodyLength: 0, keepAlive: true },
  ],
  [
    'a POST with a body',
    head('POST /v1/view HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: 12'),
    {
      method: 'POST',
      url: '/v1/view',
      minor: 1,
      headers: { host: 'x', 'content-type': 'application/json', 'content-length': '12' },
      bodyLength: 12,
      keepAlive: true,
    },
  ],
  [
    'HTTP/1.0 without Host, which closes',
    head('GET /v1 HTTP/1.0'),
    { method: 'GET', url: '/v1', minor: 0, headers: {}, bodyLength: 0, keepAlive: false },
  ],
  [
    'HTTP/1.0 with Connection: close',
    head('GET /v1 HTTP/1.0', 'Connection: close'),
    { method: 'GET', url: '/v1', minor: 0, headers: { connection: 'close' }, bodyLength: 0, keepAlive: false },
  ],
  [
    'Connection: close in any case',
    GET('Connection: CLOSE'),
    {
      method: 'GET',
      url: '/v1',
      minor: 1,
      headers: { host: 'x', connection: 'CLOSE' },
      bodyLength: 0,
      keepAlive: false,
    },
  ],
  [
    'Connection: keep-alive in any case',
    GET('Connection: Keep-Alive'),
    {
      method: 'GET',
      url: '/v1',
      minor: 1,
      headers: { host: 'x', connection: 'Keep-Alive' },
      bodyLength: 0,
      keepAlive: true,
    },
  ],
  [
    'every byte of origin-form it allows in the target',
    head("GET /v1/09AZaz-._~!$&'()*+,;=:@/?%2F<>x HTTP/1.1", 'Host: x'),
    {
      method: 'GET',
      url: "/v1/09AZaz-._~!$&'()*+,;=:@/?%2F<>x",
      minor: 1,
      headers: { host: 'x' },
      bodyLength: 0,
      keepAlive: true,
    },
  ],
  [
    'every tchar in a name, folded to lower case',
    GET("09AZaz!#$%&'*+-.^_`|~: v", 'X-UPPER: V'),
    {
      method: 'GET',
      url: '/v1',
      minor: 1,
      headers: { host: 'x', "09azaz!#$%&'*+-.^_`|~": 'v', 'x-upper': 'V' },
      bodyLength: 0,
      keepAlive: true,
    },
  ],
  [
    'values: inner SP and HTAB kept, whitespace around them dropped, an empty one, the visible range',
    GET('X-A: a b\tc', 'X-B: \t v \t', 'X-C:', 'X-D: !~'),
    {
      method: 'GET',
      url: '/v1',
      minor: 1,
      headers: { host: 'x', 'x-a': 'a b\tc', 'x-b': 'v', 'x-c': '', 'x-d': '!~' },
      bodyLength: 0,
      keepAlive: true,
    },
  ],
  [
    'a GET with Content-Length: 0',
    GET('Content-Length: 0'),
    {
      method: 'GET',
      url: '/v1',
      minor: 1,
      headers: { host: 'x', 'content-length': '0' },
      bodyLength: 0,
      keepAlive: true,
    },
  ],
  [
    'a Content-Length of 15 digits',
    head('POST /v1/view HTTP/1.1', 'Host: x', 'Content-Length: 000000000000012'),
    {
      method: 'POST',
      url: '/v1/view',
      minor: 1,
      headers: { host: 'x', 'content-length': '000000000000012' },
      bodyLength: 12,
      keepAlive: true,
    },
  ],
];

describe('what the lane takes', () => {
  it.each(TAKEN)('%s: the head, framed where its blank line ends, as llhttp reads it', (_name, text, expected) => {
    expect(parse(text)).toEqual({ ...expected, headLength: text.length });
    const { method, url, minor, headers, keepAlive, bodyLength } = expected;
    const request = bytes(text + 'b'.repeat(bodyLength));
    expect(llhttp(request)).toEqual({ method, url, minor, headers, keepAlive, body: 'b'.repeat(bodyLength) });
  });

  it.each(TAKEN)('%s: the same at any offset, whatever comes before and after it', (_name, text) => {
    const alone = parse(text);
    for (const before of ['', 'x', GET()]) {
      const buf = bytes(before + text + 'GET /v1 HTTP/1.1\r\n');
      expect(parse(buf, {}, before.length)).toEqual(alone);
    }
  });

  it.each(TAKEN)('%s: every part of it, cut short, waits for more', (_name, text) => {
    for (let length = 0; length < text.length; length++)
      expect(parse(text.slice(0, length)), JSON.stringify(text.slice(0, length))).toBe(NEED_MORE);
  });
});

describe('the head size limit (maxHeadBytes)', () => {
  it.each(TAKEN)('%s: taken at exactly its length, handed off at any limit below it', (_name, text) => {
    const expected = parse(text);
    for (const before of ['', GET()]) {
      const buf = bytes(before + text + 'GET /v1 HTTP/1.1\r\n');
      expect(parse(buf, { maxHeadBytes: text.length }, before.length)).toEqual(expected);
      for (let limit = 1; limit < text.length; limit++)
        expect(parse(buf, { maxHeadBytes: limit }, before.length), `limit ${limit}`).toBe(HAND_OFF);
    }
  });

  it('hands off an unfinished head once it fills the limit, and waits while it does not', () => {
    const unfinished = `GET /v1/${'a'.repeat(100)}`;
    for (const before of ['', GET()]) {
      const buf = bytes(before + unfinished);
      expect(parse(buf, { maxHeadBytes: unfinished.length }, before.length)).toBe(HAND_OFF);
      expect(parse(buf, { maxHeadBytes: unfinished.length + 1 }, before.length)).toBe(NEED_MORE);
    }
  });
});

describe('the field count limit (maxFields)', () => {
  const fields = (count: number): string[] => [
    'Host: x',
    ...Array.from({ length: count - 1 }, (_, i) => `X-${i}: ${i}`),
  ];

  it('takes exactly maxFields fields and hands off one more', () => {
    for (const max of [1, 2, 100]) {
      const taken = parse(head('GET /v1 HTTP/1.1', ...fields(max)), { maxFields: max });
      expect(taken !== NEED_MORE && taken !== HAND_OFF && Object.keys(taken.headers).length).toBe(max);
      expect(parse(head('GET /v1 HTTP/1.1', ...fields(max + 1)), { maxFields: max })).toBe(HAND_OFF);
    }
  });

  it('waits for more while a head of exactly maxFields fields is cut short, wherever the cut falls', () => {
    const text = head('GET /v1 HTTP/1.1', ...fields(3));
    for (let length = 0; length < text.length; length++)
      expect(parse(text.slice(0, length), { maxFields: 3 }), JSON.stringify(text.slice(0, length))).toBe(NEED_MORE);
  });
});

describe('the body limit (maxBodyBytes)', () => {
  const post = (length: number): string => head('POST /v1/view HTTP/1.1', 'Host: x', `Content-Length: ${length}`);

  it('takes a body of exactly maxBodyBytes and hands off one byte more', () => {
    for (const max of [0, 1, 4096]) {
      expect(parse(post(max), { maxBodyBytes: max })).toMatchObject({ bodyLength: max });
      expect(parse(post(max + 1), { maxBodyBytes: max })).toBe(HAND_OFF);
    }
  });
});

/**
 * Heads the lane hands to node:http, and what llhttp makes of each: 'refuses'
 * (node:http answers it 400), or 'takes' (node:http serves it, in a way the lane
 * does not: an upgrade, an Expect, a body it would have to judge, a connection
 * option of its own).
 */
const HANDED_OFF: Array<[string, string, 'refuses' | 'takes']> = [
  // Line ends and bytes a value must not hold.
  ['NUL in a value, then a bare LF', GET('X: a\x00\n'), 'refuses'],
  ['DEL in a value, then a bare LF', GET('X: a\x7f\n'), 'refuses'],
  ['DEL inside a value', GET('X: a\x7fb'), 'refuses'],
  ['a bare LF splitting one line into two fields', GET('X: a\nY: b'), 'refuses'],
  ['a bare LF after the request line', 'GET /v1 HTTP/1.1\nHost: x\r\n\r\n', 'refuses'],
  ['a bare CR after the request line', 'GET /v1 HTTP/1.1\rHost: x\r\n\r\n', 'refuses'],
  ['a bare CR inside a value', GET('X: a\rb'), 'refuses'],
  ['a CR not followed by LF where the head ends', 'GET /v1 HTTP/1.1\r\nHost: x\r\n\r\r\n', 'refuses'],
  ['a CR not followed by LF after a value', GET('X: a\r\rY: b'), 'refuses'],
  ['a line of a bare CR and more', GET('\rX'), 'refuses'],
  ['obs-fold', GET('X: a\r\n b'), 'refuses'],
  ['obs-text in a value', GET('X: \x80'), 'takes'],
  // The request line.
  ['two methods', head('GET HEAD /v1 HTTP/1.1', 'Host: x'), 'refuses'],
  ['no method', head('/v1 HTTP/1.1', 'Host: x'), 'refuses'],
  ['a method in lower case', head('get /v1 HTTP/1.1', 'Host: x'), 'refuses'],
  ['a method other than GET, HEAD and POST', head('PUT /v1 HTTP/1.1', 'Host: x'), 'takes'],
  ['two spaces before the target', head('GET  /v1 HTTP/1.1', 'Host: x'), 'takes'],
  ['asterisk-form', head('GET * HTTP/1.1', 'Host: x'), 'takes'],
  ['absolute-form', head('GET http://x/v1 HTTP/1.1', 'Host: x'), 'takes'],
  ['a fragment', head('GET /v1#x HTTP/1.1', 'Host: x'), 'takes'],
  ['a quote in the target', head('GET /v1" HTTP/1.1', 'Host: x'), 'takes'],
  ['a brace in the target', head('GET /v1{ HTTP/1.1', 'Host: x'), 'takes'],
  ['HTTP/1.2', head('GET /v1 HTTP/1.2', 'Host: x'), 'refuses'],
  ['HTTP/2.0', head('GET /v1 HTTP/2.0', 'Host: x'), 'takes'],
  ['the version in lower case', head('GET /v1 http/1.1', 'Host: x'), 'refuses'],
  // Field names.
  ['a space before the colon', GET('X : v'), 'refuses'],
  ['a tab before the colon', GET('X\t: v'), 'refuses'],
  ['a name with a byte that is no tchar', GET('X(: v'), 'refuses'],
  ['an empty name', GET(': v'), 'refuses'],
  ['a line without a colon', GET('X v'), 'refuses'],
  ['the same name twice, in any case', GET('host: y'), 'takes'],
  ['another name the parser knows twice', GET('Accept: a', 'ACCEPT: b'), 'takes'],
  ['a name the parser does not know twice', GET('X-A: 1', 'x-a: 2'), 'takes'],
  [
    'Content-Length twice, the same',
    head('POST /v1 HTTP/1.1', 'Host: x', 'Content-Length: 1', 'content-length: 1') + 'a',
    'refuses',
  ],
  // Framing and connection fields.
  ['Transfer-Encoding', head('POST /v1/view HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked') + '0\r\n\r\n', 'takes'],
  ['Expect', GET('Expect: 100-continue'), 'takes'],
  ['Upgrade', GET('Upgrade: websocket', 'Connection: upgrade'), 'takes'],
  ['Upgrade without Connection: upgrade', GET('Upgrade: websocket'), 'takes'],
  ['HTTP2-Settings', GET('HTTP2-Settings: AAMAAABkAAQAAP__'), 'takes'],
  ['__proto__', GET('__proto__: x'), 'takes'],
  ['a name an Object inherits', GET('Constructor: x'), 'takes'],
  ['HTTP/1.1 without Host', head('GET /v1 HTTP/1.1'), 'takes'],
  ['a GET with a body', GET('Content-Length: 1') + 'a', 'takes'],
  ['a HEAD with a body', head('HEAD /v1 HTTP/1.1', 'Host: x', 'Content-Length: 1') + 'a', 'takes'],
  [
    'a Content-Length of 16 digits',
    head('POST /v1 HTTP/1.1', 'Host: x', 'Content-Length: 0000000000000001') + 'a',
    'takes',
  ],
  ['Content-Length with a space after it', GET('Content-Length: 0 '), 'takes'],
  ['Content-Length with a tab after it', GET('Content-Length: 0\t'), 'refuses'],
  ['Content-Length with a sign', head('POST /v1 HTTP/1.1', 'Host: x', 'Content-Length: +1') + 'a', 'refuses'],
  ['an empty Content-Length', GET('Content-Length:'), 'refuses'],
  ['two Content-Lengths in one', head('POST /v1 HTTP/1.1', 'Host: x', 'Content-Length: 1, 1') + 'a', 'refuses'],
  ['Connection with whitespace after it', GET('Connection: close '), 'takes'],
  ['a Connection option other than close and keep-alive', GET('Connection: upgrade'), 'takes'],
  ['two Connection options', GET('Connection: close, te'), 'takes'],
  ['HTTP/1.0 keep-alive', head('GET /v1 HTTP/1.0', 'Connection: keep-alive'), 'takes'],
];

describe('what the lane hands to node:http', () => {
  it.each(HANDED_OFF)('%s', (name, text, verdict) => {
    expect(parse(text)).toBe(HAND_OFF);
    expect(llhttp(bytes(text)) === null ? 'refuses' : 'takes', `llhttp on ${name}`).toBe(verdict);
  });
});
