// Client input never chooses the upstream host or leaves the validated path
// (api.md §7 "Nodes are the only upstream"). A decoy HTTP server on 127.0.0.1 is
// named by Host, X-Forwarded-Host, Forwarded and absolute-form request targets,
// and handles and ledger_version values carry `..`, `%2F`, `@`, `#`, `?` and `&`
// tricks. The decoy gets nothing, and every request the node recorded for a served
// endpoint is exactly /v1/tables/0x<64 hex>/raw_item[?ledger_version=<digits>] or
// /v1/view[?ledger_version=<digits>].
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { proxy, sim, QUIET } from '../helpers/proxy.js';
import { decoy, expectNodeErrorBody, httpRequest, rawHttp, type Decoy, type RawReply } from '../helpers/raw-socket.js';

const KEY_BODY = '{"key":"0x01"}';
const ADD_BODY = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
const RAW_HEADERS = ['content-type: application/json', 'accept: application/x-bcs'];
const VIEW_HEADERS = ['content-type: application/json', 'accept: application/json'];

const SERVED_URL = /^(?:\/v1\/tables\/0x[0-9a-f]{64}\/raw_item|\/v1\/view)(?:\?ledger_version=\d+)?$/;
/** What the passthrough must never forward (a `@` or `%23` inside /v1 is only a path on the node). */
const UNSAFE = /\/\/|%2f|%5c|%2e|\\|(?:^|\/)\.\.?(?:\/|$)/i;

async function setup(): Promise<{ node: SimNode; url: string; d: Decoy }> {
  const node = await sim();
  const d = await decoy();
  const { url } = await proxy([node], QUIET);
  return { node, url, d };
}

/** Every reply is node-shaped: 200 with a body, or an error body with an allowed status. */
function expectNodeShaped(reply: RawReply, label: string): void {
  if (reply.status === 200) return;
  expectNodeErrorBody(reply, undefined, undefined, label);
}

/** What reached the node: served endpoints exactly in canonical form, everything else inside a clean /v1. */
function expectConfined(node: SimNode, proxyHost: string): void {
  expect(node.counters.requests.length).toBeGreaterThan(0);
  for (const r of node.counters.requests) {
    const path = r.url.split('?')[0];
    if (/\/raw_item$/.test(path) || path === '/v1/view' || /\/view$/.test(path)) {
      expect(r.url, `served endpoint url reaching the node`).toMatch(SERVED_URL);
    } else {
      expect(path, r.url).toMatch(/^\/v1(?:\/|$)/);
      expect(path, r.url).not.toMatch(UNSAFE);
    }
    // The node is always called by its own address, never a name the client sent.
    const nodeHost = new URL(node.url).host;
    expect(r.headers.host, `Host of ${r.method} ${r.url}`).toBe(nodeHost);
    expect(r.headers.host).not.toBe(proxyHost);
    // (Other client headers, X-Original-URL among them, pass through to the node as
    // headers: they never change the host or path the proxy calls.)
    for (const name of ['x-forwarded-host', 'forwarded', 'x-forwarded-proto', 'x-forwarded-port']) {
      expect(r.headers[name], `${name} of ${r.method} ${r.url}`).toBeUndefined();
    }
  }
}

describe('upstream confinement: nothing in a request picks the host or leaves the path', () => {
  it('Host, X-Forwarded-Host, Forwarded and X-Original-URL naming a decoy: served and passthrough requests still go to the node', async () => {
    const { node, url, d } = await setup();
    const naming = [
      `host: ${d.host}`,
      `x-forwarded-host: ${d.host}`,
      `forwarded: host=${d.host};proto=http`,
      'x-forwarded-proto: http',
      `x-forwarded-port: ${d.port}`,
      `x-original-url: http://${d.host}/v1/view`,
      `x-rewrite-url: http://${d.host}/v1/view`,
      'connection: close',
    ];
    const cases: Array<[string, Buffer, number]> = [
      [
        'raw_item latest',
        httpRequest(`POST /v1/tables/0x1/raw_item HTTP/1.1`, [...naming, ...RAW_HEADERS], KEY_BODY),
        200,
      ],
      [
        'raw_item pinned',
        httpRequest(`POST /v1/tables/0x1/raw_item?ledger_version=990 HTTP/1.1`, [...naming, ...RAW_HEADERS], KEY_BODY),
        200,
      ],
      ['view latest', httpRequest(`POST /v1/view HTTP/1.1`, [...naming, ...VIEW_HEADERS], ADD_BODY), 200],
      [
        'view pinned',
        httpRequest(`POST /v1/view?ledger_version=991 HTTP/1.1`, [...naming, ...VIEW_HEADERS], ADD_BODY),
        200,
      ],
      ['passthrough GET /v1', httpRequest(`GET /v1 HTTP/1.1`, naming), 200],
      ['passthrough module', httpRequest(`GET /v1/estimate_gas_price HTTP/1.1`, naming), 200],
      [
        'passthrough POST',
        httpRequest(`POST /v1/transactions HTTP/1.1`, [...naming, 'content-type: application/json'], '{}'),
        404,
      ],
    ];
    for (const [label, request, status] of cases) {
      const reply = await rawHttp(url, request);
      expect(reply.status, `${label}: ${reply.body.toString('utf8').slice(0, 200)}`).toBe(status);
      expectNodeShaped(reply, label);
    }
    expect(d.hits).toEqual([]);
    expectConfined(node, new URL(url).host);
    // Every case reached the node: nothing was answered by someone else.
    expect(node.counters.byRoute.raw_item).toBe(2);
    expect(node.counters.byRoute.view).toBe(2);
  });

  it('absolute-form request targets naming the decoy never reach it', async () => {
    const { node, url, d } = await setup();
    const targets: Array<[string, string[], string?]> = [
      [`POST http://${d.host}/v1/view`, VIEW_HEADERS, ADD_BODY],
      [`POST http://${d.host}/v1/tables/0x1/raw_item?ledger_version=990`, RAW_HEADERS, KEY_BODY],
      [`GET http://${d.host}/v1`, []],
      [`GET http://${d.host}/v1/estimate_gas_price`, []],
      [`GET https://${d.host}/v1`, []],
      [`GET //${d.host}/v1`, []],
      [`GET ${d.host}/v1`, []],
      [`GET http://127.0.0.1:${new URL(url).port}@${d.host}/v1`, []],
    ];
    for (const [line, headers, body] of targets) {
      for (const host of [d.host, new URL(url).host]) {
        let reply: RawReply;
        try {
          reply = await rawHttp(
            url,
            httpRequest(`${line} HTTP/1.1`, [`host: ${host}`, ...headers, 'connection: close'], body),
          );
        } catch (err) {
          throw new Error(`${line} (Host ${host}): no reply: ${(err as Error).message}`);
        }
        expectNodeShaped(reply, line);
      }
    }
    expect(d.hits).toEqual([]);
    for (const r of node.counters.requests) {
      if (r.url !== '/v1') expect(r.url, "only the proxy's probe, or a confined request").toMatch(/^\/v1[/?]/);
    }
    expectConfined(node, new URL(url).host);
  });

  it('CONNECT naming the decoy: never tunnelled, and answered with a node error body (not a dropped connection)', async () => {
    const { node, url, d } = await setup();
    const reply = await rawHttp(url, httpRequest(`CONNECT ${d.host} HTTP/1.1`, [`host: ${d.host}`]), 2000).catch(
      (err: Error) => err,
    );
    expect(d.hits).toEqual([]);
    expect(node.counters.requests.every((r) => r.url === '/v1')).toBe(true);
    // api.md §7: never a dropped connection without a reply where HTTP allows one.
    expect(reply, 'CONNECT got no reply at all').not.toBeInstanceOf(Error);
    expectNodeErrorBody(reply as RawReply, 400, 'web_framework_error', 'CONNECT');
  });

  it('table handles with `..`, %2F, `@`, `#`, `?` and CR/LF tricks: 400 (or a canonical call), never another path', async () => {
    const { node, url, d } = await setup();
    const handles = [
      '0x1%2F..%2F..%2Fview',
      '..%2F..%2Fview',
      '%2e%2e',
      '..',
      '.',
      `0x1@${d.host}`,
      `0x1%40${d.host.replace(':', '%3A')}`,
      '0x1%23frag',
      '0x1%3Fledger_version%3D5',
      '0x1%3F',
      `%2F%2F${d.host}`,
      '0x1%5C..%5Cview',
      '0x1%00',
      '0x1%0d%0aX-Injected:%20yes',
      '0x1%20',
      '0x1;x=1',
      '0x' + '1'.repeat(65),
      'ab'.repeat(32) + '%2F..',
      '0X01',
      '0x01%2F',
    ];
    for (const handle of handles) {
      const reply = await rawHttp(
        url,
        httpRequest(
          `POST /v1/tables/${handle}/raw_item?ledger_version=990 HTTP/1.1`,
          ['host: x', ...RAW_HEADERS, 'connection: close'],
          KEY_BODY,
        ),
      );
      expectNodeShaped(reply, `handle ${handle}`);
      expect(reply.status, `handle ${handle}: ${reply.body.toString('utf8').slice(0, 200)}`).toBe(400);
    }
    // Raw path tricks around the handle segment (these do not match the served route:
    // they fall to the passthrough, which refuses them).
    const paths = [
      '/v1/tables/0x1/../../view',
      '/v1/tables/0x1/..%2F..%2Fview/raw_item',
      '/v1/tables//0x1/raw_item',
      `/v1/tables/0x1/raw_item/..%2F..%2F..%2F`,
      '/v1/tables/0x1/raw_item/../../view',
      '/v1/./tables/0x1/raw_item',
      '/v1/tables/0x1%2Fraw_item',
      `/v1/tables/0x1/raw_item#@${d.host}`,
    ];
    for (const path of paths) {
      const reply = await rawHttp(
        url,
        httpRequest(`POST ${path} HTTP/1.1`, ['host: x', ...RAW_HEADERS, 'connection: close'], KEY_BODY),
      );
      expectNodeShaped(reply, path);
    }
    expect(d.hits).toEqual([]);
    expectConfined(node, new URL(url).host);
    // Only the valid spelling (0X01) read an item; nothing else was a served call.
    expect(node.counters.byRoute.raw_item).toBeLessThanOrEqual(1);
  });

  it('ledger_version with `&`, `#`, `?`, `%26`, duplicates and extra parameters: 400, or the call carries exactly ?ledger_version=<digits>', async () => {
    const { node, url, d } = await setup();
    const queries = [
      '?ledger_version=990&x=1',
      `?ledger_version=990&host=${d.host}`,
      '?ledger_version=990%26x%3D1',
      '?ledger_version=990#frag',
      '?ledger_version=990%23frag',
      '?ledger_version=990?x=1',
      '?ledger_version=990%3Fx%3D1',
      '?ledger_version=990&ledger_version=991',
      '?ledger_version[]=990',
      '?ledger_version[a]=990',
      '?ledger_version=%39%39%30',
      '?ledger_version=0990',
      '?ledger_version=990%0d%0aX-Injected:%20yes',
      '?ledger_version=990%20',
      '?ledger_version=+990',
      `?ledger_version=990/../../${d.host}`,
      '?x=1&ledger_version=990',
      '?ledger_version=',
      '?ledger_version',
      `?ledger_version=990@${d.host}`,
    ];
    for (const q of queries) {
      for (const [path, headers, body] of [
        ['/v1/tables/0x1/raw_item', RAW_HEADERS, KEY_BODY],
        ['/v1/view', VIEW_HEADERS, ADD_BODY],
      ] as const) {
        const reply = await rawHttp(
          url,
          httpRequest(`POST ${path}${q} HTTP/1.1`, ['host: x', ...headers, 'connection: close'], body),
        );
        expectNodeShaped(reply, `${path}${q}`);
        expect([200, 400], `${path}${q}: ${reply.body.toString('utf8').slice(0, 200)}`).toContain(reply.status);
      }
    }
    expect(d.hits).toEqual([]);
    expectConfined(node, new URL(url).host);
    // What did reach the node carries the version as digits and nothing else.
    const served = node.counters.requests.filter((r) => r.method === 'POST');
    expect(served.length).toBeGreaterThan(0);
    for (const r of served)
      expect(r.url).toMatch(/^(?:\/v1\/tables\/0x0{63}1\/raw_item|\/v1\/view)(?:\?ledger_version=\d+)?$/);
  });

  it('passthrough path tricks (dot segments, encoded and doubled slashes, `@`, backslashes) are refused and never reach the decoy', async () => {
    const { node, url, d } = await setup();
    const paths = [
      '/v1/..%2f..%2f',
      '/v1/%2e%2e/%2e%2e/',
      '/v1/../',
      '/v1/./accounts/0x1/module/sim',
      `/v1//${d.host}/v1`,
      `/v1/@${d.host}/`,
      `/v1%2f..%2f..%2f${d.host}`,
      '/v1/estimate_gas_price/..%5c..%5c',
      `/v1/estimate_gas_price?next=http://${d.host}/`,
      `/v1/estimate_gas_price#@${d.host}`,
      `/v1/estimate_gas_price%23@${d.host}`,
      `/v1/estimate_gas_price%3f@${d.host}`,
      `/v1;@${d.host}/`,
      '/v1/..;/..;/',
      `/v1\\..\\..\\${d.host}`,
    ];
    for (const path of paths) {
      for (const method of ['GET', 'POST']) {
        let reply: RawReply;
        try {
          reply = await rawHttp(
            url,
            httpRequest(
              `${method} ${path} HTTP/1.1`,
              [`host: ${d.host}`, 'content-type: application/json', 'connection: close'],
              method === 'POST' ? '{}' : undefined,
            ),
          );
        } catch (err) {
          throw new Error(`${method} ${path}: no reply: ${(err as Error).message}`);
        }
        expectNodeShaped(reply, `${method} ${path}`);
      }
    }
    expect(d.hits).toEqual([]);
    expectConfined(node, new URL(url).host);
  });
});
