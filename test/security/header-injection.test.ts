// No header injection: CR/LF in a query value, a path parameter or a header value
// never adds a header to the request the node gets or to the reply the client
// gets. Sent on a raw socket (a client library would refuse these), checked on the
// node's recorded headers and on the reply's header lines.
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { proxy, sim, QUIET } from '../helpers/proxy.js';
import { expectNodeErrorBody, httpRequest, rawHttp, type RawReply } from '../helpers/raw-socket.js';

const KEY_BODY = '{"key":"0x01"}';
const ADD_BODY = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
const RAW_HEADERS = ['content-type: application/json', 'accept: application/x-bcs'];
const VIEW_HEADERS = ['content-type: application/json', 'accept: application/json'];

const INJECTED = /injected|evil/i;

async function setup(): Promise<{ node: SimNode; url: string }> {
  const node = await sim();
  const { url } = await proxy([node], QUIET);
  return { node, url };
}

/** The reply: node-shaped, and no header line carries the injected name or value. */
function expectClean(reply: RawReply | Error, label: string): void {
  expect(reply, `${label}: no reply`).not.toBeInstanceOf(Error);
  const r = reply as RawReply;
  for (const [name, value] of r.headerLines) {
    expect(`${name}: ${value}`, `${label}: reply header`).not.toMatch(INJECTED);
    expect(value, `${label}: reply header ${name}`).not.toMatch(/[\r\n]/);
  }
  if (r.status !== 200) expectNodeErrorBody(r, undefined, undefined, label);
}

/** Nothing the node got has an injected header, or a CR/LF in any header value. */
function expectNodeClean(node: SimNode): void {
  for (const req of node.counters.requests) {
    for (const [name, value] of Object.entries(req.headers)) {
      expect(name, `${req.method} ${req.url}: header name`).not.toMatch(INJECTED);
      for (const v of Array.isArray(value) ? value : [value ?? '']) {
        expect(v, `${req.method} ${req.url}: header ${name}`).not.toMatch(/[\r\n]/);
        expect(v, `${req.method} ${req.url}: header ${name}`).not.toMatch(INJECTED);
      }
    }
    // A CR/LF reaching the node would show in its request line as raw bytes.
    expect(req.url, 'request target at the node').not.toMatch(/[\r\n\s]/);
  }
}

const send = (url: string, request: Buffer): Promise<RawReply | Error> =>
  rawHttp(url, request).catch((err: Error) => err);

describe('no header injection', () => {
  it('encoded CR/LF in query values and path parameters of served endpoints: refused with 400, nothing reaches the node', async () => {
    const { node, url } = await setup();
    const targets = [
      'POST /v1/view?ledger_version=990%0d%0aX-Injected:%20yes',
      'POST /v1/view?ledger_version=990%0aX-Injected:%20yes',
      'POST /v1/view?ledger_version=990%0dX-Injected:%20yes',
      'POST /v1/tables/0x1/raw_item?ledger_version=990%0d%0aX-Injected:%20yes',
      'POST /v1/tables/0x1%0d%0aX-Injected:%20yes/raw_item',
      'POST /v1/tables/0x1%0d%0a%0d%0aHTTP%2F1.1%20200%20OK%0d%0aX-Evil:%201/raw_item',
    ];
    for (const target of targets) {
      const headers = target.includes('raw_item') ? RAW_HEADERS : VIEW_HEADERS;
      const reply = await send(
        url,
        httpRequest(
          `${target} HTTP/1.1`,
          ['host: x', ...headers, 'connection: close'],
          target.includes('raw_item') ? KEY_BODY : ADD_BODY,
        ),
      );
      expectClean(reply, target);
      expect((reply as RawReply).status, target).toBe(400);
    }
    expect(node.counters.byRoute.raw_item + node.counters.byRoute.view).toBe(0);
    expectNodeClean(node);
  });

  it('encoded CR/LF in an extra query parameter of a served read: served, and the node call carries no trace of it', async () => {
    const { node, url } = await setup();
    for (const [target, headers, body] of [
      ['POST /v1/view?ledger_version=990&x=%0d%0aX-Injected:%20yes', VIEW_HEADERS, ADD_BODY],
      ['POST /v1/tables/0x1/raw_item?x=%0d%0aX-Injected:%20yes&ledger_version=990', RAW_HEADERS, KEY_BODY],
    ] as const) {
      const reply = await send(
        url,
        httpRequest(`${target} HTTP/1.1`, ['host: x', ...headers, 'connection: close'], body),
      );
      expectClean(reply, target);
      expect((reply as RawReply).status, target).toBe(200);
    }
    const calls = node.counters.requests.filter((r) => r.method === 'POST').map((r) => r.url);
    expect(calls).toEqual([
      '/v1/view?ledger_version=990',
      `/v1/tables/0x${'0'.repeat(63)}1/raw_item?ledger_version=990`,
    ]);
    expectNodeClean(node);
  });

  it('encoded CR/LF in passthrough paths and queries: forwarded only percent-encoded, never as a header', async () => {
    const { node, url } = await setup();
    const targets = [
      'GET /v1/estimate_gas_price?x=%0d%0aX-Injected:%20yes',
      'GET /v1/accounts/0x1%0d%0aX-Injected:%20yes/module/sim',
      'GET /v1/estimate_gas_price%0d%0a%0d%0aGET%20/evil',
      'POST /v1/transactions?x=%0d%0aX-Injected:%20yes',
    ];
    for (const target of targets) {
      const reply = await send(
        url,
        httpRequest(
          `${target} HTTP/1.1`,
          ['host: x', 'content-type: application/json', 'connection: close'],
          target.startsWith('POST') ? '{}' : undefined,
        ),
      );
      expectClean(reply, target);
    }
    expectNodeClean(node);
    // Only the proxy's own probe, and the requests as sent (still encoded), reached the node.
    for (const r of node.counters.requests) if (r.url !== '/v1') expect(r.url).toMatch(/%0d%0a/i);
  });

  it('raw CR, LF and obs-fold inside header values and the request line: a 400 error body (or a header kept whole), never a new header', async () => {
    const { node, url } = await setup();
    const variants: Array<[string, Buffer]> = [];
    for (const [label, value] of [
      ['bare CR', 'application/json\rX-Injected: yes'],
      ['bare LF', 'application/json\nX-Injected: yes'],
      ['obs-fold', 'application/json\r\n X-Injected: yes'],
      ['NUL', 'application/json\u0000X-Injected: yes'],
    ] as const) {
      variants.push([
        `served view, Accept ${label}`,
        httpRequest(
          'POST /v1/view?ledger_version=990 HTTP/1.1',
          ['host: x', 'content-type: application/json', `accept: ${value}`, 'connection: close'],
          ADD_BODY,
        ),
      ]);
      variants.push([
        `served raw_item, custom header ${label}`,
        httpRequest(
          'POST /v1/tables/0x1/raw_item?ledger_version=991 HTTP/1.1',
          ['host: x', ...RAW_HEADERS, `x-custom: ${value}`, 'connection: close'],
          KEY_BODY,
        ),
      ]);
      variants.push([
        `passthrough, custom header ${label}`,
        httpRequest('GET /v1/estimate_gas_price HTTP/1.1', ['host: x', `x-custom: ${value}`, 'connection: close']),
      ]);
    }
    variants.push([
      'bare CR in the request line',
      Buffer.from(
        'GET /v1/estimate_gas_price?x=\rX-Injected: yes HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n',
        'latin1',
      ),
    ]);
    for (const [label, request] of variants) {
      const reply = await send(url, request);
      expectClean(reply, label);
      expect([200, 400], label).toContain((reply as RawReply).status);
    }
    expectNodeClean(node);
  });

  // Node's parser takes `GET /path?x=<LF>` as an HTTP/0.9 request line and the
  // rest of that line as a header; the proxy serves HTTP/0.9 requests with headers,
  // and the passthrough forwards that header to the node.
  it('a bare LF in the request target (an HTTP/0.9 request line with headers) is refused, and adds no header upstream', async () => {
    const { node, url } = await setup();
    const variants: Array<[string, string]> = [
      [
        'passthrough, bare LF in the query',
        'GET /v1/estimate_gas_price?x=\nX-Injected: yes HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n',
      ],
      [
        'passthrough, bare LF after the path',
        'GET /v1/estimate_gas_price\nX-Injected: yes\r\nhost: x\r\nconnection: close\r\n\r\n',
      ],
      [
        'passthrough, no HTTP version',
        'GET /v1/estimate_gas_price\r\nX-Injected: yes\r\nhost: x\r\nconnection: close\r\n\r\n',
      ],
    ];
    for (const [label, text] of variants) {
      const reply = await send(url, Buffer.from(text, 'latin1'));
      expectClean(reply, label);
      expectNodeErrorBody(reply as RawReply, 400, 'web_framework_error', label);
    }
    expectNodeClean(node);
    expect(node.counters.requests.map((r) => r.url)).toEqual(['/v1']);
  });

  it('the served endpoints send the node only their own headers, whatever the client adds', async () => {
    const { node, url } = await setup();
    const extra = [
      'x-injected: yes',
      'x-evil: 1',
      'cookie: session=evil',
      'authorization: Bearer evil',
      'x-forwarded-for: 6.6.6.6',
    ];
    await send(
      url,
      httpRequest(
        'POST /v1/view?ledger_version=992 HTTP/1.1',
        ['host: x', ...VIEW_HEADERS, ...extra, 'connection: close'],
        ADD_BODY,
      ),
    );
    await send(
      url,
      httpRequest(
        'POST /v1/tables/0x1/raw_item HTTP/1.1',
        ['host: x', ...RAW_HEADERS, ...extra, 'connection: close'],
        KEY_BODY,
      ),
    );
    const served = node.counters.requests.filter((r) => r.method === 'POST');
    expect(served).toHaveLength(2);
    for (const r of served) {
      // x-request-id: the proxy's own id of the request (api.md §10.5), never a header the client added.
      expect(Object.keys(r.headers).sort(), r.url).toEqual([
        'accept',
        'accept-encoding',
        'connection',
        'content-length',
        'content-type',
        'host',
        'x-request-id',
      ]);
      expect(r.headers.connection).toBe('keep-alive');
    }
    expectNodeClean(node);
  });
});
