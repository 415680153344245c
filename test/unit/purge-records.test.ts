// The records of range purges (src/cache/redis/purge-records.ts): which entries they
// name, how they are dropped, folded and read back from the purge hash.
import { describe, expect, it } from 'vitest';
import {
  MAX_RECORDS_PER_FAMILY,
  PurgeRecords,
  type RangeRecord,
  recordField,
  recordOf,
  recordValue,
} from '../../src/cache/redis/purge-records.js';

const record = (purge: number, family: string, from: bigint, to: bigint | null, at = 1000): RangeRecord => ({
  purge,
  family,
  from,
  to,
  at,
});

describe('PurgeRecords', () => {
  it('names an entry of its family and versions written before it, and no other', () => {
    const records = new PurgeRecords();
    records.add(record(3, 'view', 10n, 20n));
    records.add(record(5, 'view', 2n ** 60n, null));
    expect(records.newest).toBe(5);
    expect(records.names(2, 'view', 10n), 'written before purge 3, in range').toBe(true);
    expect(records.names(2, 'view', 20n), 'the upper bound is in range').toBe(true);
    expect(records.names(2, 'view', 21n), 'out of range').toBe(false);
    expect(records.names(3, 'view', 15n), 'written knowing purge 3').toBe(false);
    expect(records.names(2, 'accounts', 15n), 'another family').toBe(false);
    expect(records.names(4, 'view', 2n ** 64n - 1n), 'no upper bound').toBe(true);
    expect(records.names(4, 'view', 2n ** 60n - 1n), 'below the second range').toBe(false);
    expect(records.names(5, 'view', 2n ** 60n), 'written knowing every purge').toBe(false);
  });

  it('keeps one record per purge, in purge order, whatever order they come in', () => {
    const records = new PurgeRecords();
    for (const purge of [7, 2, 7, 5]) records.add(record(purge, 'view', 0n, null));
    expect(records.list().map((r) => r.purge)).toEqual([2, 5, 7]);
    expect(records.newest).toBe(7);
  });

  it('drops the records before a purge of everything, and those older than their bound', () => {
    const records = new PurgeRecords();
    records.replace([
      record(1, 'view', 0n, 1n, 100),
      record(2, 'view', 0n, 1n, 5000),
      record(4, 'blocks', 0n, 1n, 9000),
    ]);
    records.expire(10_000, 0);
    expect(records.list()).toHaveLength(3);
    records.expire(10_000, 6000);
    expect(records.list().map((r) => r.purge)).toEqual([2, 4]);
    records.dropBefore(3);
    expect(records.list().map((r) => r.purge)).toEqual([4]);
    records.dropBefore(5);
    expect([records.list(), records.newest]).toEqual([[], 0]);
  });

  it('folds a family with many records into one span over theirs and the new range', () => {
    const records = new PurgeRecords();
    const many = Array.from({ length: MAX_RECORDS_PER_FAMILY }, (_, i) =>
      record(i + 1, 'view', BigInt(100 + i * 10), BigInt(105 + i * 10)),
    );
    records.replace([...many.slice(1), record(MAX_RECORDS_PER_FAMILY + 1, 'blocks', 0n, null)]);
    expect(records.recorded('view', 50n, 60n), 'one short of the bound').toEqual({ from: 50n, to: 60n, folded: false });
    records.add(many[0]);
    const top = BigInt(105 + (MAX_RECORDS_PER_FAMILY - 1) * 10);
    expect(records.recorded('view', 50n, 60n)).toEqual({ from: 50n, to: top, folded: true });
    expect(records.recorded('view', 50n, null)).toEqual({ from: 50n, to: null, folded: true });
    expect(records.recorded('blocks', 5n, 6n), 'another family').toEqual({ from: 5n, to: 6n, folded: false });
  });
});

describe('a record in the purge hash', () => {
  it('reads back what it was written as, u64 versions and no bound included', () => {
    expect(recordOf(recordField(9), `1700000000000 ${recordValue('view', 2n ** 64n - 1n, null)}`)).toEqual(
      record(9, 'view', 2n ** 64n - 1n, null, 1700000000000),
    );
    expect(recordOf(recordField(3), `5 ${recordValue('raw_item', 0n, 7n)}`)).toEqual(record(3, 'raw_item', 0n, 7n, 5));
  });

  it('is nothing when it is not well formed', () => {
    for (const [field, value] of [
      ['generation', '5 view 1 2'],
      ['range:x', '5 view 1 2'],
      ['range:3', 'view 1 2'],
      ['range:3', '5 view 1'],
      ['range:3', '5 view 1 2 3'],
      ['range:3', '5  1 2'],
      ['range:3', '5 view -1 2'],
      ['range:3', '5 view 1 x'],
      ['range:3', '5 view 1.5 2'],
      ['range:3', ''],
    ]) {
      expect(recordOf(field, value), `${field} = ${value}`).toBeUndefined();
    }
  });
});
