// One call to a node (src/upstream/transport/node-call.ts): the whole answer in a
// buffer of its own, decoded as it arrives, within its bounds (the answer cap,
// the bytes in flight, the deadline), and a cancellation that ends the call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { AnswerBytes } from '../../src/upstream/transport/answer-bytes.js';
import { AnswerBytesExhausted, AnswerTooLarge, CallTimeout } from '../../src/upstream/transport/call-errors.js';
import { callNode } from '../../src/upstream/transport/node-call.js';
import { busyFor, pauseBeforeWrite } from '../helpers/pause.js';
import { until, within } from '../helpers/until.js';

let server: Server | undefined;
let pool: Pool | undefined;
let thread: Worker | undefined;
afterEach(async () => {
  await pool?.destroy();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await thread?.terminate();
  server = pool = thread = undefined;
});

/** The origin of the server `node` started. */
const origin = (): string => `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;

/** A node in a thread of its own, answering 'ok': it answers while this thread is paused. Its port. */
function threadNode(): Promise<number> {
  thread = new Worker(
    `const { createServer } = require('node:http');
     const { parentPort } = require('node:worker_threads');
     const server = createServer((_req, res) => res.end('ok'));
     server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
    { eval: true },
  );
  return new Promise((resolve, reject) => {
    thread!.once('message', resolve);
    thread!.once('error', reject);
  });
}

/** A server answering with `handler`, and a pool to it; `closed` counts connections that ended. */
async function node(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ pool: Pool; closed: () => number }> {
  let closed = 0;
  server = createServer(handler);
  server.on('connection', (socket) => socket.on('close', () => closed++));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return { pool, closed: () => closed };
}

describe('callNode', () => {
  it('collects status, headers and a body of one chunk or many into a buffer of its own', async () => {
    const parts = [Buffer.alloc(10, 1), Buffer.alloc(70_000, 2), Buffer.alloc(5, 3)];
    const { pool } = await node((req, res) => {
      res.writeHead(req.url === '/many' ? 200 : 404, {
        'content-type': 'application/x-bcs',
        'x-node-ledger-version': '7',
      });
      if (req.url === '/many') {
        for (const part of parts) res.write(part);
        res.end();
      } else res.end('tiny');
    });
    const one = await callNode(pool, { method: 'GET', path: '/one' }, { timeoutMs: 5000 });
    expect(one.status).toBe(404);
    expect(one.headers['x-node-ledger-version']).toBe('7');
    expect(one.body.toString()).toBe('tiny');
    // Not a view into a socket's or the pool's buffer: a cached body keeps only itself alive.
    expect(one.body.buffer.byteLength).toBe(4);
    const many = await callNode(pool, { method: 'GET', path: '/many' }, { timeoutMs: 5000 });
    expect(many.body.equals(Buffer.concat(parts))).toBe(true);
    expect(many.body.buffer.byteLength).toBe(many.body.length);
  });

  it('sends the body and headers it is given', async () => {
    const { pool } = await node((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`${req.method} ${req.headers['content-type']} ${Buffer.concat(chunks).toString()}`));
    });
    const body = Buffer.from('{"key":"0x1"}');
    const got = await callNode(
      pool,
      {
        method: 'POST',
        path: '/v1/x',
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
        body,
      },
      { timeoutMs: 5000 },
    );
    expect(got.body.toString()).toBe('POST application/json {"key":"0x1"}');
  });

  it('rejects with CallTimeout at the deadline and ends the call', async () => {
    const { pool, closed } = await node(() => undefined);
    const started = performance.now();
    await expect(callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 150 })).rejects.toBeInstanceOf(CallTimeout);
    expect(performance.now() - started).toBeLessThan(2000);
    // The stalled call was aborted, not left open on its connection.
    await until(() => closed() === 1, 2000, 'the timed-out call to close its connection');
  });

  /** A node that answers /slow 100 ms after the request, and never answers /hang. */
  const slowOrHanging = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url === '/slow') setTimeout(() => res.end('ok'), 100);
    else if (req.url !== '/hang') res.end('ok');
  };

  /** A pool to the node, its connection made and idle when `kept`. */
  async function connected(kept: boolean): Promise<Pool> {
    const { pool } = await node(slowOrHanging);
    if (!kept) return pool;
    await callNode(pool, { method: 'GET', path: '/warm' }, { timeoutMs: 5000 });
    // Idle: the next request is written as the call is made, not after the answer before it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return pool;
  }

  describe.each([
    ['a new connection', false],
    ['a kept-alive connection', true],
  ])('the process paused between the call and the write (%s)', (_, kept) => {
    it("has not spent the node's time: it starts at the write", async () => {
      const pool = await connected(kept);
      const pause = pauseBeforeWrite(origin(), /^\/slow$/, 500);
      const answer = await callNode(pool, { method: 'GET', path: '/slow' }, { timeoutMs: 250 });
      expect(pause.paused()).toBe(true);
      expect(answer.body.toString()).toBe('ok');
    });

    it('a node that does not answer still times out, timeoutMs after the write', async () => {
      const pool = await connected(kept);
      pauseBeforeWrite(origin(), /^\/hang$/, 500);
      const started = performance.now();
      await expect(
        within(callNode(pool, { method: 'GET', path: '/hang' }, { timeoutMs: 150 }), 5000, 'the timeout'),
      ).rejects.toBeInstanceOf(CallTimeout);
      // The pause, then the node's whole time (a timer may fire a millisecond early).
      expect(performance.now() - started).toBeGreaterThanOrEqual(500 + 150 - 2);
    });
  });

  it('an answer that came while the process was paused after the write is read, not timed out', async () => {
    // The node in another thread: it answers while this one is paused.
    const port = await threadNode();
    pool = new Pool(`http://127.0.0.1:${port}`);
    // A kept-alive connection: the request is written as the call is made.
    await callNode(pool, { method: 'GET', path: '/warm' }, { timeoutMs: 5000 });
    const answer = callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 100 });
    busyFor(400);
    expect((await answer).body.toString()).toBe('ok');
  });

  it('a call that waits for a connection past the deadline times out (the node holds its only one)', async () => {
    const { pool } = await node((req, res) => {
      if (req.url !== '/hang') res.end('ok');
    });
    const busy = new Pool(origin(), { connections: 1 });
    const held = callNode(busy, { method: 'GET', path: '/hang' }, { timeoutMs: 5000 }).catch(() => undefined);
    await expect(callNode(busy, { method: 'GET', path: '/' }, { timeoutMs: 150 })).rejects.toBeInstanceOf(CallTimeout);
    await busy.destroy();
    await held;
    expect((await callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 5000 })).body.toString()).toBe('ok');
  });

  it('rejects with the reason of an aborted signal, before or during the call', async () => {
    let received = 0;
    const { pool, closed } = await node(() => void received++);
    const before = new AbortController();
    before.abort(new Error('lost the race'));
    await expect(
      callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 5000, signal: before.signal }),
    ).rejects.toThrow('lost the race');
    const during = new AbortController();
    const pending = callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 5000, signal: during.signal });
    await until(() => received === 1, 2000, 'the request at the node');
    during.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await until(() => closed() === 1, 2000, 'the cancelled call to close its connection');
  });

  it('rejects with the transport error when the node is not there', async () => {
    const { pool } = await node(() => undefined);
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    await expect(callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 5000 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });
});

describe('callNode: bounds on what an answer holds', () => {
  const MiB = 1024 * 1024;
  const member = gzipSync(Buffer.alloc(MiB));

  it('decodes a compressed answer as it arrives, and abandons it at maxBytes decoded', async () => {
    const { pool, closed } = await node((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      // 64 MiB decoded, about 64 KiB sent.
      for (let i = 0; i < 64; i++) res.write(member);
      res.end();
    });
    const whole = await callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 5000, maxBytes: 64 * MiB });
    expect(whole.body.length).toBe(64 * MiB);
    const started = performance.now();
    await expect(
      callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 5000, maxBytes: 4 * MiB }),
    ).rejects.toBeInstanceOf(AnswerTooLarge);
    expect(performance.now() - started).toBeLessThan(2000);
    await until(() => closed() >= 1, 2000, 'the abandoned call to close its connection');
  });

  it('abandons decoding at the deadline', async () => {
    const { pool, closed } = await node((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      const timer = setInterval(() => res.write(member), 20);
      res.on('close', () => clearInterval(timer));
    });
    const started = performance.now();
    await expect(
      callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 200, maxBytes: 1024 * MiB }),
    ).rejects.toBeInstanceOf(CallTimeout);
    expect(performance.now() - started).toBeLessThan(1500);
    await until(() => closed() === 1, 2000, 'the timed-out call to close its connection');
  });

  it('a body that does not decode, or an unknown encoding, is undecodable', async () => {
    const { pool } = await node((req, res) => {
      res.writeHead(200, { 'content-encoding': req.url === '/zstd' ? 'zstd' : 'gzip' });
      res.end('not gzip');
    });
    await expect(callNode(pool, { method: 'GET', path: '/gzip' }, { timeoutMs: 5000 })).rejects.toMatchObject({
      name: 'AnswerUndecodable',
      known: true,
    });
    await expect(callNode(pool, { method: 'GET', path: '/zstd' }, { timeoutMs: 5000 })).rejects.toMatchObject({
      name: 'AnswerUndecodable',
      known: false,
    });
  });

  it('takes an answer from the bytes in flight as it arrives, sheds what does not fit, and gives every byte back', async () => {
    const { pool } = await node((req, res) => {
      const size = Number(req.url!.slice(1));
      // Declared: refused before a byte is held. Chunked: refused once it no longer fits.
      if (req.headers['x-declare'] === '1') res.writeHead(200, { 'content-length': String(size) });
      else res.writeHead(200);
      res.end(Buffer.alloc(size, 1));
    });
    const budget = new AnswerBytes(3 * MiB);
    const fits = await callNode(pool, { method: 'GET', path: `/${2 * MiB}` }, { timeoutMs: 5000, inFlight: budget });
    expect(fits.body.length).toBe(2 * MiB);
    expect(budget.held).toBe(0);
    for (const declare of ['0', '1']) {
      const headers = { 'x-declare': declare };
      await expect(
        callNode(pool, { method: 'GET', path: `/${4 * MiB}`, headers }, { timeoutMs: 5000, inFlight: budget }),
        declare,
      ).rejects.toBeInstanceOf(AnswerBytesExhausted);
      expect(budget.held, declare).toBe(0);
    }
    expect(budget.peak).toBeLessThanOrEqual(3 * MiB);
    // Held by another answer: only what is left fits.
    expect(budget.take(2 * MiB)).toBe(true);
    await expect(
      callNode(
        pool,
        { method: 'GET', path: `/${2 * MiB}`, headers: { 'x-declare': '1' } },
        { timeoutMs: 5000, inFlight: budget },
      ),
    ).rejects.toBeInstanceOf(AnswerBytesExhausted);
  });
});

describe('callNode: an empty body', () => {
  it('is empty whatever its Content-Encoding says', async () => {
    const { pool } = await node((_req, res) => {
      res.writeHead(204, { 'content-encoding': 'gzip' });
      res.end();
    });
    const answer = await callNode(pool, { method: 'GET', path: '/' }, { timeoutMs: 5000 });
    expect([answer.status, answer.body.length]).toEqual([204, 0]);
  });
});
