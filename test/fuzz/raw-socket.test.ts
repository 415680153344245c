// Fuzzed HTTP/1.1 on a raw socket: what no HTTP client sends. CR, LF,
// CRLF, NUL, DEL and raw UTF-8 (valid and not) in the method, the request target,
// header names and values; missing or repeated Host; broken Content-Length and
// chunked framing; bodies shorter than announced (truncated, then half-closed);
// oversized headers; Expect.
//
// Properties, for every request:
//   - a reply comes (no hang, no connection dropped without one), with 200 or an
//     allowed error status and, for an error, exactly api.md §5's body;
//   - an input error (400 web_framework_error, 403) never reached the node;
//   - a read the proxy answered from the node or its cache is the answer the sim
//     gives to the very same bytes;
//   - afterwards the proxy still answers a known-good read.
// Replay a failure with FUZZ_SEED=<seed printed below>.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simTableItem } from '../../src/sim/index.js';
import { errorCodeOf, FailureLog, header, shapeProblem, type ReplyLike } from '../helpers/fuzz-reply.js';
import { rawExchange, type RawOutcome } from '../helpers/raw-socket.js';
import { LONG, seedFrom, startStack, type Stack } from '../helpers/fuzz-stack.js';
import { FUZZ_LATEST, FUZZ_OLDEST, HANDLE, PRESENT_KEY } from './arbitraries.js';
import { until } from '../helpers/until.js';

const RUNS = Number(process.env.FUZZ_RAW_RUNS ?? (LONG ? 3000 : 600));
const SEED = seedFrom('FUZZ_SEED');

type BodyKind = 'raw_item' | 'view' | 'view-bcs' | 'utf8' | 'invalid-utf8' | 'random' | 'empty' | 'ignored';

/**
 * Each case's body carries a nonce (the case number, fixed width so lengths do not
 * change): whether a refused request reached the node is then read off the sim's
 * request log, whatever the timing, instead of off a counter another case's late
 * node call could move.
 */
function bodyOf(kind: BodyKind, nonce: number, random: Uint8Array): Buffer {
  const hex8 = nonce.toString(16).padStart(8, '0');
  switch (kind) {
    case 'raw_item':
      return Buffer.from(`{"key":"0x${hex8}5a"}`);
    case 'view':
      return Buffer.from(
        `{"function":"0x1::sim::add","type_arguments":[],"arguments":["9${String(nonce).padStart(8, '0')}","40"]}`,
      );
    case 'view-bcs': {
      const arg = Buffer.alloc(8);
      arg.writeBigUInt64LE(900_000_000n + BigInt(nonce));
      return Buffer.concat([
        Buffer.from('00'.repeat(31) + '010373696d03616464000208', 'hex'),
        arg,
        Buffer.from('082800000000000000', 'hex'),
      ]);
    }
    case 'utf8':
      return Buffer.from(`{"key":"0x${hex8}5b","é":"😀\u202e"}`);
    case 'invalid-utf8':
      return Buffer.from([0x7b, 0x22, 0x6b, 0x65, 0x79, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]);
    case 'random':
      return Buffer.from(random);
    case 'empty':
      return Buffer.alloc(0);
    case 'ignored':
      return Buffer.from('{"ignored":true}');
  }
}

/** The bytes of a body that identify its case in the sim's request log, or null. */
function nonceToken(kind: BodyKind, nonce: number): string | null {
  switch (kind) {
    case 'raw_item':
    case 'utf8':
      return bodyOf(kind, nonce, new Uint8Array()).toString('latin1').slice(8, 20);
    case 'view':
      return `"9${String(nonce).padStart(8, '0')}"`;
    case 'view-bcs':
      return bodyOf(kind, nonce, new Uint8Array()).subarray(-18, -9).toString('latin1');
    default:
      return null;
  }
}

/** Bytes that break header and request-line parsing, or smuggle a header in. */
const INJECTIONS = [
  '\r\n',
  '\r\nX-Injected: 1',
  '\r\nContent-Length: 5',
  '\r\nTransfer-Encoding: chunked',
  '\r',
  '\n',
  '\0',
  '\x7f',
  '\x01',
  '\x1b',
  'é',
  '\u{1F600}',
  '\u202e',
  '\ufeff',
  '\xff',
  '\xc3',
  ' ',
  '\t',
  ':',
  '%',
  '"',
];

interface RawRequest {
  method: string;
  target: string;
  version: string;
  /** header lines, without line ends */
  headers: string[];
  bodyKind: BodyKind;
  random: Uint8Array;
  framing:
    | 'exact'
    | 'none'
    | 'truncated'
    | 'extra-bytes'
    | 'chunked'
    | 'chunked-truncated'
    | 'chunked-bad'
    | 'bad-length'
    | 'te-and-cl';
  /** where a fuzzed byte sequence went, for reports */
  injected: string[];
}

/** latin1 strings carry bytes; text with code points above 0xff goes out as UTF-8. */
function bytesOf(text: string): Buffer {
  return /[^\x00-\xff]/.test(text) ? Buffer.from(text, 'utf8') : Buffer.from(text, 'latin1');
}

function serialize(req: RawRequest, nonce: number): Buffer {
  const body = bodyOf(req.bodyKind, nonce, req.random);
  const head = Buffer.concat([
    bytesOf(`${req.method} ${req.target} ${req.version}`),
    Buffer.from('\r\n'),
    ...req.headers.map((h) => Buffer.concat([bytesOf(h), Buffer.from('\r\n')])),
    Buffer.from('\r\n'),
  ]);
  switch (req.framing) {
    case 'chunked':
      return Buffer.concat([head, Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
    case 'chunked-truncated':
      return Buffer.concat([head, Buffer.from(`${(body.length + 10).toString(16)}\r\n`), body]);
    case 'chunked-bad':
      return Buffer.concat([head, Buffer.from('zz\r\n'), body, Buffer.from('\r\n0\r\n\r\n')]);
    case 'extra-bytes':
      return Buffer.concat([head, body, Buffer.from('XYZ\r\n\r\n')]);
    default:
      return Buffer.concat([head, body]);
  }
}

/** Inserts `token` strictly inside `text` (never at its end, so no line ends early into an empty line). */
const injectInto = (text: string): fc.Arbitrary<{ text: string; token: string }> =>
  fc
    .tuple(fc.constantFrom(...INJECTIONS), fc.integer({ min: 0, max: Math.max(0, text.length - 1) }))
    .map(([token, at]) => ({ text: text.slice(0, at) + token + text.slice(at), token }));

/** The text, with a fuzzed byte sequence inserted when `p` draws true; `note` says what went where. */
const maybeInject = (
  text: string,
  field: string,
  p: fc.Arbitrary<boolean>,
): fc.Arbitrary<{ text: string; note: string | null }> =>
  fc
    .tuple(p, injectInto(text))
    .map(([doIt, inj]) =>
      doIt && text.length > 0
        ? { text: inj.text, note: `${field}:${JSON.stringify(inj.token)}` }
        : { text, note: null },
    );

const rawRequest: fc.Arbitrary<RawRequest> = fc
  .record({
    endpoint: fc.constantFrom('raw_item', 'view', 'view-bcs', 'ledger', 'other'),
    version: fc.oneof(
      { weight: 12, arbitrary: fc.constant('') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '?ledger_version=900',
          '?ledger_version=10',
          '?ledger_version=99999',
          '?ledger_version=abc',
          '?ledger_version=9\xff',
          '?ledger_version=９',
        ),
      },
    ),
    method: fc.oneof(
      { weight: 12, arbitrary: fc.constant('') },
      {
        weight: 1,
        arbitrary: fc.constantFrom('GET', 'PUT', 'post', 'P0ST', 'PROPFIND', 'CONNECT', 'X'.repeat(40), 'POST\x00'),
      },
    ),
    httpVersion: fc.oneof(
      { weight: 12, arbitrary: fc.constant('HTTP/1.1') },
      {
        weight: 1,
        arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x', 'http/1.1', 'HTTP/1.1\x00', 'HTTP/1', ''),
      },
    ),
    accept: fc.constantFrom('application/x-bcs', 'application/json', 'application/json, application/x-bcs', '*/*'),
    host: fc.oneof(
      { weight: 10, arbitrary: fc.constant(['Host: proxy.test']) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<string[]>(
          [],
          ['Host: a', 'Host: b'],
          ['Host: evil.example:1'],
          ['Host:'],
          ['Host: é'],
        ),
      },
    ),
    extra: fc.oneof(
      { weight: 8, arbitrary: fc.constant<string[]>([]) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<string[]>(
          ['Expect: 100-continue'],
          ['Expect: nothing'],
          ['X-Forwarded-Host: evil.example'],
          ['Upgrade: websocket', 'Connection: upgrade'],
          ['Transfer-Encoding: gzip'],
        ),
      },
      { weight: 1, arbitrary: fc.constantFrom(1, 100, 16_000, 70_000).map((n) => [`X-Big: ${'a'.repeat(n)}`]) },
      {
        weight: 1,
        arbitrary: fc.integer({ min: 10, max: 3000 }).map((n) => Array.from({ length: n }, (_, i) => `X-H${i}: ${i}`)),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          ['Bad Name: x'],
          ['Bad\x00Name: x'],
          ['Nämé: x'],
          [': no name'],
          ['NoColon'],
          [' Leading: space'],
          ['X-Tab\t: x'],
          ['X-Emoji-😀: x'],
        ),
      },
    ),
    framing: fc.oneof(
      { weight: 120, arbitrary: fc.constant<RawRequest['framing']>('exact') },
      {
        weight: 12,
        arbitrary: fc.constantFrom<RawRequest['framing']>(
          'none',
          'truncated',
          'chunked',
          'chunked-truncated',
          'chunked-bad',
          'bad-length',
          'te-and-cl',
        ),
      },
      // More bytes after a complete request: a second (broken) request on the connection.
      { weight: 3, arbitrary: fc.constant<RawRequest['framing']>('extra-bytes') },
    ),
    badLength: fc.constantFrom('abc', '-1', '1 2', '+5', '0x10', '99999999999999999999999', '5, 6'),
    bodyKind: fc.oneof(
      { weight: 8, arbitrary: fc.constant('endpoint') },
      { weight: 1, arbitrary: fc.constantFrom('utf8', 'invalid-utf8', 'random', 'empty') },
    ),
    // A GET (or HEAD) with a body is rare: the proxy holds such a request until its deadline (see regressions.test.ts).
    getWithBody: fc.integer({ min: 0, max: 199 }).map((n) => n === 0),
    random: fc.uint8Array({ maxLength: 64 }),
    injectP: fc.double({ min: 0, max: 0.5, noNaN: true }),
  })
  .chain((r) => {
    const p = fc.double({ min: 0, max: 1, noNaN: true }).map((x) => x < r.injectP);
    const path =
      r.endpoint === 'raw_item'
        ? `/v1/tables/${HANDLE}/raw_item`
        : r.endpoint === 'view' || r.endpoint === 'view-bcs'
          ? '/v1/view'
          : r.endpoint === 'ledger'
            ? '/v1'
            : '/v1/accounts/0x1/module/sim';
    const method = r.method !== '' ? r.method : r.endpoint === 'ledger' || r.endpoint === 'other' ? 'GET' : 'POST';
    const contentType = r.endpoint === 'view-bcs' ? 'application/x.node.view_function+bcs' : 'application/json';
    const bodyless = method === 'GET' || method === 'HEAD';
    const served = r.endpoint === 'raw_item' || r.endpoint === 'view' || r.endpoint === 'view-bcs';
    const bodyKind: BodyKind =
      bodyless && !r.getWithBody
        ? 'empty'
        : r.bodyKind !== 'endpoint'
          ? (r.bodyKind as BodyKind)
          : served
            ? (r.endpoint as BodyKind)
            : 'ignored';
    const body = bodyOf(bodyKind, 0, r.random);
    return fc
      .record({
        method: maybeInject(method, 'method', p),
        target: maybeInject(path + r.version, 'target', p),
        httpVersion: maybeInject(
          r.httpVersion,
          'version',
          p.map((x) => x && r.injectP > 0.4),
        ),
        accept: maybeInject(r.accept, 'accept', p),
        contentType: maybeInject(contentType, 'content-type', p),
        custom: maybeInject('some value; with=params', 'x-custom', p),
      })
      .map((f) => {
        const headers = [
          'Connection: close',
          ...r.host,
          `Accept: ${f.accept.text}`,
          `Content-Type: ${f.contentType.text}`,
          `X-Custom: ${f.custom.text}`,
          ...r.extra,
        ];
        const injected = [f.method, f.target, f.httpVersion, f.accept, f.contentType, f.custom]
          .map((x) => x.note)
          .filter((n): n is string => n !== null);
        switch (r.framing) {
          case 'exact':
            headers.push(`Content-Length: ${body.length}`);
            break;
          case 'truncated':
            headers.push(`Content-Length: ${body.length + 7}`);
            break;
          case 'extra-bytes':
            headers.push(`Content-Length: ${body.length}`);
            break;
          case 'chunked':
          case 'chunked-truncated':
          case 'chunked-bad':
            headers.push('Transfer-Encoding: chunked');
            break;
          case 'bad-length':
            headers.push(`Content-Length: ${r.badLength}`);
            break;
          case 'te-and-cl':
            headers.push('Transfer-Encoding: chunked', `Content-Length: ${body.length}`);
            break;
          case 'none':
            break;
        }
        return {
          method: f.method.text,
          target: f.target.text,
          version: f.httpVersion.text,
          headers,
          bodyKind,
          random: r.random,
          framing: r.framing,
          injected,
        };
      });
  });

function describeReq(req: RawRequest, nonce: number): string {
  const text = serialize(req, nonce).toString('latin1');
  return `${JSON.stringify(text.length > 600 ? text.slice(0, 600) + '…' : text)} [framing ${req.framing}; injected ${req.injected.join(' ') || 'nothing'}]`;
}

function describeOutcome(o: RawOutcome): string {
  if (o.reply === null)
    return `no reply (closed ${o.closedWithoutReply}, timed out ${o.timedOut}, half-closed ${o.halfClosed}); got ${JSON.stringify(o.received.toString('latin1').slice(0, 300))}`;
  return `${o.reply.statusLine} x-cache=${o.reply.headers['x-cache']} body=${JSON.stringify(o.reply.body.toString('latin1').slice(0, 300))}`;
}

/** Whether a request's head declares a transfer coding other than (or besides) chunked. */
function hasTransferCoding(data: Buffer | string): boolean {
  const head = Buffer.from(data).toString('latin1').split('\r\n\r\n', 1)[0]!;
  const codings = [...head.matchAll(/^transfer-encoding:([^\r\n]*)/gim)].map((m) => m[1]!.trim().toLowerCase());
  return codings.length > 0 && codings.join(', ') !== 'chunked';
}

describe('fuzzed HTTP on a raw socket', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      sim: { startVersion: FUZZ_LATEST },
      beforeProxy: (node) => node.ledger.pruneTo(FUZZ_OLDEST),
    });
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** Bodies of the sim's served reads (raw_item, view) seen so far, as latin1 text. */
  const simBodies: string[] = [];
  let simSeen = 0;
  const collectSimBodies = (): void => {
    const counters = stack.node.counters;
    const fresh = counters.total - simSeen;
    simSeen = counters.total;
    for (const r of counters.requests.slice(-Math.min(fresh, counters.requests.length))) {
      if (r.method === 'POST' && (r.url.startsWith('/v1/view') || r.url.includes('/raw_item')))
        simBodies.push(r.body.toString('latin1'));
    }
  };

  it(
    `answers every request with a node-shaped reply and keeps refused input from the node (${RUNS} cases)`,
    async () => {
      console.log(
        `[fuzz raw] FUZZ_SEED=${SEED} runs=${RUNS} (replay: FUZZ_SEED=${SEED} npx vitest run test/fuzz/raw-socket.test.ts)`,
      );
      const byStatus = new Map<string, number>();
      let cases = 0;
      let injectedCases = 0;
      let comparedWithSim = 0;
      // Every case runs; failures are grouped by kind and reported together at the end.
      const failures = new FailureLog();
      /** refused cases whose body can be found in the sim's log: checked once the run has settled */
      const refused: Array<{ token: string; what: string; framing: RawRequest['framing'] }> = [];
      collectSimBodies();

      const check = async (req: RawRequest): Promise<void> => {
        const nonce = ++cases;
        const data = serialize(req, nonce);
        const truncated = req.framing === 'truncated' || req.framing === 'chunked-truncated';
        const head = req.method.startsWith('HEAD');
        const outcome = await rawExchange(stack.port, data, { halfCloseAtOnce: truncated, head });
        collectSimBodies();
        if (req.injected.length > 0) injectedCases++;
        const what = (): string => `\n  request: ${describeReq(req, nonce)}\n  reply: ${describeOutcome(outcome)}`;
        if (outcome.reply === null) {
          throw new Error(
            `no reply (${JSON.stringify(req.method.slice(0, 10))} request, framing ${req.framing})${what()}`,
          );
        }
        const reply: ReplyLike = outcome.reply;
        const code = errorCodeOf(reply);
        const cache = header(reply, 'x-cache');
        const key = `${reply.status} ${code ?? ''} ${cache ?? ''} (${req.framing})`;
        byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
        const problem = shapeProblem(reply, { head, coded: hasTransferCoding(data) });
        if (problem !== null) throw new Error(`not node-shaped: ${problem}${what()}`);
        const token = nonceToken(req.bodyKind, nonce);
        if (
          token !== null &&
          ((reply.status === 400 && code === 'web_framework_error') || reply.status === 403 || reply.status === 501)
        )
          refused.push({ token, what: what(), framing: req.framing });
        // Answered from a node or the cache: the sim must give the same answer to the same bytes.
        // (Unless injected bytes added framing headers of their own: then there is no
        // Content-Length form of "the same request" to give the sim.)
        const framingInjected = req.injected.some((n) => /Transfer-Encoding|Content-Length/.test(n));
        if (
          (cache === 'MISS' || cache === 'HIT' || cache === 'COALESCED') &&
          !(req.framing === 'chunked' && framingInjected)
        ) {
          // The proxy takes chunked request bodies (and sends nodes Content-Length, api.md §7);
          // a node answers 411 to chunked ones, so the sim gets the same request with Content-Length.
          const length = bodyOf(req.bodyKind, nonce, req.random).length;
          // Bytes after a complete request are a second, broken request: the proxy
          // answers the first one before refusing them (Node's own server, which the
          // sim is, would let them take the first one's reply), so the sim gets the
          // first request alone.
          const sameForSim =
            req.framing === 'chunked'
              ? serialize(
                  {
                    ...req,
                    framing: 'exact',
                    headers: [
                      ...req.headers.filter((h) => !/^transfer-encoding:/i.test(h)),
                      `Content-Length: ${length}`,
                    ],
                  },
                  nonce,
                )
              : req.framing === 'extra-bytes'
                ? serialize({ ...req, framing: 'exact' }, nonce)
                : data;
          const direct = await rawExchange(stack.node.port, sameForSim, { halfCloseAtOnce: truncated, head });
          collectSimBodies();
          comparedWithSim++;
          if (direct.reply === null || direct.reply.status !== reply.status || !direct.reply.body.equals(reply.body)) {
            throw new Error(
              `the proxy's answer differs from the sim's for the same bytes${what()}\n  sim: ${describeOutcome(direct)}`,
            );
          }
        }
      };

      const started = performance.now();
      await fc.assert(
        fc.asyncProperty(rawRequest, (req) => check(req).catch((err: unknown) => failures.record(err))),
        { seed: SEED, numRuns: RUNS },
      );
      // Node calls the proxy makes after it has replied land here: wait until none is in flight.
      await until(
        () => stack.app.pool.nodes.every((n) => n.inFlight === 0),
        5000,
        'the node calls still in flight to end',
      );
      collectSimBodies();
      const reachedSim = new Set<string>();
      for (const body of simBodies) for (const m of body.matchAll(/0x[0-9a-f]{8}5[ab]|"9\d{8}"/g)) reachedSim.add(m[0]);
      for (const r of refused) {
        const found =
          r.token.startsWith('0x') || r.token.startsWith('"')
            ? reachedSim.has(r.token)
            : simBodies.some((b) => b.includes(r.token));
        if (found)
          failures.record(
            new Error(`an input error reached the node (its body is in the sim's log; framing ${r.framing})${r.what}`),
          );
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const table = [...byStatus].sort((a, b) => b[1] - a[1]).map(([k, n]) => `    ${n}\t${k}`);
      console.log(
        `[fuzz raw] ${cases} cases in ${seconds} s (${injectedCases} with injected bytes, ${refused.length} refused ones traced at the sim, ${comparedWithSim} answers compared with the sim), seed ${SEED}\n  replies (status error_code x-cache (framing)):\n${table.join('\n')}`,
      );
      if (failures.total > 0)
        console.log(`[fuzz raw] ${failures.total} FAILURES (seed ${SEED}):\n${failures.summary()}`);
      expect(failures.total, `${failures.total} failures, FUZZ_SEED=${SEED}:\n${failures.summary()}`).toBe(0);
      expect(cases).toBe(RUNS);
    },
    LONG ? 900_000 : 120_000,
  );

  it('still answers a known-good read after the run', async () => {
    const body = `{"key":"0x${PRESENT_KEY.toString('hex')}"}`;
    const data = `POST /v1/tables/${HANDLE}/raw_item?ledger_version=901 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/x-bcs\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const outcome = await rawExchange(stack.port, data);
    expect(outcome.reply?.status).toBe(200);
    expect(outcome.reply?.body.equals(simTableItem(HANDLE, PRESENT_KEY, 901n)!)).toBe(true);
  });
});
