// A JSON answer is parsed once on a miss (the miss path adds little, and
// a block with its transactions can be megabytes): the node client parses it to
// check it, and the cache policy reads that parse (a transaction's pending state,
// the version a transaction or block belongs to) instead of parsing it again.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { simTransactionHash } from '../../src/sim/index.js';
import { call, proxy, sim } from '../helpers/proxy.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('JSON answers on the miss path', () => {
  it.each([
    ['a block with its transactions', '/v1/blocks/by_height/200?with_transactions=true'],
    ['a transaction by hash', `/v1/transactions/by_hash/${simTransactionHash(4, 900n)}`],
    ['a transaction by version', '/v1/transactions/by_version/900'],
  ])('%s is parsed once on its miss, and not at all on its hit', async (_name, path) => {
    const node = await sim();
    const p = await proxy([node]);
    const parse = vi.spyOn(JSON, 'parse');
    const parsesOf = (text: string): number => parse.mock.calls.filter(([arg]) => arg === text).length;

    const miss = await call(p.url, path);
    expect(miss.status).toBe(200);
    expect(miss.headers['x-cache']).toBe('MISS');
    const text = miss.body.toString('utf8');
    expect(parsesOf(text)).toBe(1);

    const hit = await call(p.url, path);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.body.equals(miss.body)).toBe(true);
    expect(parsesOf(text)).toBe(1);
  });
});
