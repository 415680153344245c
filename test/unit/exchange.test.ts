// One exchange with a node (src/upstream/exchange.ts): the whole answer in a
// buffer of its own, and a deadline or a cancellation that ends the exchange.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { exchange, ExchangeTimeout } from '../../src/upstream/exchange.js';
import { until } from '../helpers/until.js';

let server: Server | undefined;
let pool: Pool | undefined;
afterEach(async () => {
  await pool?.destroy();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = pool = undefined;
});

/** A server answering with `handler`, and a pool to it; `closed` counts connections that ended. */
async function node(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ pool: Pool; closed: () => number }> {
  let closed = 0;
  server = createServer(handler);
  server.on('connection', (socket) => socket.on('close', () => closed++));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return { pool, closed: () => closed };
}

describe('exchange', () => {
  it('collects status, headers and a body of one chunk or many into a buffer of its own', async () => {
    const parts = [Buffer.alloc(10, 1), Buffer.alloc(70_000, 2), Buffer.alloc(5, 3)];
    const { pool } = await node((req, res) => {
      res.writeHead(req.url === '/many' ? 200 : 404, { 'content-type': 'application/x-bcs', 'x-node-ledger-version': '7' });
      if (req.url === '/many') {
        for (const part of parts) res.write(part);
        res.end();
      } else res.end('tiny');
    });
    const one = await exchange(pool, { method: 'GET', path: '/one' }, 5000);
    expect(one.status).toBe(404);
    expect(one.headers['x-node-ledger-version']).toBe('7');
    expect(one.body.toString()).toBe('tiny');
    // Not a view into a socket's or the pool's buffer: a cached body keeps only itself alive.
    expect(one.body.buffer.byteLength).toBe(4);
    const many = await exchange(pool, { method: 'GET', path: '/many' }, 5000);
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
    const got = await exchange(pool, { method: 'POST', path: '/v1/x', headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, body }, 5000);
    expect(got.body.toString()).toBe('POST application/json {"key":"0x1"}');
  });

  it('rejects with ExchangeTimeout at the deadline and ends the exchange', async () => {
    const { pool, closed } = await node(() => undefined);
    const started = performance.now();
    await expect(exchange(pool, { method: 'GET', path: '/' }, 150)).rejects.toBeInstanceOf(ExchangeTimeout);
    expect(performance.now() - started).toBeLessThan(2000);
    // The stalled exchange was aborted, not left open on its connection.
    await until(() => closed() === 1, 2000, 'the timed-out exchange to close its connection');
  });

  it('rejects with the reason of an aborted signal, before or during the exchange', async () => {
    const { pool, closed } = await node(() => undefined);
    const before = new AbortController();
    before.abort(new Error('lost the race'));
    await expect(exchange(pool, { method: 'GET', path: '/' }, 5000, before.signal)).rejects.toThrow('lost the race');
    const during = new AbortController();
    const pending = exchange(pool, { method: 'GET', path: '/' }, 5000, during.signal);
    setTimeout(() => during.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await until(() => closed() === 1, 2000, 'the cancelled exchange to close its connection');
  });

  it('rejects with the transport error when the node is not there', async () => {
    const { pool } = await node(() => undefined);
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    await expect(exchange(pool, { method: 'GET', path: '/' }, 5000)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
