// How a request's body is framed, on every path: Expect: 100-continue is met by
// the proxy itself (a passthrough write reaches the node once, with
// Content-Length), and a transfer coding other than chunked is refused with a
// node-shaped 501 (RFC 9112 §6.1), never passed on as if the body were plain,
// and nothing after it on that connection is read.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { call, HANDLE, proxy, sim, QUIET } from '../helpers/proxy.js';
import {
  chunked,
  expectNodeErrorBody,
  httpRequest,
  openSocket,
  rawExchange,
  rawHttp,
  rawReplies,
  type RawReply,
} from '../helpers/raw-socket.js';
import { until, within } from '../helpers/until.js';

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

describe('an Expect the server cannot meet', () => {
  it('on a CORS preflight: the preflight is answered once, and nothing more is written on its reply', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], { ...QUIET, cors: { origins: ['https://wallet.example'] } });
    const head = [
      'OPTIONS /v1/view HTTP/1.1',
      'Host: proxy.test',
      'Connection: close',
      'Origin: https://wallet.example',
      'Access-Control-Request-Method: POST',
      'Expect: foo',
      '',
      '',
    ].join('\r\n');
    const reply = await rawHttp(p.url, head);
    expect(reply.status).toBe(204);
    expect(reply.headers['access-control-allow-origin']).toBe('https://wallet.example');
    // The listener still serves: a write after the headers were sent would have thrown out of node:http.
    const after = await call(p.url, '/v1');
    expect(after.status).toBe(200);
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
    {
      path: `/v1/tables/${HANDLE}/raw_item?ledger_version=990`,
      headers: ['Content-Type: application/json', 'Accept: application/x-bcs'],
      body: '{"key":"0x0000000000000007"}',
    },
    {
      path: '/v1/view?ledger_version=990',
      headers: ['Content-Type: application/json'],
      body: '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}',
    },
    { path: '/v1/transactions', headers: ['Content-Type: application/json'], body: '{"sender":"0x1"}' },
  ];

  it.each(CODINGS)(
    '%s: 501 from the proxy, on cached and passthrough routes alike, and the node is never called',
    async (_name, coding) => {
      const node = await sim({ startVersion: 1000n });
      const p = await proxy([node], QUIET);
      const calls = node.counters.total;
      for (const target of TARGETS) {
        const reply = await rawHttp(
          p.url,
          httpRequest(
            `POST ${target.path} HTTP/1.1`,
            ['Host: proxy.test', ...target.headers, ...coding],
            chunked(target.body),
          ),
        );
        expectNodeErrorBody(reply, 501, 'web_framework_error', target.path);
        expect(reply.headers.connection, target.path).toBe('close');
      }
      expect(node.counters.total).toBe(calls);
    },
  );

  it('plain chunked bodies are taken as before', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const target = TARGETS[0]!;
    const reply = await rawHttp(
      p.url,
      httpRequest(
        `POST ${target.path} HTTP/1.1`,
        ['Host: proxy.test', 'Connection: close', ...target.headers, 'Transfer-Encoding: chunked'],
        chunked(target.body, 5),
      ),
    );
    expect(reply.status).toBe(200);
  });
});

describe('after a 501 for a transfer coding, the connection is read no further', () => {
  // A GET passthrough route the sim counts: a pipelined one must never reach it.
  const PIPELINED = '/v1/accounts/0x77/transactions';
  const TARGETS = [
    {
      name: 'cached raw_item',
      line: `POST /v1/tables/${HANDLE}/raw_item?ledger_version=990 HTTP/1.1`,
      headers: ['Content-Type: application/json', 'Accept: application/x-bcs'],
      body: '{"key":"0x0000000000000007"}',
    },
    {
      name: 'passthrough POST',
      line: 'POST /v1/transactions HTTP/1.1',
      headers: ['Content-Type: application/json'],
      body: '{"sender":"0x1"}',
    },
    { name: 'passthrough GET', line: 'GET /v1 HTTP/1.1', headers: [], body: '' },
  ];
  const CODINGS: Array<[string, (body: string) => Buffer]> = [
    // The parser cannot frame the body at all: it refuses what follows the head.
    ['xchunked', (body) => Buffer.from(body)],
    // The parser frames the chunks, but the gzip coding under them is not undone.
    ['gzip, chunked', (body) => chunked(body)],
  ];
  const AFTER: Array<[string, string]> = [
    ['nothing', ''],
    ['a pipelined request', `GET ${PIPELINED} HTTP/1.1\r\nHost: proxy.test\r\n\r\n`],
    ['bytes that are no request', 'NOT HTTP AT ALL\r\n\r\n'],
  ];

  /** The 501, alone, with one Connection header. */
  function expectOnly501(replies: RawReply[], what: string): void {
    expect(
      replies.map((r) => r.status),
      what,
    ).toEqual([501]);
    expectNodeErrorBody(replies[0]!, 501, 'web_framework_error', what);
    expect(
      replies[0]!.headerLines.filter(([name]) => name.toLowerCase() === 'connection'),
      what,
    ).toEqual([['connection', 'close']]);
  }

  /** A passthrough the node answers: sent after the exchange, it reaches the node after anything the proxy forwarded before it. */
  async function passthroughBarrier(url: string): Promise<void> {
    expect((await call(url, '/v1/accounts/0x88/transactions')).status).toBeLessThan(500);
  }

  it.each(CODINGS.flatMap(([coding, frame]) => AFTER.map(([after, bytes]) => [coding, after, frame, bytes] as const)))(
    'Transfer-Encoding: %s, then %s: exactly one reply, and the proxy closes the connection',
    async (coding, _after, frame, bytes) => {
      const node = await sim({ startVersion: 1000n });
      const p = await proxy([node], QUIET);
      const port = Number(new URL(p.url).port);
      const calls = node.counters.total;
      for (const target of TARGETS) {
        for (const keepAlive of [[], ['Connection: keep-alive']]) {
          const what = `${target.name}${keepAlive.length > 0 ? ', keep-alive' : ''}`;
          const head = httpRequest(
            target.line,
            ['Host: proxy.test', ...keepAlive, ...target.headers, `Transfer-Encoding: ${coding}`],
            frame(target.body),
          );
          const outcome = await rawExchange(port, Buffer.concat([head, Buffer.from(bytes)]), {
            untilClose: true,
            timeoutMs: 3000,
          });
          expect(outcome.timedOut, `${what}: the proxy closed the connection`).toBe(false);
          expectOnly501(rawReplies(outcome.received, true), what);
        }
      }
      await passthroughBarrier(p.url);
      expect(node.counters.requests.filter((r) => r.url === PIPELINED)).toEqual([]);
      expect(node.counters.total).toBe(calls + 1);
    },
  );

  it('bytes sent after the 501 arrived get no reply and reach no node: the connection is closed', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const calls = node.counters.total;
    const client = await openSocket(p.url);
    client.socket.write(
      'POST /v1/transactions HTTP/1.1\r\nHost: proxy.test\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n',
    );
    await until(() => rawReplies(Buffer.from(client.received(), 'latin1'), false).length > 0, 3000, 'the 501');
    // Whatever the client still writes is not read: the connection is gone.
    client.socket.write(`0\r\n\r\nGET ${PIPELINED} HTTP/1.1\r\nHost: proxy.test\r\n\r\n`);
    await within(client.closed, 3000, 'the proxy to close the connection');
    expectOnly501(rawReplies(Buffer.from(client.received(), 'latin1'), true), 'after the 501');
    await passthroughBarrier(p.url);
    expect(node.counters.requests.filter((r) => r.url === PIPELINED)).toEqual([]);
    expect(node.counters.total).toBe(calls + 1);
  });
});
