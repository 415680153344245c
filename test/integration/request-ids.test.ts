// X-Request-Id (api.md §10.5): a client's plain id is kept, anything else is
// replaced by one the proxy makes; the id is on every reply, on the node calls
// made for the request, and on its log lines.
import { describe, expect, it } from 'vitest';
import { call, capturedLog, proxy, rawItem, sim, QUIET } from '../helpers/proxy.js';

describe('request ids', () => {
  it('every reply carries one: made by the proxy, unique, on hits, misses, errors, passthrough and unknown routes', async () => {
    const node = await sim();
    const p = await proxy([node], QUIET);
    const replies = [
      await rawItem(p.url, '0x01', { version: 1000 }),
      await rawItem(p.url, '0x01', { version: 1000 }),
      await rawItem(p.url, '0xzz', { version: 1000 }),
      await call(p.url, '/v1/estimate_gas_price'),
      await call(p.url, '/nope'),
    ];
    const ids = replies.map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+-[0-9a-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("a client's plain id is kept, sent to the node on passthrough, and on the request's log line; any other is replaced", async () => {
    const node = await sim();
    const log = capturedLog();
    const p = await proxy([node], QUIET, { logger: log.logger });
    const kept = await call(p.url, '/v1/estimate_gas_price', { headers: { 'x-request-id': 'wallet-7:abc.123' } });
    expect(kept.headers['x-request-id']).toBe('wallet-7:abc.123');
    const sent = node.counters.requests.filter((r) => r.url === '/v1/estimate_gas_price');
    expect(sent.map((r) => r.headers['x-request-id'])).toEqual(['wallet-7:abc.123']);
    expect(log.lines.filter((l) => l.msg === 'request').map((l) => l.reqId)).toEqual(['wallet-7:abc.123']);
    for (const unkept of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const reply = await call(p.url, '/v1/estimate_gas_price', { headers: { 'x-request-id': unkept } });
      expect(reply.headers['x-request-id']).not.toBe(unkept);
      expect(node.counters.requests.at(-1)!.headers['x-request-id']).toBe(reply.headers['x-request-id']);
    }
  });

  it('a cached read that reaches a node sends the node its id; a hit reaches no node', async () => {
    const node = await sim();
    const p = await proxy([node], QUIET);
    const miss = await rawItem(p.url, '0x02', { version: 1000 });
    const latest = await rawItem(p.url, '0x02');
    const sent = node.counters.requests.filter((r) => r.url.includes('/raw_item'));
    expect(sent.map((r) => r.headers['x-request-id'])).toEqual([
      miss.headers['x-request-id'],
      latest.headers['x-request-id'],
    ]);
  });

  it('server.trustRequestId false: the proxy always makes its own', async () => {
    const node = await sim();
    const p = await proxy([node], { ...QUIET, server: { host: '127.0.0.1', port: 0, trustRequestId: false } });
    const reply = await call(p.url, '/v1', { headers: { 'x-request-id': 'client-id' } });
    expect(reply.headers['x-request-id']).not.toBe('client-id');
  });
});
