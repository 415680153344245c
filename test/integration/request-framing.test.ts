// How a request's body is framed, on every path: Expect: 100-continue is met by
// the proxy itself (a passthrough write reaches the node once, with
// Content-Length), and a transfer coding other than chunked is refused with a
// node-shaped 501 (RFC 9112 §6.1), never passed on as if the body were plain.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HANDLE, proxy, sim, QUIET } from '../helpers/proxy.js';
import { chunked, expectNodeErrorBody, httpRequest, rawHttp, rawReplies } from '../helpers/raw-socket.js';

/** Sends a request's head with Expect: 100-continue, waits for the interim 100, then sends the body; resolves with everything the server sent. */
function expectContinue(port: number, head: string, body: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    let sentBody = false;
    socket.on('data', (data) => {
      got.push(data);
      if (!sentBody && Buffer.concat(got).toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        sentBody = true;
        socket.write(body);
      }
    });
    socket.on('end', () => resolve(Buffer.concat(got)));
    socket.on('error', reject);
    socket.write(head);
  });
}

describe('Expect: 100-continue', () => {
  it('a passthrough write is answered 100 by the proxy and reaches the node once, whole, without the Expect', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const body = Buffer.from(JSON.stringify({ sender: '0x1', payload: 'x'.repeat(2048) }));
    const head = `POST /v1/transactions HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`;
    const received = await expectContinue(Number(new URL(p.url).port), head, body);
    expect(received.toString('latin1')).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    const reply = rawReplies(received.subarray(received.indexOf('\r\n\r\n') + 4), true)[0]!;
    // The sim has no such route: its own 404, relayed; the proxy never says it could not send.
    expect(reply.status).toBe(404);
    expect(reply.headers['x-cache']).toBe('BYPASS');
    const sent = node.counters.requests.filter((r) => r.method === 'POST' && r.url === '/v1/transactions');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.equals(body)).toBe(true);
    expect(sent[0]!.headers.expect).toBeUndefined();
    expect(sent[0]!.headers['content-length']).toBe(String(body.length));
  });
});

describe('transfer codings other than chunked', () => {
  const CODINGS: Array<[string, string[]]> = [
    ['gzip, chunked', ['Transfer-Encoding: gzip, chunked']],
    ['deflate, chunked', ['Transfer-Encoding: deflate, chunked']],
    ['identity, chunked', ['Transfer-Encoding: identity, chunked']],
    ['compress, chunked', ['Transfer-Encoding: compress, chunked']],
    ['two lines', ['Transfer-Encoding: gzip', 'Transfer-Encoding: chunked']],
  ];
  const TARGETS = [
    { path: `/v1/tables/${HANDLE}/raw_item?ledger_version=990`, headers: ['Content-Type: application/json', 'Accept: application/x-bcs'], body: '{"key":"0x0000000000000007"}' },
    { path: '/v1/view?ledger_version=990', headers: ['Content-Type: application/json'], body: '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}' },
    { path: '/v1/transactions', headers: ['Content-Type: application/json'], body: '{"sender":"0x1"}' },
  ];

  it.each(CODINGS)('%s: 501 from the proxy, on cached and passthrough routes alike, and the node is never called', async (_name, coding) => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const calls = node.counters.total;
    for (const target of TARGETS) {
      const reply = await rawHttp(p.url, httpRequest(`POST ${target.path} HTTP/1.1`, ['Host: proxy.test', ...target.headers, ...coding], chunked(target.body)));
      expectNodeErrorBody(reply, 501, 'web_framework_error', target.path);
      expect(reply.headers.connection, target.path).toBe('close');
    }
    expect(node.counters.total).toBe(calls);
  });

  it('plain chunked bodies are taken as before', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const target = TARGETS[0]!;
    const reply = await rawHttp(
      p.url,
      httpRequest(`POST ${target.path} HTTP/1.1`, ['Host: proxy.test', 'Connection: close', ...target.headers, 'Transfer-Encoding: chunked'], chunked(target.body, 5)),
    );
    expect(reply.status).toBe(200);
  });
});
