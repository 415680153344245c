// Memory hits are answered before fastify (src/http/fast-hits.ts). A client must
// not be able to tell: the same bytes and headers as the route's reply, the same
// accounting, and every request the fast path reads but does not answer reaches
// the route with its body intact.
import { describe, expect, it } from 'vitest';
import { rawExchange, rawReplies } from '../helpers/raw-socket.js';
import { simTableItem } from '../../src/sim/index.js';
import { call, HANDLE, proxy, rawItem, sim, type Reply } from '../helpers/proxy.js';

const QUIET = { routing: { probeIntervalMs: 600_000 } };
/** A proxy without the fast path: every request takes fastify's route. */
const ROUTE_ONLY = { fastHits: false };
const KEY_BODY = '{"key":"0x0000000000000007"}';
const OWNER = '0x' + '42'.repeat(32);

/** Headers a client sees, less the date. */
function comparable(reply: Reply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers)) if (name !== 'date') out[name] = value;
  return out;
}

async function requestsTotal(app: { metrics: { registry: { getSingleMetricAsString(name: string): Promise<string> } } }, labels: string): Promise<number> {
  const text = await app.metrics.registry.getSingleMetricAsString('ledger_proxy_requests_total');
  const line = text.split('\n').find((l) => l.startsWith(`ledger_proxy_requests_total{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('memory hits answered before fastify', () => {
  it("are byte-identical to the route's reply, for raw_item and for view (JSON and BCS answers)", async () => {
    const node = await sim({ startVersion: 1000n });
    const fast = await proxy([node], QUIET);
    const routed = await proxy([node], QUIET, ROUTE_ONLY);
    const view = JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [OWNER] });
    const asks: Array<(base: string) => Promise<Reply>> = [
      (base) => rawItem(base, '0x0000000000000007', { version: 990 }),
      (base) => call(base, '/v1/view?ledger_version=990', { headers: { 'content-type': 'application/json' }, body: view }),
      (base) => call(base, '/v1/view?ledger_version=990', { headers: { 'content-type': 'application/json', accept: 'application/x-bcs' }, body: view }),
    ];
    for (const ask of asks) {
      for (const base of [fast.url, routed.url]) expect((await ask(base)).status).toBe(200);
      const [a, b] = [await ask(fast.url), await ask(routed.url)];
      expect(a.headers['x-cache']).toBe('HIT');
      expect(a.status).toBe(b.status);
      expect(comparable(a)).toEqual(comparable(b));
      expect(a.body.equals(b.body)).toBe(true);
    }
  });

  it('are byte-identical for the wallet routes too: GET and POST, a page with its cursor, a transaction', async () => {
    const node = await sim({ startVersion: 1000n });
    const fast = await proxy([node], QUIET);
    const routed = await proxy([node], QUIET, ROUTE_ONLY);
    const u64 = (n: number): Buffer => Buffer.from(new BigUint64Array([BigInt(n)]).buffer);
    const present = Array.from({ length: 64 }, (_, n) => n).find((n) => simTableItem(HANDLE, u64(n), 990n) !== null)!;
    const item = JSON.stringify({ key_type: 'u64', value_type: 'u64', key: String(present) });
    const asks: Array<(base: string) => Promise<Reply>> = [
      (base) => call(base, '/v1/accounts/0x1/resources?ledger_version=990&limit=2'),
      (base) => call(base, '/v1/accounts/0x1/resource/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E?ledger_version=990', { headers: { accept: 'application/x-bcs' } }),
      (base) => call(base, `/v1/tables/${HANDLE}/item?ledger_version=990`, { headers: { 'content-type': 'application/json' }, body: item }),
      (base) => call(base, '/v1/transactions/by_version/900'),
    ];
    for (const ask of asks) {
      for (const base of [fast.url, routed.url]) expect((await ask(base)).status).toBe(200);
      const [a, b] = [await ask(fast.url), await ask(routed.url)];
      expect(a.headers['x-cache']).toBe('HIT');
      expect(comparable(a)).toEqual(comparable(b));
      expect(a.body.equals(b.body)).toBe(true);
    }
    expect((await asks[0](fast.url)).headers['x-node-cursor']).toMatch(/^0x/);
    expect(await requestsTotal(fast.app, 'endpoint="accounts",cache="HIT",status="200"')).toBe(3);
    expect(await requestsTotal(fast.app, 'endpoint="transactions",cache="HIT",status="200"')).toBe(1);
  });

  it("misses, node errors and the proxy's own errors are answered here too, exactly as the route answers them", async () => {
    const node = await sim({ startVersion: 1000n, pruneWindow: 500n });
    const fast = await proxy([node], QUIET);
    const routed = await proxy([node], QUIET, ROUTE_ONLY);
    // Two misses, a node's 404, and the proxy's own 410s (version and block pruned).
    const asks: Array<(base: string) => Promise<Reply>> = [
      (base) => call(base, '/v1/accounts/0x1/resources?ledger_version=990&limit=2'),
      (base) => rawItem(base, '0x0000000000000007'),
      (base) => call(base, '/v1/accounts/0x1/module/sim?ledger_version=1005'),
      (base) => call(base, '/v1/transactions/by_version/10'),
      (base) => call(base, '/v1/blocks/by_height/1'),
    ];
    const statuses = [];
    for (const ask of asks) {
      const [a, b] = [await ask(fast.url), await ask(routed.url)];
      statuses.push(`${a.status} ${a.headers['x-cache']}`);
      expect(comparable(a)).toEqual(comparable(b));
      expect(a.body.equals(b.body)).toBe(true);
    }
    expect(statuses).toEqual(['200 MISS', '200 MISS', '404 MISS', '410 BYPASS', '410 BYPASS']);
  });

  it('are counted in the metrics as the route counts them', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    await rawItem(p.url, '0x0000000000000007', { version: 990 });
    const labels = 'endpoint="raw_item",cache="HIT",status="200"';
    const before = await requestsTotal(p.app, labels);
    for (let i = 0; i < 3; i++) expect((await rawItem(p.url, '0x0000000000000007', { version: 990 })).headers['x-cache']).toBe('HIT');
    expect(await requestsTotal(p.app, labels)).toBe(before + 3);
  });

  it("hand a miss to the route with its body intact: the node gets the client's bytes", async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const spaced = '{ "key" : "0x0000000000000009" }';
    const reply = await call(p.url, `/v1/tables/${HANDLE}/raw_item?ledger_version=991`, {
      headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
      body: spaced,
    });
    expect(reply.headers['x-cache']).toBe('MISS');
    const sent = node.counters.requests.filter((r) => r.url.includes('/raw_item'));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.toString('latin1')).toBe(spaced);
  });

  it('leave refused input to the route: the same 400 error body, and nothing reaches the node', async () => {
    const node = await sim({ startVersion: 1000n });
    const fast = await proxy([node], QUIET);
    const routed = await proxy([node], QUIET, ROUTE_ONLY);
    for (const body of ['{"key":"0xzz"}', '{"key":', '[]']) {
      const [a, b] = await Promise.all(
        [fast.url, routed.url].map((base) => call(base, `/v1/tables/${HANDLE}/raw_item?ledger_version=990`, { headers: { 'content-type': 'application/json', accept: 'application/x-bcs' }, body })),
      );
      expect(a.status, body).toBe(400);
      expect(a.body.toString(), body).toBe(b.body.toString());
    }
    expect(node.counters.byRoute.raw_item).toBe(0);
  });

  it("wait for a body sent in pieces, and answer a body cut short with the route's 400", async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    await rawItem(p.url, '0x0000000000000007', { version: 990 });
    const port = Number(new URL(p.url).port);
    const head = (length: number): string =>
      `POST /v1/tables/${HANDLE}/raw_item?ledger_version=990 HTTP/1.1\r\nHost: proxy.test\r\nContent-Type: application/json\r\n` + `Accept: application/x-bcs\r\nContent-Length: ${length}\r\n\r\n`;

    const pieces = await new Promise<Buffer>((resolve, reject) => {
      import('node:net').then(({ connect }) => {
        const socket = connect(port, '127.0.0.1');
        const got: Buffer[] = [];
        socket.on('data', (d) => got.push(d));
        socket.on('end', () => resolve(Buffer.concat(got)));
        socket.on('error', reject);
        socket.write(head(KEY_BODY.length).replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n') + KEY_BODY.slice(0, 10));
        setTimeout(() => socket.write(KEY_BODY.slice(10)), 50);
      }, reject);
    });
    const [whole] = rawReplies(pieces, true);
    expect(whole?.status).toBe(200);
    expect(whole?.headers['x-cache']).toBe('HIT');

    const cut = await rawExchange(port, head(KEY_BODY.length) + KEY_BODY.slice(0, 10), { halfCloseAtOnce: true, timeoutMs: 2000 });
    expect(cut.reply?.status, `closed without a reply: ${cut.closedWithoutReply}`).toBe(400);
    expect(JSON.parse(cut.reply!.body.toString('utf8'))).toMatchObject({ error_code: 'web_framework_error', vm_error_code: null });
  });
});
