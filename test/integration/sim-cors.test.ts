// The simulated node answers CORS as a node does (poem's Cors middleware with
// credentials and GET, POST, and nothing else): any origin echoed, credentials,
// Vary: Origin on actual replies; a preflight on any path answered by the CORS
// layer (200, the requested headers echoed, max age 86400, no Vary, an empty
// expose list); a preflight for another method refused 403; what is refused
// outside the layer (body size) and what comes from in front of the node carry
// no CORS headers. A request without Origin gets none of it.
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SIM_CORS_MAX_AGE_SECONDS, startSim, type SimNode } from '../../src/sim/index.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const ORIGIN = 'http://wallet.example:8080';
const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'access-control-expose-headers',
  'vary',
];
const SDK_HEADERS = 'authorization,content-type,x-aptos-client,x-aptos-typescript-sdk-origin-method';
const VIEW = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['1', '2'] });

let node: SimNode;

beforeAll(async () => {
  node = await startSim({ startVersion: 1000n, pruneWindow: 100n });
});

afterAll(async () => {
  await node.close();
});

beforeEach(() => {
  node.counters.reset();
  node.faults.clear();
});

async function call(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer | Readable,
): Promise<Answer> {
  const res = await request(node.url + path, { method: method as 'GET', headers, body });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

function corsHeaders(answer: Answer): Record<string, string | string[] | undefined> {
  return Object.fromEntries(
    CORS_HEADERS.filter((name) => answer.headers[name] !== undefined).map((name) => [name, answer.headers[name]]),
  );
}

const ACTUAL = { 'access-control-allow-origin': ORIGIN, 'access-control-allow-credentials': 'true', vary: 'Origin' };

function preflight(path: string, method: string | undefined, requestHeaders?: string): Promise<Answer> {
  const headers: Record<string, string> = { origin: ORIGIN };
  if (method !== undefined) headers['access-control-request-method'] = method;
  if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
  return call('OPTIONS', path, headers);
}

describe('sim CORS: actual requests', () => {
  it.each([
    ['GET /v1', 'GET', '/v1', undefined, 200],
    ['POST /v1/view', 'POST', '/v1/view', VIEW, 200],
    ['a pruned version (410)', 'GET', '/v1/accounts/0x1/resources?ledger_version=5', undefined, 410],
    ['an unknown path (404)', 'GET', '/v1/nothing/here', undefined, 404],
    ['a bad query (400)', 'GET', '/v1/accounts/0x1?ledger_version=x', undefined, 400],
  ])(
    '%s: with Origin, the origin echoed, credentials and Vary; the rest of the reply unchanged',
    async (_name, method, path, body, status) => {
      const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
      const plain = await call(method, path, headers, body);
      const cors = await call(method, path, { ...headers, origin: ORIGIN }, body);
      expect([plain.status, cors.status]).toEqual([status, status]);
      expect(corsHeaders(plain)).toEqual({});
      // A node exposes no header: a page reads only the CORS-safelisted ones.
      expect(corsHeaders(cors)).toEqual(ACTUAL);
      expect(cors.body).toEqual(plain.body);
      const rest = (a: Answer) =>
        Object.keys(a.headers).filter((name) => !CORS_HEADERS.includes(name) && name !== 'date');
      expect(rest(cors)).toEqual(rest(plain));
      expect(cors.headers['x-node-ledger-version']).toEqual(plain.headers['x-node-ledger-version']);
    },
  );

  it('any origin is echoed as sent, "null" too', async () => {
    for (const origin of ['null', 'https://dapp.example', 'chrome-extension://abcdefghijklmnop']) {
      const answer = await call('GET', '/v1', { origin });
      expect(answer.headers['access-control-allow-origin']).toBe(origin);
    }
  });

  it('a node error made by a fault (status500) carries the CORS headers; what stands in front of the node (html, 429) does not', async () => {
    node.faults.set({ mode: 'status500', count: 1 });
    expect(corsHeaders(await call('GET', '/v1', { origin: ORIGIN }))).toEqual(ACTUAL);
    node.faults.set({ mode: 'html', count: 1 });
    const html = await call('GET', '/v1', { origin: ORIGIN });
    expect([html.status, corsHeaders(html)]).toEqual([502, {}]);
    node.faults.set({ mode: 'status429', count: 1 });
    const limited = await call('GET', '/v1', { origin: ORIGIN });
    expect([limited.status, corsHeaders(limited)]).toEqual([429, {}]);
  });

  it('a chunked body is refused (411) before the CORS layer: no CORS headers', async () => {
    const body = Readable.from([Buffer.from(VIEW.slice(0, 10)), Buffer.from(VIEW.slice(10))]);
    const answer = await call('POST', '/v1/view', { origin: ORIGIN, 'content-type': 'application/json' }, body);
    expect([answer.status, corsHeaders(answer)]).toEqual([411, {}]);
  });
});

describe('sim CORS: preflight', () => {
  it('OPTIONS with Origin and a method a node allows: 200, empty, the requested headers echoed, no ledger headers, no Vary', async () => {
    const answer = await preflight('/v1/view', 'POST', SDK_HEADERS);
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBe(0);
    expect(corsHeaders(answer)).toEqual({
      'access-control-allow-origin': ORIGIN,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': SDK_HEADERS,
      'access-control-max-age': String(SIM_CORS_MAX_AGE_SECONDS),
      'access-control-expose-headers': '',
    });
    expect(answer.headers['content-type']).toBeUndefined();
    expect(answer.headers['x-node-ledger-version']).toBeUndefined();
  });

  it('without Access-Control-Request-Headers the preflight allows "*"', async () => {
    const answer = await preflight('/v1/accounts/0x1', 'GET');
    expect([answer.status, answer.headers['access-control-allow-headers']]).toEqual([200, '*']);
  });

  it('is answered on any path, an unknown one too: the CORS layer wraps every route', async () => {
    for (const path of ['/', '/v1', '/v1/nothing/here', '/v1/transactions/by_version/5']) {
      expect((await preflight(path, 'GET')).status).toBe(200);
    }
  });

  it.each([
    ['PUT', 'PUT'],
    ['HEAD', 'HEAD'],
    ['a lower-case method', 'get'],
    ['no method', undefined],
  ])('a preflight for %s: 403 web_framework_error, no CORS headers', async (_name, method) => {
    const answer = await preflight('/v1/view', method, 'content-type');
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body.toString())).toEqual({
      message: 'request-method not allowed',
      error_code: 'web_framework_error',
      vm_error_code: null,
    });
    expect(corsHeaders(answer)).toEqual({});
  });

  it('reaches the node as a request on no route (counted as other); OPTIONS without Origin is no preflight: 404 as before', async () => {
    await preflight('/v1/view', 'POST');
    expect([node.counters.total, node.counters.byRoute.other]).toEqual([1, 1]);
    const plain = await call('OPTIONS', '/v1/view');
    expect(plain.status).toBe(404);
    expect(JSON.parse(plain.body.toString())).toMatchObject({ error_code: 'web_framework_error' });
    expect(corsHeaders(plain)).toEqual({});
  });
});
