import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cacheKeyText, routeNameOfKey, sharedKey } from '../../src/cache/key.js';
import { RAW_ITEM_ROUTE, VIEW_ROUTE } from '../../src/routes/parse-read.js';
import type { ReadRequest } from '../../src/model/read.js';

function req(overrides: Partial<ReadRequest> = {}): ReadRequest {
  return {
    route: VIEW_ROUTE,
    version: 5n,
    method: 'POST',
    format: 'json',
    identity: 'json\n0x1::coin::balance\n\n"arguments":[]',
    path: '/v1/view',
    body: Buffer.from('{}'),
    contentType: 'application/json',
    accept: 'application/json',
    ...overrides,
  };
}

/** The shared-store key of a pinned answer, as the read path makes it. */
function cacheKey(vendor: string, chainId: number, request: ReadRequest, version: bigint | null): string {
  return sharedKey(cacheKeyText(vendor, chainId, request, version, 0));
}

describe('the key scheme', () => {
  // The key text outlives a release in every shared store: a change to it shows here, and comes with
  // a new KEY_SCHEME (so old entries are never misread) and its paragraph in UPGRADING.md.
  it('spells each field out, in order: scheme, generation, vendor, chain id, route, format, N, identity', () => {
    expect(cacheKeyText('node', 4, req(), 5n, 3)).toBe(
      'lp5:3:4:node4:4:view4:json5:json\n0x1::coin::balance\n\n"arguments":[]',
    );
    expect(cacheKeyText('', 40, req({ route: RAW_ITEM_ROUTE, format: 'bcs', identity: 'k' }), null, 0)).toBe(
      'lp5:0:0:40:8:raw_item3:bcs-:k',
    );
  });

  it('hashes the text as UTF-8 with SHA-256, in lower-case hex', () => {
    const text = cacheKeyText('node', 4, req({ identity: 'é' }), 5n, 0);
    expect(sharedKey(text)).toBe(createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex'));
  });
});

describe('the shared-store key', () => {
  it('is a sha256 hex digest and deterministic', () => {
    const key = cacheKey('node', 4, req(), 5n);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey('node', 4, req(), 5n)).toBe(key);
  });

  it('differs in every field', () => {
    const base = cacheKey('node', 4, req(), 5n);
    const variants = [
      cacheKey('aptos', 4, req(), 5n),
      cacheKey('node', 5, req(), 5n),
      cacheKey('node', 4, req({ route: RAW_ITEM_ROUTE }), 5n),
      cacheKey('node', 4, req({ format: 'bcs' }), 5n),
      cacheKey('node', 4, req(), 6n),
      cacheKey('node', 4, req({ identity: 'json\n0x1::coin::supply\n\n"arguments":[]' }), 5n),
    ];
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
  });

  it('uses the version argument, not req.version (latest reads are stored at their read version)', () => {
    expect(cacheKey('node', 4, req({ version: null }), 5n)).toBe(cacheKey('node', 4, req({ version: 5n }), 5n));
    expect(cacheKey('node', 4, req({ version: 5n }), 6n)).not.toBe(cacheKey('node', 4, req({ version: 5n }), 5n));
  });

  it('ignores fields that are not part of the identity', () => {
    const a = cacheKey('node', 4, req(), 5n);
    const b = cacheKey(
      'node',
      4,
      req({ body: Buffer.from('{ }'), accept: 'application/json, */*', path: '/v1/view?x' }),
      5n,
    );
    expect(b).toBe(a);
  });

  it('does not let text shift between fields', () => {
    // Each pair would collide under naive concatenation with or without a separator.
    const pairs: Array<[string, Partial<ReadRequest>, bigint, string, Partial<ReadRequest>, bigint]> = [
      ['ab', {}, 1n, 'a', {}, 1n],
      ['node', { identity: '1' }, 1n, 'node', { identity: '' }, 11n],
      ['node', { identity: ':x' }, 1n, 'node', { identity: 'x' }, 1n],
      ['node1:', { identity: 'x' }, 1n, 'node', { identity: 'x' }, 1n],
      ['node', { identity: '12:x' }, 3n, 'node', { identity: '2:x' }, 31n],
    ];
    for (const [v1, r1, n1, v2, r2, n2] of pairs) {
      expect(cacheKey(v1, 4, req(r1), n1)).not.toBe(cacheKey(v2, 4, req(r2), n2));
    }
  });

  it('does not let text shift between the vendor and the chain id', () => {
    expect(cacheKey('node1', 4, req(), 5n)).not.toBe(cacheKey('node', 14, req(), 5n));
  });

  it('gives every split of one text into vendor and identity its own key', () => {
    const text = 'nodebcs1:json';
    const keys = new Set<string>();
    for (let i = 0; i <= text.length; i++) {
      keys.add(cacheKey(text.slice(0, i), 4, req({ identity: text.slice(i) }), 1n));
    }
    expect(keys.size).toBe(text.length + 1);
  });
});

describe('the cache generation in the key', () => {
  it('gives every generation its own key, for the memory tier and for Redis', () => {
    const texts = [0, 1, 2, 10].map((generation) => cacheKeyText('node', 4, req(), 5n, generation));
    expect(new Set(texts).size).toBe(4);
    expect(new Set(texts.map(sharedKey)).size).toBe(4);
  });

  it('does not let text shift between the generation and the vendor', () => {
    expect(cacheKeyText('1node', 4, req(), 5n, 1)).not.toBe(cacheKeyText('node', 4, req(), 5n, 11));
  });
});

describe('routeNameOfKey', () => {
  it('reads the route name back from any key text, whatever the vendor, chain and identity hold', () => {
    for (const vendor of ['node', 'a:1:b', '', '12']) {
      for (const route of [VIEW_ROUTE, RAW_ITEM_ROUTE]) {
        for (const generation of [0, 7, 123456]) {
          const text = cacheKeyText(
            vendor,
            40,
            req({ route, identity: '4:view:1:x' }),
            generation === 7 ? null : 5n,
            generation,
          );
          expect(routeNameOfKey(text), `${vendor} ${route.name} ${generation}`).toBe(route.name);
        }
      }
    }
  });

  it('is undefined for text that is no key', () => {
    expect(routeNameOfKey('lp1:4:node')).toBeUndefined();
    expect(routeNameOfKey('')).toBeUndefined();
  });

  it('is undefined for a key of another scheme', () => {
    const text = cacheKeyText('node', 4, req(), 5n, 0);
    for (const scheme of ['lp4', 'lp', 'lp5x', 'Lp5'])
      expect(routeNameOfKey(text.replace(/^lp5/, scheme)), scheme).toBeUndefined();
  });

  it('is undefined for a key cut short before its route name, wherever the cut falls', () => {
    for (const vendor of ['node', '', 'a:1:b']) {
      const text = cacheKeyText(vendor, 40, req(), 5n, 12);
      const nameAt = text.indexOf('view');
      for (let cut = 0; cut < nameAt; cut++)
        expect(routeNameOfKey(text.slice(0, cut)), JSON.stringify(text.slice(0, cut))).toBeUndefined();
      expect(routeNameOfKey(text)).toBe('view');
    }
  });
});
