// Vary: Origin (api.md §10.1; the Fetch standard's "CORS protocol and HTTP
// caches"): while CORS is on, every reply's CORS headers depend on the request's
// Origin, so every reply says so, in one Vary line, on every path (hit, miss,
// coalesced, passthrough, the proxy's own errors) and on both transports (the
// lane and node:http): a shared cache in front never hands the reply to one
// origin (with its grant, or without) to another, nor the reply to a request
// without Origin to a browser. With CORS off, the proxy adds none.
import { describe, expect, it } from 'vitest';
import { joinVary } from '../../src/edge/cors.js';
import { HANDLE, proxy, QUIET, sim } from '../helpers/proxy.js';
import { httpRequest, type RawReply, rawHttp } from '../helpers/raw-socket.js';
import { until } from '../helpers/until.js';

const LISTED = 'https://wallet.example';
const UNLISTED = 'https://other.example';
/** A clock that stands still: no second ends mid-test. */
const FROZEN = { now: () => 1_800_000_000_500 };

function ask(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawReply> {
  const lines = [
    'Host: proxy.test',
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return rawHttp(url, httpRequest(`${method} ${path} HTTP/1.1`, lines, body));
}

const item = (url: string, key: string, origin?: string, query = '?ledger_version=990'): Promise<RawReply> =>
  ask(
    url,
    'POST',
    `/v1/tables/${HANDLE}/raw_item${query}`,
    { 'content-type': 'application/json', accept: 'application/x-bcs', ...(origin ? { origin } : {}) },
    JSON.stringify({ key }),
  );

/** The Vary lines of a reply, as sent. */
const varyLines = (reply: RawReply): string[] =>
  reply.headerLines.filter(([name]) => name.toLowerCase() === 'vary').map(([, value]) => value);

/** One reply of every kind the proxy sends, each to a request with `origin` (none: without Origin). */
async function everyKind(
  overrides: Record<string, unknown>,
  origin: string | undefined,
): Promise<Array<[string, RawReply]>> {
  const node = await sim({ startVersion: 1000n });
  const withOrigin: Record<string, string> = origin === undefined ? {} : { origin };
  const p = await proxy([node], overrides);
  const replies: Array<[string, RawReply]> = [];
  replies.push(['miss', await item(p.url, '0x07', origin)], ['hit', await item(p.url, '0x07', origin)]);
  node.faults.set({ mode: 'slow', delayMs: 300, routes: ['raw_item'] });
  const together = await Promise.all([item(p.url, '0x08', origin), item(p.url, '0x08', origin)]);
  node.faults.clear();
  expect(together.map((r) => r.headers['x-cache']).sort()).toEqual(['COALESCED', 'MISS']);
  replies.push(['coalesced', together.find((r) => r.headers['x-cache'] === 'COALESCED')!]);
  replies.push(['passthrough', await ask(p.url, 'GET', '/v1/estimate_gas_price', withOrigin)]);
  replies.push(['400', await item(p.url, '0x07', origin, '?ledger_version=abc')]);
  replies.push(['404', await ask(p.url, 'GET', '/nope', withOrigin)]);
  const limited = await proxy([node], { ...overrides, tenants: { anonymous: { requestsPerSecond: 1 } } }, FROZEN);
  await ask(limited.url, 'GET', '/v1');
  replies.push(['429', await ask(limited.url, 'GET', '/v1', withOrigin)]);
  const notReady = await proxy([{ url: 'http://127.0.0.1:9', name: 'gone' }], overrides);
  replies.push(['503', await ask(notReady.url, 'GET', '/v1', withOrigin)]);
  expect(replies.map(([what, r]) => `${what} ${r.status}`)).toEqual([
    'miss 200',
    'hit 200',
    'coalesced 200',
    'passthrough 200',
    '400 400',
    '404 404',
    '429 429',
    '503 503',
  ]);
  return replies;
}

describe.each([true, false])('server.lane %s', (lane) => {
  const server = { host: '127.0.0.1', port: 0, lane };

  describe('cors.origins a list', () => {
    const settings = { ...QUIET, server, cors: { origins: [LISTED] } };

    it('every reply to an unlisted origin has no grant and one Vary: Origin: hit, miss, coalesced, passthrough, and the proxy’s own 400, 404, 429, 503', async () => {
      for (const [what, reply] of await everyKind(settings, UNLISTED)) {
        expect(reply.headers['access-control-allow-origin'], what).toBeUndefined();
        expect(varyLines(reply), what).toEqual(['Origin']);
      }
      // The listed origin's reply to the same URL: the grant, and the same one Vary.
      const node = await sim({ startVersion: 1000n });
      const p = await proxy([node], settings);
      for (const reply of [
        await item(p.url, '0x07', LISTED),
        await ask(p.url, 'GET', '/v1/estimate_gas_price', { origin: LISTED }),
      ]) {
        expect(reply.headers['access-control-allow-origin']).toBe(LISTED);
        expect(varyLines(reply)).toEqual(['Origin']);
      }
    });

    it('every reply to a request without Origin has no grant and still one Vary: Origin, whatever answers it', async () => {
      for (const [what, reply] of await everyKind(settings, undefined)) {
        expect(reply.headers['access-control-allow-origin'], what).toBeUndefined();
        expect(varyLines(reply), what).toEqual(['Origin']);
      }
    });
  });

  describe('cors.origins any (the default): the origin is echoed, so its replies vary by it too', () => {
    const settings = { ...QUIET, server };

    it('every reply to a request without Origin has no grant and one Vary: Origin, whatever answers it', async () => {
      for (const [what, reply] of await everyKind(settings, undefined)) {
        expect(reply.headers['access-control-allow-origin'], what).toBeUndefined();
        expect(varyLines(reply), what).toEqual(['Origin']);
      }
    });

    it('a passthrough answer whose node says Vary: Origin itself gets one Vary line, naming Origin once', async () => {
      const node = await sim({ startVersion: 1000n });
      const p = await proxy([node], settings);
      const reply = await ask(p.url, 'GET', '/v1/estimate_gas_price', { origin: UNLISTED });
      expect(reply.status).toBe(200);
      expect(reply.headers['access-control-allow-origin']).toBe(UNLISTED);
      expect(varyLines(reply)).toEqual(['Origin']);
      expect(varyLines(await item(p.url, '0x07', UNLISTED))).toEqual(['Origin']);
    });

    it.each([
      ['with Origin', UNLISTED],
      ['without Origin', undefined],
    ])('a gzipped hit to a request %s gets one Vary line naming both', async (_, origin) => {
      const node = await sim({ startVersion: 1000n });
      const p = await proxy([node], settings);
      const view = JSON.stringify({
        function: '0x1::sim::type_name',
        type_arguments: [`0x1::${'a'.repeat(1500)}::T`],
        arguments: [],
      });
      const gzipped = (): Promise<RawReply> =>
        ask(
          p.url,
          'POST',
          '/v1/view?ledger_version=990',
          { 'content-type': 'application/json', 'accept-encoding': 'gzip', ...(origin ? { origin } : {}) },
          view,
        );
      // The gzip copy is made shortly after the answer is stored.
      let hit: RawReply | undefined;
      await until(
        async () => (hit = await gzipped()).headers['content-encoding'] === 'gzip',
        5000,
        'the gzip copy of the large answer',
      );
      expect(hit!.headers['access-control-allow-origin']).toBe(origin);
      expect(varyLines(hit!)).toEqual(['accept-encoding, Origin']);
    });
  });

  describe('cors.enabled false', () => {
    const settings = { ...QUIET, server, cors: { enabled: false } };

    it.each([
      ['with Origin', UNLISTED],
      ['without Origin', undefined],
    ])('no reply to a request %s gets a grant or a Vary from the proxy', async (_, origin) => {
      for (const [what, reply] of await everyKind(settings, origin)) {
        expect(reply.headers['access-control-allow-origin'], what).toBeUndefined();
        // A passthrough answer keeps the node's own Vary (the sim's CORS layer sets one for a request with Origin).
        expect(varyLines(reply), what).toEqual(what === 'passthrough' && origin !== undefined ? ['Origin'] : []);
      }
    });
  });
});

describe('joinVary', () => {
  it.each([
    [undefined, 'Origin'],
    ['Accept-Encoding', 'Accept-Encoding, Origin'],
    ['origin', 'origin'],
    ['Accept-Encoding , ORIGIN', 'Accept-Encoding, ORIGIN'],
    [['Accept-Encoding', 'Origin'], 'Accept-Encoding, Origin'],
    ['*', '*'],
    ['', 'Origin'],
  ])('a node’s Vary %j with the proxy’s Origin → %j', (received, joined) => {
    expect(joinVary(received, 'Origin')).toBe(joined);
  });
});
