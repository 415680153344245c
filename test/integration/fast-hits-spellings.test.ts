// The fast path parses a request's spelling once (issue 14): a repeated request
// (same path, content type, accept and body bytes) is looked up without being
// parsed and canonicalised again, so a JSON or BCS view hit costs what a raw_item
// hit does. Refused input is never remembered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withFastHits } from '../../src/http/fast-hits.js';
import { ReplyWriter } from '../../src/http/reply.js';
import { VIEW_ROUTE } from '../../src/routes/parse-read.js';
import { ledgerHeaderNames } from '../../src/ledger/headers.js';
import type { ReadResult } from '../../src/serve/read-through.js';
import type { ReadRequest } from '../../src/wire/read-request.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

const HIT: ReadResult = { status: 200, contentType: 'application/json', body: Buffer.from('["3"]'), ledger: null, cache: 'HIT', tier: 'memory' };

async function serve(
  parseView: (raw: { body: Buffer }) => ReadRequest,
  answer: () => ReadResult | Promise<ReadResult> = () => HIT,
): Promise<{ url: string; memoryHit: ReturnType<typeof vi.fn>; next: ReturnType<typeof vi.fn> }> {
  const memoryHit = vi.fn((_req: ReadRequest) => answer());
  const next = vi.fn((_req, res) => res.writeHead(400).end('routed'));
  const handler = withFastHits(
    {
      mayMatch: (method, url) => method === 'POST' && url.startsWith('/v1/view?'),
      match: (method, url) => (method === 'POST' && url.startsWith('/v1/view?') ? { route: { ...VIEW_ROUTE, method: 'POST', url: '/v1/view', parse: parseView }, params: {}, query: {} } : undefined),
      read: memoryHit,
      snapshot: () => null,
      writer: new ReplyWriter(ledgerHeaderNames('x-node-')),
      onServed: () => undefined,
    },
    next,
  );
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, memoryHit, next };
}

const view = (url: string, body: string) =>
  request(`${url}/v1/view?ledger_version=990`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));

describe('fast path: one parse per spelling', () => {
  it('a repeated view is parsed once and looked up every time; another spelling is parsed again', async () => {
    const parse = vi.fn(
      (raw: { body: Buffer }) =>
        ({
          route: VIEW_ROUTE,
          version: 990n,
          format: 'json',
          identity: JSON.stringify(JSON.parse(raw.body.toString())),
          method: 'POST',
          path: '/v1/view',
          body: raw.body,
          contentType: 'application/json',
          accept: 'application/json',
        }) as ReadRequest,
    );
    const { url, memoryHit } = await serve(parse);
    const body = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
    for (let i = 0; i < 5; i++) expect(await view(url, body)).toEqual({ status: 200, body: '["3"]' });
    expect(parse).toHaveBeenCalledTimes(1);
    expect(memoryHit).toHaveBeenCalledTimes(5);
    await view(url, body.replace(',', ' , '));
    expect(parse).toHaveBeenCalledTimes(2);
  });

  it('a GET of a cached route is looked up without a body read; a GET of any other route goes straight on', async () => {
    const parse = vi.fn(() => ({ route: VIEW_ROUTE, version: 990n, format: 'json', identity: 'a', method: 'GET', path: '/v1/accounts/0x1', accept: 'application/json' }) as ReadRequest);
    const memoryHit = vi.fn((_req: ReadRequest) => HIT);
    const next = vi.fn((_req, res) => res.writeHead(400).end('routed'));
    const handler = withFastHits(
      {
        mayMatch: (method, url) => method === 'GET' && url.startsWith('/v1/accounts/'),
        match: (method, url) =>
          method === 'GET' && url.startsWith('/v1/accounts/') ? { route: { ...VIEW_ROUTE, method: 'GET', url: '/v1/accounts/:address', parse }, params: {}, query: {} } : undefined,
        read: memoryHit,
        snapshot: () => null,
        writer: new ReplyWriter(ledgerHeaderNames('x-node-')),
        onServed: () => undefined,
      },
      next,
    );
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (let i = 0; i < 3; i++) expect((await request(`${url}/v1/accounts/0x1?ledger_version=990`)).statusCode).toBe(200);
    expect([parse.mock.calls.length, memoryHit.mock.calls.length, next.mock.calls.length]).toEqual([1, 3, 0]);
    expect((await request(`${url}/v1/estimate_gas_price`)).statusCode).toBe(400);
    expect(next).toHaveBeenCalledTimes(1);
  });

  it('a Redis hit is remembered as a memory hit is; a miss is not', async () => {
    const parseOf = () =>
      vi.fn(
        (raw: { body: Buffer }) =>
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
    const body = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
    const redisParse = parseOf();
    const redis = await serve(redisParse, async () => ({ ...HIT, tier: 'redis' }));
    for (let i = 0; i < 3; i++) expect(await view(redis.url, body)).toEqual({ status: 200, body: '["3"]' });
    expect([redisParse.mock.calls.length, redis.memoryHit.mock.calls.length]).toEqual([1, 3]);
    const missParse = parseOf();
    const miss = await serve(missParse, async () => ({ ...HIT, cache: 'MISS', tier: undefined }));
    for (let i = 0; i < 3; i++) expect(await view(miss.url, body)).toEqual({ status: 200, body: '["3"]' });
    expect(missParse).toHaveBeenCalledTimes(3);
  });

  it('input the parser refuses is not remembered: each time it is parsed again and handed to the route', async () => {
    const parse = vi.fn(() => {
      throw new Error('refused');
    });
    const { url, next } = await serve(parse);
    for (let i = 0; i < 3; i++) expect((await view(url, '{"nope":1}')).body).toBe('routed');
    expect(parse).toHaveBeenCalledTimes(3);
    expect(next).toHaveBeenCalledTimes(3);
  });
});
