// server.bodyLimitBytes holds on every route that takes a body: the two served
// endpoints and the passthrough's POSTs. A larger body, declared by Content-Length
// or sent chunked, gets 400 web_framework_error (never 413) and no node is called.
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { proxy, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import {
  chunked,
  expectNodeErrorBody,
  httpRequest,
  rawExchange,
  rawHttp,
  rawReplies,
  type RawReply,
} from '../helpers/raw-socket.js';

const LIMIT = 1024;

async function setup(): Promise<{ node: SimNode; url: string }> {
  const node = await sim();
  const { url } = await proxy([node], {
    server: { host: '127.0.0.1', port: 0, bodyLimitBytes: LIMIT },
    routing: QUIET_ROUTING,
  });
  return { node, url };
}

/** Requests that reached the node other than the proxy's start-up probe. */
const reached = (node: SimNode): string[] =>
  node.counters.requests
    .filter((r) => !(r.method === 'GET' && r.url === '/v1'))
    .map((r) => `${r.method} ${r.url} (${r.body.length} bytes)`);

/** A JSON body of exactly n bytes that each route would otherwise accept or forward. */
function bodyOf(route: string, n: number): Buffer {
  const json = (prefix: string, suffix: string): Buffer =>
    Buffer.from(prefix + ' '.repeat(Math.max(0, n - prefix.length - suffix.length)) + suffix);
  if (route.includes('raw_item')) return json('{"key":"0x01"', '}');
  if (route.includes('view')) return json('{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]', '}');
  return json('{"sender":"0x1"', '}');
}

const ROUTES: Array<[label: string, target: string, contentType: string, accept: string]> = [
  ['raw_item', '/v1/tables/0x1/raw_item?ledger_version=990', 'application/json', 'application/x-bcs'],
  ['raw_item latest', '/v1/tables/0x1/raw_item', 'application/json', 'application/x-bcs'],
  ['view', '/v1/view?ledger_version=990', 'application/json', 'application/json'],
  ['view BCS body', '/v1/view', 'application/x.node.view_function+bcs', 'application/json'],
  ['passthrough POST /v1/transactions', '/v1/transactions', 'application/json', 'application/json'],
  [
    'passthrough POST /v1/transactions/simulate',
    '/v1/transactions/simulate',
    'application/x.node.signed_transaction+bcs',
    'application/json',
  ],
  ['passthrough POST /v1/transactions/batch', '/v1/transactions/batch', 'application/json', 'application/json'],
];

function send(url: string, target: string, headers: string[], body: Buffer): Promise<RawReply> {
  return rawHttp(url, httpRequest(`POST ${target} HTTP/1.1`, ['host: x', ...headers, 'connection: close'], body));
}

describe('the body limit holds on every route', () => {
  it('a body at the limit is accepted (the limit is not off by one)', async () => {
    const { node, url } = await setup();
    const reply = await send(
      url,
      '/v1/view?ledger_version=990',
      ['content-type: application/json', 'accept: application/json'],
      bodyOf('view', LIMIT),
    );
    expect(reply.status, reply.body.toString()).toBe(200);
    expect(reached(node)).toHaveLength(1);
  });

  for (const [label, target, contentType, accept] of ROUTES) {
    it(`${label}: a body over the limit (Content-Length) → 400 error body, node not called`, async () => {
      const { node, url } = await setup();
      const reply = await send(
        url,
        target,
        [`content-type: ${contentType}`, `accept: ${accept}`],
        bodyOf(target, LIMIT + 1),
      );
      const body = expectNodeErrorBody(reply, 400, 'web_framework_error', label);
      expect(body.message).toContain(`limit of ${LIMIT} bytes`);
      expect(reached(node)).toEqual([]);
    });

    it(`${label}: a chunked body over the limit → 400 error body, node not called`, async () => {
      const { node, url } = await setup();
      const reply = await send(
        url,
        target,
        [`content-type: ${contentType}`, `accept: ${accept}`, 'transfer-encoding: chunked'],
        chunked(bodyOf(target, 4 * LIMIT), 256),
      );
      expectNodeErrorBody(reply, 400, 'web_framework_error', label);
      expect(reached(node)).toEqual([]);
    });
  }

  it('a huge declared Content-Length is refused at once, without waiting for the body', async () => {
    const { node, url } = await setup();
    for (const [label, target, contentType] of ROUTES) {
      const started = performance.now();
      const reply = await rawHttp(
        url,
        `POST ${target} HTTP/1.1\r\nhost: x\r\ncontent-type: ${contentType}\r\ncontent-length: 1073741824\r\nconnection: close\r\n\r\n{`,
        3000,
      ).catch((err: Error) => err);
      expect(reply, `${label}: no reply to a 1 GiB Content-Length`).not.toBeInstanceOf(Error);
      expectNodeErrorBody(reply as RawReply, 400, 'web_framework_error', label);
      expect(performance.now() - started, label).toBeLessThan(2000);
    }
    expect(reached(node)).toEqual([]);
  });

  it('on a cached route, the 400 ends its connection: a request pipelined after the unread body gets no reply and reaches no node', async () => {
    const { node, url } = await setup();
    const over = httpRequest(
      'POST /v1/view?ledger_version=990 HTTP/1.1',
      ['host: x', 'connection: keep-alive', 'content-type: application/json'],
      bodyOf('view', LIMIT + 1),
    );
    const pipelined = 'GET /v1/accounts/0x77/transactions HTTP/1.1\r\nhost: x\r\n\r\n';
    const outcome = await rawExchange(Number(new URL(url).port), Buffer.concat([over, Buffer.from(pipelined)]), {
      untilClose: true,
      timeoutMs: 3000,
    });
    expect(outcome.timedOut, 'the proxy closed the connection').toBe(false);
    const replies = rawReplies(outcome.received, true);
    expect(replies.map((r) => r.status)).toEqual([400]);
    expect(replies[0]!.headers.connection).toBe('close');
    // A passthrough sent after it reaches the node after anything forwarded before it.
    await rawHttp(url, 'GET /v1/accounts/0x88/transactions HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    expect(reached(node)).toEqual(['GET /v1/accounts/0x88/transactions (0 bytes)']);
  });
});
