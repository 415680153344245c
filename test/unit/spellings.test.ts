// The fast path's spelling cache: an approximate LRU of two Map generations,
// bounded in entries and bytes.
import { describe, expect, it } from 'vitest';
import { Spellings } from '../../src/responder/spellings.js';
import { RAW_ITEM_ROUTE } from '../../src/routes/parse-read.js';
import type { ReadRequest } from '../../src/model/read.js';

const read = (identity: string): ReadRequest => ({
  route: RAW_ITEM_ROUTE,
  version: 1n,
  format: 'bcs',
  identity,
  method: 'POST',
  path: '/v1/x',
  accept: 'application/x-bcs',
});

describe('Spellings', () => {
  it('holds at most maxEntries, dropping the least recently used generation', () => {
    const cache = new Spellings(10, 1_000_000, () => 1);
    for (let i = 0; i < 100; i++) cache.set(`s${i}`, read(`r${i}`));
    expect(cache.size).toBeLessThanOrEqual(10);
    expect(cache.get('s99')?.identity).toBe('r99');
    expect(cache.get('s0')).toBeUndefined();
  });

  it('a spelling read again survives the turnover that drops the ones never read', () => {
    const cache = new Spellings(10, 1_000_000, () => 1);
    cache.set('hot', read('hot'));
    for (let i = 0; i < 30; i++) {
      cache.set(`cold${i}`, read(`c${i}`));
      expect(cache.get('hot')?.identity, `after ${i}`).toBe('hot');
    }
    expect(cache.get('cold0')).toBeUndefined();
  });

  it('holds about maxBytes: a generation turns over at half of it', () => {
    const cache = new Spellings(1_000_000, 1000, () => 100);
    for (let i = 0; i < 50; i++) cache.set(`s${i}`, read(`r${i}`));
    expect(cache.size).toBeLessThanOrEqual(10);
  });
});
