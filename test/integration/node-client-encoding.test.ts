// A node that compresses although it was asked for identity: the node client
// decodes it (off the event loop), and a body that does not decode is a broken
// node (503), never garbage passed on.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
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

async function node(encoding: string, body: Buffer): Promise<NodeClient> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding }).end(body),
  );
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

const JSON_BODY = Buffer.from(JSON.stringify({ value: 'x'.repeat(1000) }));

describe('node client: content encodings', () => {
  it('decodes gzip and br that a node sends unasked', async () => {
    for (const [enc, bytes] of [
      ['gzip', gzipSync(JSON_BODY)],
      ['br', brotliCompressSync(JSON_BODY)],
    ] as const) {
      const answer = await (await node(enc, bytes)).call({ method: 'GET', path: '/v1', timeoutMs: 2000 });
      expect(answer.body.equals(JSON_BODY), enc).toBe(true);
    }
  });

  it('a body that does not decode, or an unknown encoding, is a broken node', async () => {
    for (const [enc, bytes] of [
      ['gzip', Buffer.from('not gzip')],
      ['zstd', JSON_BODY],
    ] as const) {
      const err = await (await node(enc, bytes))
        .call({ method: 'GET', path: '/v1', timeoutMs: 2000 })
        .catch((e: unknown) => e);
      expect(err, enc).toBeInstanceOf(NodeError);
      expect((err as NodeError).status).toBe(503);
    }
  });
});
