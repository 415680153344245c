// What the node client says when a node gives no usable answer: the proxy's own
// words (the message reaches clients in a 503 body), never a library's text, with
// a reason for metrics and logs; a failure it does not name keeps its cause for
// the log.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeError } from '../../src/errors.js';
import { ledgerHeaderNames } from '../../src/ledger/headers.js';
import { NodeClient } from '../../src/upstream/transport/node-client.js';

const servers: Server[] = [];
const clients: NodeClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.destroy();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** Library texts that must never reach a client. */
const LIBRARY_TEXT = /exceeded max size|not supported|UND_ERR|undici|socket|ECONN/i;

async function node(handler: Parameters<typeof createServer>[1]): Promise<NodeClient> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = new NodeClient({
    name: 'n',
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    headerNames: ledgerHeaderNames('x-node-'),
  });
  clients.push(client);
  return client;
}

async function failure(answer: Promise<unknown>): Promise<NodeError> {
  const err = await answer.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NodeError);
  return err as NodeError;
}

describe('node client: failures in the proxy words', () => {
  it('an answer declared larger than the answer cap: refused at its headers, named by the cap', async () => {
    const client = await node((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(65 * 1024 * 1024) });
      res.write('{');
    });
    const err = await failure(client.call({ method: 'GET', path: '/v1', timeoutMs: 5000 }));
    expect(err.status).toBe(503);
    expect(err.reason).toBe('node_broken');
    expect(err.message).toBe('upstream n: answered more than the 64 MiB an answer may have');
  });

  it('a failure the client does not name: a message of its own, the cause kept for the log', async () => {
    const client = await node((_req, res) => res.end('{}'));
    // undici refuses this header itself, with its own text.
    const err = await failure(
      client.call({
        method: 'POST',
        path: '/v1/x',
        headers: { expect: '100-continue' },
        body: Buffer.from('{}'),
        timeoutMs: 5000,
      }),
    );
    expect(err.message).toBe('upstream n: the call failed');
    expect(err.message).not.toMatch(LIBRARY_TEXT);
    expect(err.reason).toBe('node_failed');
    expect((err.cause as { code?: string }).code).toBe('UND_ERR_NOT_SUPPORTED');
  });

  it('timeouts and refused connections, each with its reason', async () => {
    const hangs = await node(() => undefined);
    const timedOut = await failure(hangs.call({ method: 'GET', path: '/v1', timeoutMs: 100 }));
    expect([timedOut.message, timedOut.reason]).toEqual(['upstream n: timed out after 100 ms', 'node_timeout']);
    await new Promise((r) => servers.pop()!.close(r));
    const refused = await failure(hangs.call({ method: 'GET', path: '/v1', timeoutMs: 1000 }));
    expect([refused.message, refused.reason]).toEqual(['upstream n: connection refused', 'node_failed']);
  });
});
