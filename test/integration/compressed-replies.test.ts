// Compressed replies: a memory-tier entry of 1 KiB or more gets a gzip
// copy once, after it is stored; a client that accepts gzip gets it, with
// Content-Encoding and Vary, on both hit paths; one that does not, the identity
// bytes; small answers are never compressed; what is sent decodes to the node's bytes.
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { proxy, sim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const LONG_TYPE = '0x1::' + 'a'.repeat(1500) + '::T';

async function view(
  base: string,
  typeArg: string,
  acceptEncoding?: string,
): Promise<{ headers: Record<string, string>; raw: Buffer }> {
  const res = await request(`${base}/v1/view?ledger_version=990`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(acceptEncoding !== undefined ? { 'accept-encoding': acceptEncoding } : {}),
    },
    body: JSON.stringify({ function: '0x1::sim::type_name', type_arguments: [typeArg], arguments: [] }),
  });
  return { headers: res.headers as Record<string, string>, raw: Buffer.from(await res.body.arrayBuffer()) };
}

describe('compressed replies', () => {
  it('a large cached answer is sent gzipped to a client that accepts it', async () => {
    const node = await sim();
    const { url } = await proxy([node]);
    const first = await view(url, LONG_TYPE, 'gzip, deflate, br');
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['content-encoding']).toBeUndefined();
    const identity = first.raw;
    expect(identity.length).toBeGreaterThan(1024);
    // The copy is made off the event loop, shortly after the store.
    await until(
      async () => (await view(url, LONG_TYPE, 'gzip, deflate, br')).headers['content-encoding'] === 'gzip',
      5000,
      'the gzip copy of the large answer',
    );
    const hit = await view(url, LONG_TYPE, 'gzip, deflate, br');
    expect(hit.headers['x-cache']).toBe('HIT');
    // With the edge's Origin (CORS is on): one Vary line.
    expect(hit.headers.vary).toBe('accept-encoding, Origin');
    expect(hit.raw.length).toBeLessThan(identity.length);
    expect(gunzipSync(hit.raw).equals(identity)).toBe(true);
    for (const refuses of [undefined, 'identity', 'br', 'gzip;q=0']) {
      const plain = await view(url, LONG_TYPE, refuses);
      expect(plain.headers['content-encoding'], String(refuses)).toBeUndefined();
      expect(plain.raw.equals(identity), String(refuses)).toBe(true);
    }
    expect(node.counters.byRoute.view).toBe(1);
  });

  it('a small answer is never compressed', async () => {
    const node = await sim();
    const { url } = await proxy([node]);
    await view(url, 'u8', 'gzip');
    // A large answer stored after it gets its copy: by then a copy of the small one would be there too.
    await view(url, LONG_TYPE, 'gzip');
    await until(
      async () => (await view(url, LONG_TYPE, 'gzip')).headers['content-encoding'] === 'gzip',
      5000,
      'the gzip copy of a large answer stored after the small one',
    );
    const hit = await view(url, 'u8', 'gzip');
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers['content-encoding']).toBeUndefined();
  });
});
