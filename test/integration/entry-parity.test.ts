// One read responder, one edge, whatever way a request comes in. The same
// requests are sent in every framing the public entry accepts (Content-Length,
// chunked, HTTP/1.0, Expect: 100-continue), each framing to a proxy of its own in
// front of one sim: the bytes of every reply, the metrics and the log lines must
// be the same. Then the edge's concerns (CORS, the rate limit, not ready, an
// internal error) must treat a cached route and a passthrough route alike: a
// concern taken out of either path fails here.
//
// Every request goes both through the lane (server.lane: the requests of cached
// routes read off the socket) and through node:http (the lane off): the lane
// takes what it can frame (Content-Length, HTTP/1.0) and hands the rest to
// node:http, and the two must not differ by a byte, a metric or a log line.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { capturedLog, HANDLE, proxy, sim, QUIET } from '../helpers/proxy.js';
import { chunked, httpRequest, type RawReply, rawHttp } from '../helpers/raw-socket.js';

const FRAMINGS = ['length', 'chunked', 'http10', 'expect'] as const;
type Framing = (typeof FRAMINGS)[number];
const TRANSPORTS = [
  { name: 'lane', lane: true },
  { name: 'node:http', lane: false },
] as const;

interface Ask {
  label: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

const BODY_LIMIT = 4096;
const JSON_IN = { 'content-type': 'application/json' };
const BCS_OUT = { ...JSON_IN, accept: 'application/x-bcs' };
const KEY = '{"key":"0x0000000000000007"}';
const VIEW = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['40', '2'] });
const item = (query: string, body = KEY, headers: Record<string, string> = BCS_OUT): Ask => ({
  label: `raw_item ${query} ${body.slice(0, 24)}`,
  method: 'POST',
  path: `/v1/tables/${HANDLE}/raw_item${query}`,
  headers,
  body,
});

/** Hits, misses, a latest read, every kind of input error, a pruned version, passthrough and an unknown route. */
const SCRIPT: Ask[] = [
  item('?ledger_version=990'),
  item('?ledger_version=990'),
  { label: 'view miss', method: 'POST', path: '/v1/view?ledger_version=990', headers: JSON_IN, body: VIEW },
  { label: 'view hit', method: 'POST', path: '/v1/view?ledger_version=990', headers: JSON_IN, body: VIEW },
  { label: 'resource miss', method: 'GET', path: '/v1/accounts/0x1/module/sim?ledger_version=990' },
  { label: 'resource hit', method: 'GET', path: '/v1/accounts/0x1/module/sim?ledger_version=990' },
  item(''),
  item('?ledger_version=990', '{"key":"0xzz"}'),
  item('?ledger_version=990', '{"key":'),
  item('?ledger_version=abc'),
  item('?ledger_version=990', KEY, { 'content-type': 'text/plain', accept: 'application/x-bcs' }),
  item('?ledger_version=990', KEY, JSON_IN),
  item('?ledger_version=990', `{"key":"0x${'00'.repeat(BODY_LIMIT)}"}`),
  {
    label: 'undecodable path',
    method: 'POST',
    path: '/v1/tables/%zz/raw_item?ledger_version=990',
    headers: BCS_OUT,
    body: KEY,
  },
  {
    label: 'view bad function',
    method: 'POST',
    path: '/v1/view?ledger_version=990',
    headers: JSON_IN,
    body: '{"function":"nope","type_arguments":[],"arguments":[]}',
  },
  item('?ledger_version=5'),
  { label: 'transaction pruned', method: 'GET', path: '/v1/transactions/by_version/5' },
  { label: 'passthrough', method: 'GET', path: '/v1/estimate_gas_price' },
  { label: 'unknown route', method: 'GET', path: '/nope' },
];

function frame(ask: Ask, framing: Framing, extra: Record<string, string> = {}): Buffer {
  const line = `${ask.method} ${ask.path} ${framing === 'http10' ? 'HTTP/1.0' : 'HTTP/1.1'}`;
  const headers = [
    'Host: proxy.test',
    'Connection: close',
    ...Object.entries({ ...ask.headers, ...extra }).map(([k, v]) => `${k}: ${v}`),
  ];
  if (ask.body === undefined) return httpRequest(line, headers);
  if (framing === 'chunked') return httpRequest(line, [...headers, 'Transfer-Encoding: chunked'], chunked(ask.body, 7));
  if (framing === 'expect') headers.push('Expect: 100-continue');
  return httpRequest(line, headers, ask.body);
}

/** What a client sees of a reply, less what belongs to the connection, the moment or the one request (its id). */
function seen(reply: RawReply): { status: number; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers))
    if (!['date', 'connection', 'keep-alive', 'x-request-id'].includes(name)) headers[name] = value;
  return { status: reply.status, headers, body: reply.body.toString('latin1') };
}

async function metricLines(app: App): Promise<string[]> {
  const text = await app.metrics.render();
  return text.body.split('\n').filter((l) => /^ledger_proxy_(requests|errors)_total\{/.test(l));
}

/** The access log lines, less their timing and the request's id. */
function requestLines(lines: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return lines
    .filter((l) => l.msg === 'request')
    .map(({ ms: _ms, time: _time, pid: _pid, hostname: _hostname, reqId: _reqId, ...rest }) => rest);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the same requests in every framing', () => {
  it('get the same bytes, the same metrics and the same log lines, and cost the node the same calls', async () => {
    const node = await sim({ startVersion: 1000n, pruneWindow: 500n });
    const runs = [];
    const served = new Map<string, number>();
    for (const transport of TRANSPORTS)
      for (const framing of FRAMINGS) {
        const log = capturedLog('debug');
        const p = await proxy(
          [node],
          { ...QUIET, server: { host: '127.0.0.1', port: 0, bodyLimitBytes: BODY_LIMIT, lane: transport.lane } },
          { logger: log.logger },
        );
        const before = node.counters.total;
        // node:http emits 'request' for each request it reads: the lane's are not among them.
        let nodeRequests = 0;
        p.app.http.server.on('request', () => nodeRequests++);
        const replies = [];
        for (const ask of SCRIPT) replies.push(seen(await rawHttp(p.url, frame(ask, framing))));
        runs.push({
          framing: `${framing} (${transport.name})`,
          replies,
          nodeCalls: node.counters.total - before,
          metrics: await metricLines(p.app),
          log: requestLines(log.lines),
        });
        served.set(`${framing} (${transport.name})`, nodeRequests);
      }
    // The lane read every request it can frame (Content-Length, HTTP/1.0) of a cached route, and handed
    // node:http the rest: chunked bodies, Expect, the body over the limit, passthrough and the unknown route.
    for (const framing of FRAMINGS) {
      const handedOff = framing === 'length' || framing === 'http10' ? 3 : SCRIPT.length - 3;
      expect(served.get(`${framing} (lane)`), framing).toBe(handedOff);
      expect(served.get(`${framing} (node:http)`), framing).toBe(SCRIPT.length);
    }
    const [reference, ...others] = runs;
    expect(reference!.replies.map((r) => `${r.status} ${r.headers['x-cache']}`)).toEqual([
      ...['200 MISS', '200 HIT', '200 MISS', '200 HIT', '200 MISS', '200 HIT', '200 MISS'],
      ...[
        '400 BYPASS',
        '400 BYPASS',
        '400 BYPASS',
        '400 BYPASS',
        '403 BYPASS',
        '400 BYPASS',
        '400 BYPASS',
        '400 BYPASS',
      ],
      ...['410 BYPASS', '410 BYPASS', '200 BYPASS', '404 BYPASS'],
    ]);
    for (const run of others) {
      for (let i = 0; i < SCRIPT.length; i++)
        expect(run.replies[i], `${run.framing}: ${SCRIPT[i]!.label}`).toEqual(reference!.replies[i]);
      expect(run.nodeCalls, run.framing).toBe(reference!.nodeCalls);
      expect(run.metrics, run.framing).toEqual(reference!.metrics);
      expect(run.log, run.framing).toEqual(reference!.log);
    }
    expect(reference!.log).toHaveLength(SCRIPT.length);
  });
});

const ORIGIN = 'https://wallet.example';
/** Anonymous clients limited to one request a second, on a clock that stands still: no second ever ends mid-test. */
const ONE_PER_SECOND = { tenants: { anonymous: { requestsPerSecond: 1 } } };
const FROZEN = { now: () => 1_800_000_000_500 };
const CACHED = item('?ledger_version=990');
const PASSTHROUGH: Ask = { label: 'passthrough', method: 'GET', path: '/v1/estimate_gas_price' };

/** Sends a cached read and a passthrough call, from a browser's origin, in every framing. */
async function bothPaths(url: string): Promise<Array<{ path: string; framing: Framing; reply: RawReply }>> {
  const out = [];
  for (const framing of FRAMINGS) {
    for (const ask of [CACHED, PASSTHROUGH])
      out.push({ path: ask.label, framing, reply: await rawHttp(url, frame(ask, framing, { Origin: ORIGIN })) });
  }
  return out;
}

function expectRefused(
  replies: Array<{ path: string; framing: Framing; reply: RawReply }>,
  status: number,
  code: string,
): void {
  for (const { path, framing, reply } of replies) {
    const where = `${path} (${framing})`;
    expect(reply.status, where).toBe(status);
    expect(JSON.parse(reply.body.toString()).error_code, where).toBe(code);
    expect(reply.headers['access-control-allow-origin'], where).toBe(ORIGIN);
    expect(reply.headers['x-cache'], where).toBe('BYPASS');
  }
}

async function errorsByReason(app: App, reason: string): Promise<number> {
  const line = (await app.metrics.render()).body
    .split('\n')
    .find((l) => l.startsWith(`ledger_proxy_errors_total{reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe.each(TRANSPORTS)('the edge treats a cached read and a passthrough call alike ($name)', ({ lane }) => {
  const server = { server: { host: '127.0.0.1', port: 0, lane } };
  it('CORS: every reply to a request with Origin carries the CORS headers, on both paths', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], { ...QUIET, ...server });
    for (const { path, framing, reply } of await bothPaths(p.url)) {
      expect(reply.status, `${path} (${framing})`).toBe(200);
      expect(reply.headers['access-control-allow-origin'], `${path} (${framing})`).toBe(ORIGIN);
      expect(reply.headers['access-control-allow-credentials'], `${path} (${framing})`).toBe('true');
      expect(reply.headers['access-control-expose-headers'], `${path} (${framing})`).toContain('x-node-ledger-version');
    }
  });

  it('rate limited: both paths are refused alike, with the ledger headers, and counted by reason', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], { ...QUIET, ...ONE_PER_SECOND, ...server }, FROZEN);
    expect((await rawHttp(p.url, frame(PASSTHROUGH, 'length'))).status).toBe(200);
    const calls = node.counters.total;
    const replies = await bothPaths(p.url);
    expectRefused(replies, 429, 'rate_limited');
    for (const { reply } of replies) expect(reply.headers['x-node-ledger-version']).toBe('1000');
    expect(node.counters.total).toBe(calls);
    expect(await errorsByReason(p.app, 'rate_limited')).toBe(replies.length);
    // Each is counted under its own route family, a cached read as a cached read.
    const text = (await p.app.metrics.render()).body;
    expect(text).toContain(
      `ledger_proxy_requests_total{endpoint="raw_item",cache="BYPASS",status="429"} ${FRAMINGS.length}`,
    );
    expect(text).toContain(
      `ledger_proxy_requests_total{endpoint="passthrough",cache="BYPASS",status="429"} ${FRAMINGS.length}`,
    );
  });

  it('not ready: both paths answer 503 while no node has answered, counted by reason', async () => {
    const p = await proxy([{ url: 'http://127.0.0.1:9', name: 'gone' }], { ...QUIET, ...server });
    const replies = await bothPaths(p.url);
    expectRefused(replies, 503, 'internal_error');
    for (const { reply } of replies) expect(JSON.parse(reply.body.toString()).message).toMatch(/^not ready: /);
    expect(await errorsByReason(p.app, 'not_ready')).toBe(replies.length);
  });

  it('an internal error: both paths answer 500 without its text, log its cause once each, and count it', async () => {
    const node = await sim({ startVersion: 1000n });
    const log = capturedLog();
    const p = await proxy([node], { ...QUIET, ...server }, { logger: log.logger });
    vi.spyOn(p.app.pool, 'read').mockRejectedValue(new TypeError('a bug with a secret in its text'));
    vi.spyOn(p.app.pool, 'forward').mockRejectedValue(new TypeError('a bug with a secret in its text'));
    const replies = await bothPaths(p.url);
    expectRefused(replies, 500, 'internal_error');
    for (const { reply } of replies) expect(reply.body.toString()).not.toContain('secret');
    expect(log.lines.filter((l) => /internal error/.test(String(l.msg)))).toHaveLength(replies.length);
    expect(await errorsByReason(p.app, 'internal')).toBe(replies.length);
  });

  it('a preflight is answered by the proxy on both paths, never by a node, and is not rate limited', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], { ...QUIET, ...ONE_PER_SECOND, ...server }, FROZEN);
    const calls = node.counters.total;
    for (const path of [CACHED.path, PASSTHROUGH.path]) {
      for (let i = 0; i < 3; i++) {
        const reply = await rawHttp(
          p.url,
          httpRequest(`OPTIONS ${path} HTTP/1.1`, [
            'Host: proxy.test',
            'Connection: close',
            `Origin: ${ORIGIN}`,
            'Access-Control-Request-Method: POST',
            'Access-Control-Request-Headers: content-type, x-aptos-client',
          ]),
        );
        expect(reply.status, path).toBe(204);
        expect(reply.headers['access-control-allow-origin']).toBe(ORIGIN);
        expect(reply.headers['access-control-allow-methods']).toBe('GET, POST');
        expect(reply.headers['access-control-allow-headers']).toBe('content-type, x-aptos-client');
        expect(reply.headers['access-control-max-age']).toBe('86400');
      }
    }
    expect(node.counters.total).toBe(calls);
    expect((await rawHttp(p.url, frame(PASSTHROUGH, 'length'))).status).toBe(200);
  });
});
