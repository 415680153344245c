// One contract for every AnswerStore (after undici's cache-store-test-utils): what
// goes in comes out byte for byte, per key, until overwritten or deleted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnswerStore } from '../../src/cache/store.js';
import type { StoredAnswer } from '../../src/model/read.js';

export interface StoreUnderTest {
  store: AnswerStore;
  cleanup(): Promise<void>;
}

function answer(overrides: Partial<StoredAnswer> = {}): StoredAnswer {
  return {
    status: 200,
    contentType: 'application/x-bcs',
    body: Buffer.from([0x01, 0x02, 0x03]),
    gasUsed: '7',
    version: 1234n,
    ...overrides,
  };
}

function expectSame(actual: StoredAnswer | undefined, expected: StoredAnswer): void {
  expect(actual).toBeDefined();
  expect(actual!.status).toBe(expected.status);
  expect(actual!.contentType).toBe(expected.contentType);
  expect(actual!.version).toBe(expected.version);
  expect(actual!.gasUsed).toBe(expected.gasUsed);
  expect(Buffer.isBuffer(actual!.body)).toBe(true);
  expect(actual!.body.equals(expected.body)).toBe(true);
}

export function runStoreContract(name: string, make: () => Promise<StoreUnderTest>): void {
  describe(`AnswerStore contract: ${name}`, () => {
    let subject: StoreUnderTest | undefined;
    let store: AnswerStore;
    beforeEach(async () => {
      subject = await make();
      store = subject.store;
    });
    afterEach(async () => {
      await subject?.cleanup();
    });

    it('get of a missing key is undefined', async () => {
      expect(await store.get('missing')).toBeUndefined();
    });

    it('returns what was set: status, content type, gas used, version, body', async () => {
      const a = answer({
        status: 404,
        contentType: 'application/json; charset=utf-8',
        body: Buffer.from('{"error_code":"table_item_not_found"}'),
      });
      await store.set('k', a);
      expectSame(await store.get('k'), a);
    });

    it('keeps an absent gasUsed absent', async () => {
      const a = answer({ gasUsed: undefined });
      delete a.gasUsed;
      await store.set('k', a);
      const got = await store.get('k');
      expectSame(got, a);
      expect(got).not.toHaveProperty('gasUsed');
    });

    it('keeps versions above 2^53 and at u64 max exact', async () => {
      const big = answer({ version: 2n ** 53n + 1n });
      const max = answer({ version: 2n ** 64n - 1n });
      await store.set('big', big);
      await store.set('max', max);
      expectSame(await store.get('big'), big);
      expectSame(await store.get('max'), max);
    });

    it('an overwrite replaces the entry', async () => {
      await store.set('k', answer({ body: Buffer.from('old') }));
      const b = answer({ body: Buffer.from('new'), version: 99n, gasUsed: '42' });
      await store.set('k', b);
      expectSame(await store.get('k'), b);
    });

    it('delete removes the entry, and deleting a missing key is fine', async () => {
      await store.set('k', answer());
      await store.delete('k');
      expect(await store.get('k')).toBeUndefined();
      await store.delete('never-set');
    });

    it('stores an empty body', async () => {
      const a = answer({ body: Buffer.alloc(0) });
      await store.set('k', a);
      expectSame(await store.get('k'), a);
    });

    it('stores a binary body with every byte value', async () => {
      const body = Buffer.alloc(512);
      for (let i = 0; i < body.length; i++) body[i] = i % 256;
      const a = answer({ body });
      await store.set('k', a);
      expectSame(await store.get('k'), a);
    });

    it('stores a 1 MiB body', async () => {
      const body = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < body.length; i++) body[i] = (i * 31 + 7) & 0xff;
      const a = answer({ body });
      await store.set('k', a);
      expectSame(await store.get('k'), a);
    });

    it('stores an entry given a ttl (visible at once)', async () => {
      const a = answer();
      await store.set('k', a, 3600);
      expectSame(await store.get('k'), a);
    });

    it('keys are independent', async () => {
      const a = answer({ body: Buffer.from('a'), version: 1n });
      const b = answer({ body: Buffer.from('b'), version: 2n });
      await store.set('a', a);
      await store.set('b', b);
      expectSame(await store.get('a'), a);
      expectSame(await store.get('b'), b);
      await store.delete('a');
      expect(await store.get('a')).toBeUndefined();
      expectSame(await store.get('b'), b);
      expect(await store.get('ab')).toBeUndefined();
    });
  });
}
