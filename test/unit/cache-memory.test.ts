import { describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD_BYTES, entrySize, GZIP_COPY_OVERHEAD_BYTES, MemoryStore } from '../../src/cache/memory.js';
import type { StoredAnswer } from '../../src/model/read.js';

function answer(bodyBytes: number): StoredAnswer {
  return { status: 200, contentType: 'application/x-bcs', body: Buffer.alloc(bodyBytes, 1), version: 1n };
}

describe('MemoryStore', () => {
  it('refuses a non-positive or non-finite maxBytes', () => {
    for (const maxBytes of [0, -1, NaN, Infinity]) {
      expect(() => new MemoryStore({ maxBytes }), String(maxBytes)).toThrow(RangeError);
    }
  });

  it('answers synchronously', () => {
    const store = new MemoryStore({ maxBytes: 1 << 20 });
    store.set('k', answer(3));
    expect(store.get('k')?.body.length).toBe(3);
    store.delete('k');
    expect(store.get('k')).toBeUndefined();
  });

  it('charges body, content type, key and the fixed overhead', () => {
    const a: StoredAnswer = { ...answer(100), gasUsed: '123' };
    expect(entrySize('key', a)).toBe(ENTRY_OVERHEAD_BYTES + 3 + 'application/x-bcs'.length + 3 + 100);
    const store = new MemoryStore({ maxBytes: 1 << 20 });
    store.set('key', a);
    expect(store.stats()).toEqual({ entries: 1, bytes: entrySize('key', a) });
  });

  it('charges a gzip copy its length and its own overhead', () => {
    const a = answer(2000);
    const gzipped: StoredAnswer = { ...a, gzip: Buffer.alloc(300, 2) };
    expect(entrySize('key', gzipped) - entrySize('key', a)).toBe(GZIP_COPY_OVERHEAD_BYTES + 300);
  });

  it('stays within maxBytes when filled past it, evicting least recently used', () => {
    const maxBytes = 64 * 1024;
    const store = new MemoryStore({ maxBytes });
    for (let i = 0; i < 500; i++) {
      store.set(`k${i}`, answer(1000));
      expect(store.stats().bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(store.stats().entries).toBeGreaterThan(0);
    expect(store.get('k0')).toBeUndefined();
    expect(store.get('k499')).toBeDefined();
  });

  it('does not store an entry larger than maxBytes', () => {
    const store = new MemoryStore({ maxBytes: 4096 });
    store.set('small', answer(10));
    store.set('huge', answer(4096));
    expect(store.get('huge')).toBeUndefined();
    expect(store.get('small')).toBeDefined();
    expect(store.stats().bytes).toBeLessThanOrEqual(4096);
  });

  it('ignores ttlSeconds (pinned answers are immutable)', () => {
    const store = new MemoryStore({ maxBytes: 1 << 20 });
    store.set('k', answer(1), 0.001);
    expect(store.get('k')).toBeDefined();
  });

  it('close empties it', async () => {
    const store = new MemoryStore({ maxBytes: 1 << 20 });
    store.set('k', answer(1));
    await store.close();
    expect(store.stats()).toEqual({ entries: 0, bytes: 0 });
  });

  it('purges the entries a predicate picks, or all of them, and says how many', () => {
    const store = new MemoryStore({ maxBytes: 1 << 20 });
    for (let i = 0; i < 5; i++) store.set(`k${i}`, { ...answer(1), version: BigInt(i) });
    expect(store.purge((_key, a) => a.version >= 3n)).toBe(2);
    expect(['k0', 'k1', 'k2', 'k3', 'k4'].map((k) => store.get(k) !== undefined)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(store.purge((key) => key === 'k1')).toBe(1);
    expect(store.purge()).toBe(2);
    expect(store.stats()).toEqual({ entries: 0, bytes: 0 });
  });
});
