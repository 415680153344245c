// What an entry keeps is bytes of its own: a view of a larger ArrayBuffer (Node's
// 8 KiB pool, zlib's output chunk, a Redis reply) would keep all of it alive,
// uncounted by the tier.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeAnswer, encodeAnswer } from '../../src/cache/redis/codec.js';
import { MemoryStore } from '../../src/cache/memory.js';
import { ownedCopy, ownsItsBytes } from '../../src/cache/owned.js';
import { PruneClock } from '../../src/ledger/prune-clock.js';
import { withGzip } from '../../src/serve/compress.js';
import { CacheTiers } from '../../src/serve/tiers.js';
import type { StoredAnswer } from '../../src/model/read.js';
import { until } from '../helpers/until.js';

const json = (n: number): Buffer =>
  Buffer.from(
    JSON.stringify({
      items: Array.from({ length: n }, (_, i) => ({ index: i, value: `0x${i.toString(16).padStart(8, '0')}` })),
    }),
  );
const answer = (body: Buffer): StoredAnswer => ({ status: 200, contentType: 'application/json', body, version: 5n });

describe('bytes of their own', () => {
  it('tells a view from a whole buffer, and copies a view to exactly its size', () => {
    const pooled = Buffer.from('a small string'); // a slice of Node's shared pool
    expect(ownsItsBytes(pooled)).toBe(false);
    const copy = ownedCopy(pooled);
    expect(ownsItsBytes(copy)).toBe(true);
    expect(copy.equals(pooled)).toBe(true);
  });

  it('a gzip copy owns its bytes, and unzips to the body', async () => {
    for (const n of [40, 200, 2000]) {
      const body = ownedCopy(json(n));
      const gzipped = await withGzip(answer(body));
      expect(gzipped?.gzip, String(n)).toBeDefined();
      expect(
        ownsItsBytes(gzipped!.gzip!),
        `${n}: ${gzipped!.gzip!.length} bytes in an ArrayBuffer of ${gzipped!.gzip!.buffer.byteLength}`,
      ).toBe(true);
      expect(gunzipSync(gzipped!.gzip!).equals(body)).toBe(true);
    }
  });

  it('a body read from a Redis entry owns its bytes', () => {
    const decoded = decodeAnswer(encodeAnswer(answer(Buffer.from('[{"value":"100"}]'))));
    expect(ownsItsBytes(decoded!.body)).toBe(true);
  });

  it('the memory tier keeps a copy of a body that is a view, and the body itself otherwise', async () => {
    const memory = new MemoryStore({ maxBytes: 1 << 20 });
    const tiers = new CacheTiers({ memory, pruneClock: new PruneClock() });
    const view = json(100).subarray(3);
    tiers.remember('view', answer(view), tiers.purges);
    expect(ownsItsBytes(memory.get('view')!.body)).toBe(true);
    expect(memory.get('view')!.body.equals(view)).toBe(true);
    const whole = ownedCopy(json(100));
    tiers.remember('whole', answer(whole), tiers.purges);
    expect(memory.get('whole')!.body).toBe(whole);
    await until(() => memory.get('whole')?.gzip !== undefined, 2000, 'the gzip copy');
  });
});
