// The lane's head parser against llhttp (node:http's parser, driven directly):
// seeded random request heads, built from what clients send and mutated with
// what smugglers send (bare CR or LF, obs-fold, NUL, DEL, obs-text, whitespace
// before the colon, doubled and odd Content-Length, Transfer-Encoding, other
// methods, versions and target forms), whole and cut short.
//
// Property: whatever the lane accepts, llhttp accepts too, as the same request:
// the same method, target, version, fields (lower-case names), body, and
// whether the connection stays open. What llhttp refuses, the lane hands off
// (it never refuses by itself). Replay a failure with FUZZ_SEED=<seed printed below>.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HAND_OFF, type HeadLimits, NEED_MORE, parseHead } from '../../src/http/lane/head.js';
import { LONG, seedFrom } from '../helpers/fuzz-stack.js';
import { llhttp, type ParsedRequest as Parsed } from '../helpers/llhttp.js';

const RUNS = Number(process.env.FUZZ_LANE_RUNS ?? (LONG ? 200_000 : 20_000));
const SEED = seedFrom('FUZZ_SEED');
const LIMITS: HeadLimits = { maxHeadBytes: 16384, maxFields: 100, maxBodyBytes: 4096 };

/** What the lane makes of the request at the start of `bytes`: a request (and its length), or that it needs more or hands off. */
function lane(bytes: Buffer): { parsed: Parsed; length: number } | typeof NEED_MORE | typeof HAND_OFF {
  const head = parseHead(bytes, 0, LIMITS);
  if (head === NEED_MORE || head === HAND_OFF) return head;
  if (head.headLength + head.bodyLength > bytes.length) return NEED_MORE;
  const body = bytes.subarray(head.headLength, head.headLength + head.bodyLength).toString('latin1');
  const { method, url, minor, headers, keepAlive } = head;
  return { parsed: { method, url, minor, headers, body, keepAlive }, length: head.headLength + head.bodyLength };
}

/** Mostly what a client sends, sometimes what it should not: each part odd on its own, now and then. */
const mostly = <T>(good: fc.Arbitrary<T>, odd: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight: 20, arbitrary: good }, { weight: 1, arbitrary: odd });

// What clients send, and what they should not.
const method = fc.constantFrom('GET', 'POST', 'HEAD', 'GET', 'POST', 'PUT', 'OPTIONS', 'get', 'POST ', 'GE', 'CONNECT');
const targetChar = fc.constantFrom(
  ..."abcxyz019/?=&%-._~:@!$'()*+,;<>".split(''),
  ' ',
  '#',
  '"',
  '\\',
  '^',
  '`',
  '{',
  '|',
  '}',
  '\t',
  '\x00',
  '\x7f',
  '\x80',
  '\xff',
  '\r',
  '\n',
);
const target = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(mostly(fc.constantFrom(..."abcxyz019/?=&%-._~:@!$'()*+,;<>".split('')), targetChar), { maxLength: 24 })
      .map((cs) => `/v1/${cs.join('')}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('*', 'http://x/v1/view', '//x', '', 'v1/view', '/v1/view?ledger_version=5') },
);
const version = fc.constantFrom(
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.0',
  'HTTP/2.0',
  'HTTP/1.2',
  'http/1.1',
  'HTTP/1.1 ',
  'HTTP/11',
);
const nameChar = fc.constantFrom(..."abcXYZ-_09!#$%&'*+.^`|~".split(''), ' ', '\t', '(', '"', '/', '\x00', '\x80', '{');
const valueChar = fc.constantFrom(
  ...'abc XYZ 012 ;=,/"()\t'.split(''),
  '\x00',
  '\x01',
  '\x7f',
  '\x80',
  '\xe9',
  '\xff',
  '\r',
  '\n',
  '\r\n ',
  '\r\n\t',
);
const eol = fc.constantFrom('\r\n', '\r\n', '\r\n', '\r\n', '\n', '\r', '\r\r\n');
const commonName = mostly(
  fc.constantFrom(
    'Content-Type',
    'Accept',
    'Origin',
    'X-Request-Id',
    'Connection',
    'Content-Length',
    'Accept-Encoding',
  ),
  fc.constantFrom('Host', 'host', 'Transfer-Encoding', 'Expect', 'Upgrade', 'TE', 'Trailer', 'Keep-Alive'),
);
const commonValue = fc.constantFrom(
  'proxy.test',
  'application/json',
  'application/x-bcs',
  'close',
  'keep-alive',
  'Keep-Alive',
  'upgrade',
  'close, upgrade',
  'chunked',
  'gzip, chunked',
  '100-continue',
  '0',
  '5',
  '05',
  ' 5 ',
  '5, 5',
  '-1',
  '+5',
  '0x5',
  '99999999999999999999',
  '',
);
const line = mostly(fc.constant('\r\n'), eol);
const field = fc.record({
  name: mostly(
    commonName,
    fc.array(nameChar, { minLength: 0, maxLength: 8 }).map((c) => c.join('')),
  ),
  before: mostly(fc.constant(''), fc.constantFrom(' ', '\t', '  ')),
  gap: mostly(fc.constantFrom(':', ': ', ':  ', ':\t'), fc.constantFrom(' :', ': \t', '\t:')),
  value: mostly(
    commonValue,
    fc
      .array(mostly(fc.constantFrom(...'abc XYZ 012 ;=,/"()\t'.split('')), valueChar), { maxLength: 12 })
      .map((c) => c.join('')),
  ),
  after: mostly(fc.constant(''), fc.constantFrom(' ', '\t', ' \t')),
  eol: line,
});
const request = fc.record({
  method: mostly(fc.constantFrom('GET', 'POST', 'HEAD'), method),
  sp1: mostly(fc.constant(' '), fc.constantFrom('  ', '\t')),
  target,
  sp2: mostly(fc.constant(' '), fc.constantFrom('  ', '\t')),
  version: mostly(fc.constantFrom('HTTP/1.1', 'HTTP/1.0'), version),
  lineEnd: line,
  host: mostly(fc.constant(true), fc.constant(false)),
  fields: fc.array(field, { maxLength: 5 }),
  end: line,
  body: fc.constantFrom('', '', '{"key":"0x07"}', 'abcde', '0\r\n\r\n', '5\r\nabcde\r\n0\r\n\r\n'),
  cut: fc.option(fc.nat(400), { freq: 4 }),
});

function bytesOf(r: typeof request extends fc.Arbitrary<infer T> ? T : never): Buffer {
  let head = `${r.method}${r.sp1}${r.target}${r.sp2}${r.version}${r.lineEnd}`;
  if (r.host) head += 'Host: proxy.test\r\n';
  for (const f of r.fields) head += `${f.before}${f.name}${f.gap}${f.value}${f.after}${f.eol}`;
  const bytes = Buffer.from(`${head}${r.end}${r.body}`, 'latin1');
  return r.cut === null ? bytes : bytes.subarray(0, r.cut);
}

describe('the lane parser against llhttp', () => {
  it(`accepts only what llhttp accepts, as the same request (seed ${SEED})`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(request, (r) => {
        const bytes = bytesOf(r);
        const ours = lane(bytes);
        if (ours === NEED_MORE || ours === HAND_OFF) return;
        accepted++;
        // What follows the request is the next one's: llhttp must end this one exactly where the lane does.
        expect(llhttp(bytes.subarray(0, ours.length)), JSON.stringify(bytes.toString('latin1'))).toEqual(ours.parsed);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The property says something only if the lane accepts a fair share of what it is given.
    expect(accepted).toBeGreaterThan(RUNS / 50);
  });

  it('accepts the requests clients send, and hands off what llhttp refuses among them', () => {
    const good = Buffer.from(
      'POST /v1/view?ledger_version=5 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      'latin1',
    );
    expect(lane(good)).toEqual({ parsed: llhttp(good), length: good.length });
    for (const bad of [
      'GET /v1 HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n',
      'GET /v1 HTTP/1.1\r\nHost: x\nX: a\r\n\r\n',
      'GET /v1 HTTP/1.1\r\nHost : x\r\n\r\n',
      'POST /v1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na',
      'POST /v1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET /v1 HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n',
    ])
      expect(lane(Buffer.from(bad, 'latin1')), JSON.stringify(bad)).toBe(HAND_OFF);
  });
});
