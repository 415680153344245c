// Vary: Origin (api.md §10.1; the Fetch standard's "CORS protocol and HTTP
// caches"): every reply whose CORS headers depend on the request's Origin says so,
// in one Vary line, on every path (hit, miss, coalesced, passthrough, the proxy's
// own errors), so a shared cache in front never hands the reply to one origin
// (with its grant, or without) to another. A request without Origin gets no Vary,
// as from a node.
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

describe('cors.origins a list', () => {
  it('every reply to an unlisted origin has no grant and one Vary: Origin: hit, miss, coalesced, passthrough, and the proxy’s own 400, 404, 429, 503', async () => {
    const node = await sim({ startVersion: 1000n });
    const cors = { origins: [LISTED] };
    const p = await proxy([node], { ...QUIET, cors });
    const replies: Array<[string, RawReply]> = [];
    replies.push(['miss', await item(p.url, '0x07', UNLISTED)], ['hit', await item(p.url, '0x07', UNLISTED)]);
    node.faults.set({ mode: 'slow', delayMs: 300, routes: ['raw_item'] });
    const together = await Promise.all([item(p.url, '0x08', UNLISTED), item(p.url, '0x08', UNLISTED)]);
    node.faults.clear();
    expect(together.map((r) => r.headers['x-cache']).sort()).toEqual(['COALESCED', 'MISS']);
    replies.push(['coalesced', together.find((r) => r.headers['x-cache'] === 'COALESCED')!]);
    replies.push(['passthrough', await ask(p.url, 'GET', '/v1/estimate_gas_price', { origin: UNLISTED })]);
    replies.push(['400', await item(p.url, '0x07', UNLISTED, '?ledger_version=abc')]);
    replies.push(['404', await ask(p.url, 'GET', '/nope', { origin: UNLISTED })]);
    const limited = await proxy([node], { ...QUIET, cors, tenants: { anonymous: { requestsPerSecond: 1 } } }, FROZEN);
    await ask(limited.url, 'GET', '/v1');
    replies.push(['429', await ask(limited.url, 'GET', '/v1', { origin: UNLISTED })]);
    const notReady = await proxy([{ url: 'http://127.0.0.1:9', name: 'gone' }], { ...QUIET, cors });
    replies.push(['503', await ask(notReady.url, 'GET', '/v1', { origin: UNLISTED })]);
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
    for (const [what, reply] of replies) {
      expect(reply.headers['access-control-allow-origin'], what).toBeUndefined();
      expect(varyLines(reply), what).toEqual(['Origin']);
    }
    // The listed origin's reply to the same URL: the grant, and the same one Vary.
    for (const reply of [
      await item(p.url, '0x07', LISTED),
      await ask(p.url, 'GET', '/v1/estimate_gas_price', { origin: LISTED }),
    ]) {
      expect(reply.headers['access-control-allow-origin']).toBe(LISTED);
      expect(varyLines(reply)).toEqual(['Origin']);
    }
  });

  it('a request without Origin gets neither the grant nor a Vary, whatever answers it (as from a node); with cors.enabled false, the proxy adds none', async () => {
    const node = await sim({ startVersion: 1000n });
    const listed = await proxy([node], { ...QUIET, cors: { origins: [LISTED] } });
    const off = await proxy([node], { ...QUIET, cors: { enabled: false } });
    const replies: Array<[string, RawReply]> = [
      ['miss', await item(listed.url, '0x07')],
      ['hit', await item(listed.url, '0x07')],
      ['passthrough', await ask(listed.url, 'GET', '/v1/estimate_gas_price')],
      ['400', await item(listed.url, '0x07', undefined, '?ledger_version=abc')],
      ['cors off, miss', await item(off.url, '0x07', LISTED)],
      ['cors off, 400', await item(off.url, '0x07', LISTED, '?ledger_version=abc')],
    ];
    for (const [what, reply] of replies) {
      expect(reply.headers['access-control-allow-origin'], what).toBeUndefined();
      expect(varyLines(reply), what).toEqual([]);
    }
  });
});

describe('cors.origins any (the default): the origin is echoed, so its replies vary by it too', () => {
  it('a passthrough answer whose node says Vary: Origin itself gets one Vary line, naming Origin once', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const reply = await ask(p.url, 'GET', '/v1/estimate_gas_price', { origin: UNLISTED });
    expect(reply.status).toBe(200);
    expect(reply.headers['access-control-allow-origin']).toBe(UNLISTED);
    expect(varyLines(reply)).toEqual(['Origin']);
    expect(varyLines(await item(p.url, '0x07', UNLISTED))).toEqual(['Origin']);
  });

  it('a gzipped hit to a request with Origin gets one Vary line naming both', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
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
        { 'content-type': 'application/json', 'accept-encoding': 'gzip', origin: UNLISTED },
        view,
      );
    // The gzip copy is made shortly after the answer is stored.
    let hit: RawReply | undefined;
    await until(
      async () => (hit = await gzipped()).headers['content-encoding'] === 'gzip',
      5000,
      'the gzip copy of the large answer',
    );
    expect(hit!.headers['access-control-allow-origin']).toBe(UNLISTED);
    expect(varyLines(hit!)).toEqual(['accept-encoding, Origin']);
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
