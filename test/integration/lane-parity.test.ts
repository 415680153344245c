// The lane and node:http on kept-alive and pipelined connections, and on one
// the client half-closes after its requests: the same requests, one proxy with
// the lane on and one with it off, and every byte of the replies the same but
// the Date and the request id (Connection and Keep-Alive included). Then 100
// requests pipelined on one connection, lane requests and handed-off ones
// (passthrough, chunked) mixed, answered in order.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HANDLE, proxy, QUIET, sim } from '../helpers/proxy.js';
import { chunked, httpRequest, openSocket, rawReplies } from '../helpers/raw-socket.js';
import { until } from '../helpers/until.js';

const KEY = (n: number): string => `{"key":"0x${n.toString(16).padStart(16, '0')}"}`;
const ITEM = `/v1/tables/${HANDLE}/raw_item?ledger_version=990`;
const BCS = ['content-type: application/json', 'accept: application/x-bcs'];
const VIEW = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['40', '2'] });

/** Requests a client keeps a connection open for: hits, misses, errors, passthrough, an unknown route. */
function script(): Buffer[] {
  const host = 'Host: proxy.test';
  return [
    httpRequest(`POST ${ITEM} HTTP/1.1`, [host, ...BCS], KEY(7)),
    httpRequest(`POST ${ITEM} HTTP/1.1`, [host, ...BCS], KEY(7)),
    httpRequest(`POST ${ITEM} HTTP/1.1`, [host, ...BCS, 'Origin: https://wallet.example'], KEY(7)),
    httpRequest(`POST ${ITEM} HTTP/1.1`, [host, 'content-type: application/json'], KEY(7)),
    httpRequest(`POST ${ITEM} HTTP/1.1`, [host, ...BCS], '{"key":'),
    httpRequest(`POST /v1/view?ledger_version=990 HTTP/1.1`, [host, 'content-type: application/json'], VIEW),
    httpRequest(`GET /v1/accounts/0x1/module/sim?ledger_version=990 HTTP/1.1`, [host, 'Accept-Encoding: gzip']),
    httpRequest(`GET /v1/accounts/0x1/module/sim?ledger_version=990 HTTP/1.1`, [host, 'Connection: keep-alive']),
    httpRequest(`GET /v1/transactions/by_version/5 HTTP/1.1`, [host]),
    httpRequest(`GET /v1/estimate_gas_price HTTP/1.1`, [host]),
    httpRequest(`POST ${ITEM} HTTP/1.1`, [host, ...BCS, 'Transfer-Encoding: chunked'], chunked(KEY(7), 5)),
    httpRequest(`GET /nope HTTP/1.1`, [host]),
    httpRequest(`POST ${ITEM}&x=1 HTTP/1.1`, [host, ...BCS, 'X-Request-Id: kept-id'], KEY(7)),
  ];
}

/** The last request: it closes the connection. */
const LAST = httpRequest(`HEAD /v1/accounts/0x1/module/sim?ledger_version=990 HTTP/1.1`, [
  'Host: proxy.test',
  'Connection: close',
]);

/** The replies as sent, less what must differ: the moment and made request ids. */
function normalised(received: string): string {
  return received
    .replace(/\r\n(date): [^\r]*/gi, '\r\n$1: -')
    .replace(/\r\nx-request-id: (?!kept-id)[^\r]*/g, '\r\nx-request-id: -');
}

/** Sends each request once the reply before it came, on one connection; everything the proxy sent. */
async function oneByOne(url: string, requests: Buffer[]): Promise<string> {
  const s = await openSocket(url);
  for (let i = 0; i < requests.length; i++) {
    s.socket.write(requests[i]!);
    await until(() => rawReplies(Buffer.from(s.received(), 'latin1'), false).length > i, 5000, `reply ${i}`);
  }
  s.socket.write(LAST);
  await s.closed;
  return s.received();
}

/** Sends every request in one write; everything the proxy sent until it closed. */
async function pipelined(url: string, requests: Buffer[]): Promise<string> {
  const s = await openSocket(url);
  s.socket.write(Buffer.concat([...requests, LAST]));
  await s.closed;
  return s.received();
}

/** Sends every request in one write and half-closes; everything the proxy sent until it closed. */
async function halfClosed(url: string, requests: Buffer[]): Promise<string> {
  const s = await openSocket(url);
  s.socket.end(Buffer.concat(requests));
  await s.closed;
  return s.received();
}

describe('the lane and node:http on one connection', () => {
  it('send the same bytes, kept alive and pipelined', async () => {
    const node = await sim({ startVersion: 1000n, pruneWindow: 500n });
    const seen: Record<string, { oneByOne: string; pipelined: string; halfClosed: string; nodeRequests: number }> = {};
    for (const lane of [true, false]) {
      const p = await proxy([node], { ...QUIET, server: { host: '127.0.0.1', port: 0, lane } });
      let nodeRequests = 0;
      p.app.http.server.on('request', () => nodeRequests++);
      seen[String(lane)] = {
        oneByOne: normalised(await oneByOne(p.url, script())),
        pipelined: normalised(await pipelined(p.url, script())),
        halfClosed: normalised(await halfClosed(p.url, script())),
        nodeRequests,
      };
    }
    const [lane, node_] = [seen.true!, seen.false!];
    expect(lane.oneByOne).toEqual(node_.oneByOne);
    expect(lane.pipelined).toEqual(node_.pipelined);
    expect(lane.halfClosed).toEqual(node_.halfClosed);
    const statuses = [200, 200, 200, 403, 400, 200, 200, 200, 410, 200, 200, 404, 200];
    const replies = rawReplies(Buffer.from(lane.oneByOne, 'latin1'), true);
    expect(replies.map((r) => r.status)).toEqual([...statuses, 200]);
    // Half-closed after its requests, a connection still has every one answered.
    expect(rawReplies(Buffer.from(lane.halfClosed, 'latin1'), true).map((r) => r.status)).toEqual(statuses);
    expect(lane.oneByOne).toContain('Connection: keep-alive\r\nKeep-Alive: timeout=');
    // On each connection the lane read the first nine; node:http the passthrough call and all after it.
    expect(lane.nodeRequests).toBe(2 * 5 + 4);
    expect(node_.nodeRequests).toBe(3 * script().length + 2);
  });

  it('answers 100 pipelined requests in order, lane requests and handed-off ones mixed', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], { ...QUIET, server: { host: '127.0.0.1', port: 0, lane: true } });
    const requests: Buffer[] = [];
    const expected: string[] = [];
    for (let i = 0; i < 100; i++) {
      const id = `req-${i}`;
      const kind = i % 5;
      const host = ['Host: proxy.test', `X-Request-Id: ${id}`];
      if (kind === 3) requests.push(httpRequest('GET /v1/estimate_gas_price HTTP/1.1', host));
      else if (kind === 4)
        requests.push(
          httpRequest(`POST ${ITEM} HTTP/1.1`, [...host, ...BCS, 'Transfer-Encoding: chunked'], chunked(KEY(7))),
        );
      else requests.push(httpRequest(`POST ${ITEM} HTTP/1.1`, [...host, ...BCS], KEY(7)));
      expected.push(id);
    }
    requests.push(
      httpRequest('GET /v1/estimate_gas_price HTTP/1.1', [
        'Host: proxy.test',
        'X-Request-Id: last',
        'Connection: close',
      ]),
    );
    expected.push('last');
    const s = await openSocket(p.url);
    s.socket.write(Buffer.concat(requests));
    await s.closed;
    const replies = rawReplies(Buffer.from(s.received(), 'latin1'), true);
    expect(replies.map((r) => r.headers['x-request-id'])).toEqual(expected);
    for (const reply of replies) expect(reply.status).toBe(200);
  });

  it('stops reading while the client does not read its replies, and answers every request once it does', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], { ...QUIET, server: { host: '127.0.0.1', port: 0, lane: true } });
    const one = httpRequest(`POST ${ITEM} HTTP/1.1`, ['Host: proxy.test', ...BCS], KEY(7));
    const count = 3000;
    const socket = connect(Number(new URL(p.url).port), '127.0.0.1');
    socket.pause();
    const got: Buffer[] = [];
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(Buffer.concat([...Array(count).fill(one), LAST]));
    // Pacing under test: the replies pile up unread meanwhile, past the proxy's write buffer.
    await new Promise((r) => setTimeout(r, 300));
    socket.on('data', (d: Buffer) => got.push(d));
    socket.resume();
    await closed;
    const replies = rawReplies(Buffer.concat(got), true, false);
    expect(replies.length).toBeGreaterThanOrEqual(count);
    expect(replies.slice(0, count).every((r) => r.status === 200)).toBe(true);
  });
});
