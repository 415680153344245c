// Hop-by-hop headers stay on their hop (RFC 9110 §7.6.1). What a client puts in
// Connection (and the headers it lists), Keep-Alive, Proxy-Authorization, TE,
// Upgrade and Transfer-Encoding never reaches the node, on the served endpoints
// and on the passthrough; what the node puts in them never reaches the client.
//
// The node here is a sim behind a recording hop that (1) records exactly what the
// proxy sent and (2) answers with hop-by-hop headers of its own and a chunked body.
import { createServer, request as httpRequestFn, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { proxy, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { chunked, httpRequest, rawHttp, type RawReply } from '../helpers/raw-socket.js';

const KEY_BODY = '{"key":"0x01"}';
const ADD_BODY = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';
const NODE_KEEP_ALIVE = 'timeout=7, max=777';

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

const hops: Server[] = [];
afterEach(async () => {
  while (hops.length > 0) {
    const s = hops.pop()!;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/**
 * A front for `node` that records every request and answers with the node's
 * status, content headers and body, plus hop-by-hop headers of its own, chunked.
 */
async function hoppyNode(node: SimNode): Promise<{ url: string; recorded: Recorded[] }> {
  const target = new URL(node.url);
  const recorded: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      recorded.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      });
      const forwarded: Record<string, string> = {
        'accept-encoding': 'identity',
        'content-length': String(body.length),
      };
      for (const name of ['content-type', 'accept'])
        if (typeof req.headers[name] === 'string') forwarded[name] = req.headers[name] as string;
      const up = httpRequestFn(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: forwarded },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            const headers: Record<string, string> = {};
            for (const [k, v] of Object.entries(answer.headers)) {
              if (
                ['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'date'].includes(k) ||
                v === undefined
              )
                continue;
              headers[k] = Array.isArray(v) ? v.join(', ') : v;
            }
            // The node's own hop-by-hop headers, and one it lists in Connection.
            res.setHeader('Connection', 'keep-alive, X-Node-Hop');
            res.setHeader('Keep-Alive', NODE_KEEP_ALIVE);
            res.setHeader('X-Node-Hop', 'node-secret');
            res.setHeader('Proxy-Authenticate', 'Basic realm="node"');
            res.setHeader('Trailer', 'X-Node-Trailer');
            res.setHeader('Upgrade', 'h2c');
            res.setHeader('Proxy-Connection', 'keep-alive');
            res.writeHead(answer.statusCode ?? 500, headers);
            // No Content-Length: Node sends it chunked, with a trailer.
            res.write(Buffer.concat(parts));
            res.addTrailers({ 'X-Node-Trailer': 'trailer-secret' });
            res.end();
          });
        },
      );
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  hops.push(server);
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, recorded };
}

async function setup(): Promise<{ url: string; recorded: Recorded[] }> {
  const node = await sim();
  const hop = await hoppyNode(node);
  const { url } = await proxy([{ url: hop.url, name: 'hoppy' }], { routing: QUIET_ROUTING });
  return { url, recorded: hop.recorded };
}

/** The client's hop-by-hop headers, including one it lists in Connection. */
const CLIENT_HOP = [
  'connection: close, X-Client-Hop, x-client-hop-2',
  'x-client-hop: client-secret',
  'x-client-hop-2: client-secret-2',
  'keep-alive: timeout=99, max=999',
  'proxy-authorization: Basic Y2xpZW50OnNlY3JldA==',
  'proxy-connection: keep-alive',
  'te: trailers, deflate',
  'upgrade: websocket',
];

const CLIENT_HOP_NAMES = [
  'x-client-hop',
  'x-client-hop-2',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'upgrade',
  'transfer-encoding',
];

/** What the proxy sent to the node carries none of the client's hop-by-hop headers. */
function expectNoClientHop(r: Recorded, label: string): void {
  for (const name of CLIENT_HOP_NAMES) expect(r.headers[name], `${label}: ${name} reached the node`).toBeUndefined();
  const connection = String(r.headers.connection ?? '');
  expect(connection, `${label}: Connection at the node`).not.toMatch(/x-client-hop|close/i);
  expect(JSON.stringify(r.rawHeaders), `${label}: raw headers at the node`).not.toMatch(
    /client-secret|Y2xpZW50OnNlY3JldA==|timeout=99|"websocket"/i,
  );
  if (r.method === 'POST') {
    // api.md §7: bodies reach nodes with Content-Length, never chunked.
    expect(r.headers['content-length'], `${label}: Content-Length at the node`).toBe(String(r.body.length));
  }
}

/** The reply carries none of the node's hop-by-hop headers. */
function expectNoNodeHop(reply: RawReply, label: string): void {
  const lines = reply.headerLines.map(([n, v]) => `${n}: ${v}`);
  expect(lines.join('\n'), `${label}: reply headers`).not.toMatch(
    /x-node-hop|node-secret|proxy-authenticate|^trailer:|^upgrade:|proxy-connection|trailer-secret|x-node-trailer/im,
  );
  expect(reply.headers['keep-alive'] ?? '', `${label}: the node's Keep-Alive reached the client`).not.toBe(
    NODE_KEEP_ALIVE,
  );
  expect(reply.headers.connection ?? '', `${label}: Connection`).not.toMatch(/x-node-hop/i);
  // At most one framing header of the proxy's own.
  expect(
    reply.headerLines.filter(([n]) => /^(content-length|transfer-encoding)$/i.test(n)).length,
    `${label}: framing headers`,
  ).toBe(1);
}

const SERVED: Array<[string, string, string[], string]> = [
  [
    'raw_item latest',
    '/v1/tables/0x1/raw_item',
    ['content-type: application/json', 'accept: application/x-bcs'],
    KEY_BODY,
  ],
  [
    'raw_item pinned',
    '/v1/tables/0x1/raw_item?ledger_version=990',
    ['content-type: application/json', 'accept: application/x-bcs'],
    KEY_BODY,
  ],
  ['view latest', '/v1/view', ['content-type: application/json', 'accept: application/json'], ADD_BODY],
  [
    'view pinned',
    '/v1/view?ledger_version=991',
    ['content-type: application/json', 'accept: application/json'],
    ADD_BODY,
  ],
];

describe('hop-by-hop headers stay on their hop', () => {
  it("served endpoints: the client's hop headers never reach the node; the node's never reach the client", async () => {
    const { url, recorded } = await setup();
    for (const [label, target, headers, body] of SERVED) {
      const before = recorded.length;
      const reply = await rawHttp(
        url,
        httpRequest(`POST ${target} HTTP/1.1`, ['host: x', ...headers, ...CLIENT_HOP], body),
      );
      expect(reply.status, `${label}: ${reply.body.toString('latin1').slice(0, 200)}`).toBe(200);
      expectNoNodeHop(reply, label);
      expect(reply.headers['content-length'], label).toBeDefined();
      const calls = recorded.slice(before).filter((r) => r.method === 'POST');
      expect(calls, label).toHaveLength(1);
      expectNoClientHop(calls[0], label);
    }
  });

  it('served endpoints with a chunked client body: the node gets Content-Length, no Transfer-Encoding', async () => {
    const { url, recorded } = await setup();
    for (const [label, target, headers, body] of SERVED) {
      const before = recorded.length;
      const reply = await rawHttp(
        url,
        httpRequest(
          `POST ${target.replace('990', '980').replace('991', '981')} HTTP/1.1`,
          ['host: x', ...headers, ...CLIENT_HOP, 'transfer-encoding: chunked'],
          chunked(body, 5),
        ),
      );
      expect(reply.status, `${label}: ${reply.body.toString('latin1').slice(0, 200)}`).toBe(200);
      expectNoNodeHop(reply, label);
      const calls = recorded.slice(before).filter((r) => r.method === 'POST');
      expect(calls, label).toHaveLength(1);
      expectNoClientHop(calls[0], `${label} (chunked)`);
      expect(calls[0].body.toString(), label).toBe(body);
    }
  });

  it("passthrough GET: the client's hop headers never reach the node; the node's never reach the client", async () => {
    const { url, recorded } = await setup();
    for (const path of ['/v1', '/v1/estimate_gas_price', '/v1/no/such/route']) {
      const before = recorded.length;
      const reply = await rawHttp(url, httpRequest(`GET ${path} HTTP/1.1`, ['host: x', ...CLIENT_HOP]));
      expect([200, 404], `${path}: ${reply.body.toString('latin1').slice(0, 200)}`).toContain(reply.status);
      expectNoNodeHop(reply, `GET ${path}`);
      const calls = recorded.slice(before).filter((r) => r.url === path);
      expect(calls, path).toHaveLength(1);
      expectNoClientHop(calls[0], `GET ${path}`);
    }
  });

  it("passthrough POST with Content-Length: the client's hop headers never reach the node; the node's never reach the client", async () => {
    const { url, recorded } = await setup();
    const body = '{"sender":"0x1"}';
    const before = recorded.length;
    const reply = await rawHttp(
      url,
      httpRequest('POST /v1/transactions HTTP/1.1', ['host: x', 'content-type: application/json', ...CLIENT_HOP], body),
    );
    expect(reply.status).toBe(404);
    expectNoNodeHop(reply, 'POST /v1/transactions');
    const calls = recorded.slice(before).filter((r) => r.method === 'POST');
    expect(calls).toHaveLength(1);
    expectNoClientHop(calls[0], 'POST /v1/transactions');
    expect(calls[0].body.toString()).toBe(body);
  });

  it('passthrough POST with a chunked client body: no Transfer-Encoding reaches the node (it gets Content-Length)', async () => {
    const { url, recorded } = await setup();
    const body = '{"sender":"0x1","payload":"' + 'ab'.repeat(100) + '"}';
    const before = recorded.length;
    const reply = await rawHttp(
      url,
      httpRequest(
        'POST /v1/transactions HTTP/1.1',
        ['host: x', 'content-type: application/json', ...CLIENT_HOP, 'transfer-encoding: chunked'],
        chunked(body, 64),
      ),
    );
    const calls = recorded.slice(before).filter((r) => r.method === 'POST');
    expect(calls).toHaveLength(1);
    expect(calls[0].body.toString()).toBe(body);
    expectNoClientHop(calls[0], 'POST /v1/transactions (chunked)');
    expect(reply.status).toBe(404);
    expectNoNodeHop(reply, 'POST /v1/transactions (chunked)');
  });

  it('an Upgrade request (Connection: upgrade) is answered with a node error body or served, never tunnelled', async () => {
    const { url, recorded } = await setup();
    const before = recorded.length;
    const reply = await rawHttp(
      url,
      httpRequest('GET /v1 HTTP/1.1', [
        'host: x',
        'connection: upgrade',
        'upgrade: websocket',
        'sec-websocket-version: 13',
        'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==',
      ]),
    ).catch((err: Error) => err);
    expect(reply, 'an upgrade request got no reply at all').not.toBeInstanceOf(Error);
    const r = reply as RawReply;
    expect(r.status).not.toBe(101);
    for (const call of recorded.slice(before)) expectNoClientHop(call, 'upgrade request');
  });
});
