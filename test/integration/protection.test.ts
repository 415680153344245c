// Protection for nodes and proxy: per-client rate limits and overload shedding
// answer with the node error body, and what they refuse never reaches a node.
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ledgerHeaders, proxy, rawItem, sim, viewJson } from '../helpers/proxy.js';

/** A pinned raw_item read from a chosen loopback source address (another "client"). */
function rawItemFrom(base: string, localAddress: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, string> }> {
  const body = '{"key":"0x01"}';
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}/v1/tables/0x1/raw_item?ledger_version=1000`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs', 'content-length': String(body.length), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers as Record<string, string> }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('rate limiting (rateLimit)', () => {
  it('is off by default', async () => {
    const node = await sim();
    const p = await proxy([node]);
    for (let i = 0; i < 30; i++) expect((await rawItem(p.url, '0x01', { version: 1000 })).status).toBe(200);
  });

  it('limits each client IP, answering 503 with the error body', async () => {
    const node = await sim();
    const p = await proxy([node], { rateLimit: { enabled: true, max: 3, timeWindowMs: 60_000 } });
    for (let i = 0; i < 3; i++) expect((await rawItemFrom(p.url, '127.0.0.1')).status).toBe(200);
    const limited = await rawItemFrom(p.url, '127.0.0.1');
    expect(limited.status).toBe(503);
    expect(JSON.parse(limited.body)).toMatchObject({ error_code: 'internal_error', vm_error_code: null });
    expect(JSON.parse(limited.body).message).toContain('rate limit exceeded');
    // The proxy's own refusal is node-shaped: it carries the snapshot it knows (SPEC §8).
    expect(Object.keys(ledgerHeaders({ ...limited, body: Buffer.from(limited.body), json: () => null }))).toHaveLength(7);
    expect(limited.headers['x-node-ledger-version']).toBe(String(node.ledger.info().ledgerVersion));
    // Another client is not limited by the first one's traffic.
    const other = await rawItemFrom(p.url, '127.0.0.2');
    expect(other.body).not.toContain('rate limit');
    expect(other.status).toBe(200);
  });

  it('keys on X-Forwarded-For only when server.trustProxy says so', async () => {
    const node = await sim();
    const trusting = await proxy([node], { server: { host: '127.0.0.1', port: 0, trustProxy: true }, rateLimit: { enabled: true, max: 1, timeWindowMs: 60_000 } });
    expect((await rawItemFrom(trusting.url, '127.0.0.1', { 'x-forwarded-for': '203.0.113.1' })).status).toBe(200);
    expect((await rawItemFrom(trusting.url, '127.0.0.1', { 'x-forwarded-for': '203.0.113.2' })).status).toBe(200);
    expect((await rawItemFrom(trusting.url, '127.0.0.1', { 'x-forwarded-for': '203.0.113.1' })).status).toBe(503);

    const plain = await proxy([node], { rateLimit: { enabled: true, max: 1, timeWindowMs: 60_000 } });
    expect((await rawItemFrom(plain.url, '127.0.0.1', { 'x-forwarded-for': '203.0.113.1' })).status).toBe(200);
    expect((await rawItemFrom(plain.url, '127.0.0.1', { 'x-forwarded-for': '203.0.113.2' })).status).toBe(503);
  });
});

describe('overload shedding (shedding.maxInFlight)', () => {
  it('never holds more than the cap in flight to the nodes, and sheds the rest with 503 at once', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 400, routes: ['view'] });
    const p = await proxy([node], { shedding: { maxInFlight: 2 } });
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '1'])));
    const ok = replies.filter((r) => r.status === 200);
    const shed = replies.filter((r) => r.status === 503);
    expect(ok).toHaveLength(2);
    expect(shed).toHaveLength(8);
    for (const r of shed) {
      expect(r.json()).toMatchObject({ error_code: 'internal_error', vm_error_code: null });
      expect(r.json().message).toContain('overloaded');
      expect(Object.keys(ledgerHeaders(r))).toHaveLength(7);
    }
    expect(node.counters.byRoute.view).toBe(2);
  });
});
