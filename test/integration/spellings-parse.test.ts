// The public entry parses a request's spelling once: a repeated request (same
// path, content type, accept and body bytes) is looked up without being parsed
// and canonicalised again, so a JSON or BCS view hit costs what a raw_item hit
// does. Refused input and misses are never remembered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Connections } from '../../src/http/connections.js';
import { Cors } from '../../src/edge/cors.js';
import { NodeCosts } from '../../src/edge/costs.js';
import { Edge } from '../../src/edge/edge.js';
import { Limits, limitCounters } from '../../src/edge/limits.js';
import { TenantDirectory } from '../../src/edge/tenants.js';
import { publicEntry } from '../../src/http/entry.js';
import { ReadParser } from '../../src/responder/read-parser.js';
import { ReplyWriter } from '../../src/reply/writer.js';
import { RequestIds } from '../../src/edge/request-id.js';
import { ReadResponder } from '../../src/responder/responder.js';
import { ledgerHeaderNames } from '../../src/ledger/headers.js';
import { VIEW_ROUTE } from '../../src/routes/parse-read.js';
import type { RouteDescriptor, RawRead } from '../../src/routes/route.js';
import type { ReadResult } from '../../src/model/read-result.js';
import type { ReadRequest } from '../../src/model/read.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

const HIT: ReadResult = {
  status: 200,
  contentType: 'application/json',
  body: Buffer.from('["3"]'),
  ledger: null,
  cache: 'HIT',
  tier: 'memory',
};

/** A public entry with one cached route, `route`, whose reads `answer` serves; anything else goes to `next`. */
async function serve(
  route: Pick<RouteDescriptor, 'method' | 'url' | 'parse'>,
  answer: () => ReadResult | Promise<ReadResult> = () => HIT,
  spellingBytes = 64 * 1024 * 1024,
): Promise<{ url: string; read: ReturnType<typeof vi.fn>; next: ReturnType<typeof vi.fn>; parser: ReadParser }> {
  const read = vi.fn((_req: ReadRequest) => answer());
  const next = vi.fn((_req, res) => res.writeHead(404).end('not a cached route'));
  const descriptor: RouteDescriptor = { ...VIEW_ROUTE, ...route };
  const prefix = route.url;
  const matcher = {
    mayMatch: (method: string, url: string) => method === route.method && url.startsWith(prefix),
    match: (method: string, url: string) =>
      method === route.method && url.startsWith(prefix) ? { route: descriptor, params: {}, query: {} } : undefined,
  };
  const parser = new ReadParser(matcher, spellingBytes);
  const writer = new ReplyWriter(ledgerHeaderNames('x-node-'), () => null);
  const account = () => undefined;
  const responder = new ReadResponder({ read, nodeCallRefusal: () => null, parser, writer, account });
  const edge = new Edge({
    cors: new Cors({ enabled: false, origins: '*', maxAgeSeconds: 0 }, ledgerHeaderNames('x-node-')),
    tenants: new TenantDirectory(undefined),
    limits: new Limits(limitCounters({ keyPrefix: 'test:' })),
    costs: new NodeCosts(),
    clientAddress: () => '127.0.0.1',
    trustedPeer: () => false,
    headroom: () => 1,
  });
  const entry = publicEntry(
    {
      requestIds: new RequestIds(true),
      parser,
      responder,
      edge,
      account,
      bodyLimitBytes: 1024 * 1024,
      connections: new Connections(),
    },
    next,
  );
  const server = createServer(entry.handle);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, read, next, parser };
}

const VIEW = { method: 'POST', url: '/v1/view' } as const;

const view = (url: string, body: string) =>
  request(`${url}/v1/view?ledger_version=990`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  }).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));

/** A view parser that accepts any JSON body. */
const viewParse = () =>
  vi.fn(
    (raw: RawRead) =>
      ({
        route: VIEW_ROUTE,
        version: 990n,
        format: 'json',
        identity: raw.body.toString(),
        method: 'POST',
        path: '/v1/view',
        body: raw.body,
        contentType: 'application/json',
        accept: 'application/json',
      }) as ReadRequest,
  );

describe('one parse per spelling', () => {
  it('a repeated view is parsed once and looked up every time; another spelling is parsed again', async () => {
    const parse = viewParse();
    const { url, read } = await serve({ ...VIEW, parse });
    const body = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
    for (let i = 0; i < 5; i++) expect(await view(url, body)).toEqual({ status: 200, body: '["3"]' });
    expect(parse).toHaveBeenCalledTimes(1);
    expect(read).toHaveBeenCalledTimes(5);
    await view(url, body.replace(',', ' , '));
    expect(parse).toHaveBeenCalledTimes(2);
  });

  it('a GET of a cached route is looked up without a body read; a GET of any other route goes on to fastify', async () => {
    const parse = vi.fn(
      () =>
        ({
          route: VIEW_ROUTE,
          version: 990n,
          format: 'json',
          identity: 'a',
          method: 'GET',
          path: '/v1/accounts/0x1',
          accept: 'application/json',
        }) as ReadRequest,
    );
    const { url, read, next } = await serve({ method: 'GET', url: '/v1/accounts/', parse });
    for (let i = 0; i < 3; i++)
      expect((await request(`${url}/v1/accounts/0x1?ledger_version=990`)).statusCode).toBe(200);
    expect([parse.mock.calls.length, read.mock.calls.length, next.mock.calls.length]).toEqual([1, 3, 0]);
    expect((await request(`${url}/v1/estimate_gas_price`)).statusCode).toBe(404);
    expect(next).toHaveBeenCalledTimes(1);
  });

  it('a Redis hit is remembered as a memory hit is; a miss is not', async () => {
    const body = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
    const redisParse = viewParse();
    const redis = await serve({ ...VIEW, parse: redisParse }, async () => ({ ...HIT, tier: 'redis' }));
    for (let i = 0; i < 3; i++) expect(await view(redis.url, body)).toEqual({ status: 200, body: '["3"]' });
    expect([redisParse.mock.calls.length, redis.read.mock.calls.length]).toEqual([1, 3]);
    const missParse = viewParse();
    const miss = await serve({ ...VIEW, parse: missParse }, async () => ({ ...HIT, cache: 'MISS', tier: undefined }));
    for (let i = 0; i < 3; i++) expect(await view(miss.url, body)).toEqual({ status: 200, body: '["3"]' });
    expect(missParse).toHaveBeenCalledTimes(3);
  });

  it('a budget too small for one spelling (cache.memory.maxBytes of a few bytes) keeps none: each hit is parsed', async () => {
    const parse = viewParse();
    const { url, read, parser } = await serve({ ...VIEW, parse }, undefined, 1000);
    const body = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
    for (let i = 0; i < 3; i++) expect(await view(url, body)).toEqual({ status: 200, body: '["3"]' });
    expect([parse.mock.calls.length, read.mock.calls.length, parser.size]).toEqual([3, 3, 0]);
  });

  it('input the parser refuses is not remembered: each time it is parsed again and refused, with no read', async () => {
    const parse = vi.fn(() => {
      throw new Error('refused');
    });
    const { url, read } = await serve({ ...VIEW, parse });
    for (let i = 0; i < 3; i++) expect((await view(url, '{"nope":1}')).status).toBe(500);
    expect(parse).toHaveBeenCalledTimes(3);
    expect(read).not.toHaveBeenCalled();
  });
});
