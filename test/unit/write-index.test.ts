// The write index: an answer is judged the latest only over versions the feed
// covers without a gap, and only when none of them wrote what the answer reads.
import { describe, expect, it } from 'vitest';
import { idsReadBy, idsWrittenBy, type VersionWrites, type WrittenKey } from '../../src/freshness/dependencies.js';
import { WriteIndex } from '../../src/freshness/write-index.js';
import type { StateRead } from '../../src/model/state-read.js';

const A = `0x${'0a'.repeat(32)}`;
const B = `0x${'0b'.repeat(32)}`;
const key = (n: number): Buffer => Buffer.of(1, n, 2, 3);
const tableItem = (n: number): WrittenKey => ({ key: key(n), kind: 'table_item' });
const at = (address: string, kind: WrittenKey['kind'], n = 9): WrittenKey => ({ key: key(n), kind, address });
const reads = (keys: number[], accounts: StateRead['accounts'] = []): string[] =>
  idsReadBy({ keys: keys.map(key), accounts });

/** Versions from..to, each writing what `writes(v)` says. */
function versions(from: number, to: number, writes: (v: number) => WrittenKey[] = () => []): VersionWrites[] {
  const out: VersionWrites[] = [];
  for (let v = from; v <= to; v++) out.push({ version: BigInt(v), writes: writes(v) });
  return out;
}

const settings = { windowVersions: 100, maxWindowWrites: 10_000, maxWatched: 1000 };

describe('write index', () => {
  it('claims nothing before it is started or beyond what it covers', () => {
    const index = new WriteIndex(settings);
    expect(index.unchanged(reads([1]), 5n, 5n)).toBe(false);
    index.restart(10n);
    // Covers nothing yet: 9 is known at 9 only.
    expect(index.unchanged(reads([1]), 9n, 9n)).toBe(true);
    expect(index.unchanged(reads([1]), 9n, 10n)).toBe(false);
    index.apply(versions(10, 20));
    expect(index.unchanged(reads([1]), 9n, 20n)).toBe(true);
    expect(index.unchanged(reads([1]), 9n, 21n)).toBe(false);
    // Read before the start: the writes before it are unknown.
    expect(index.unchanged(reads([1]), 8n, 20n)).toBe(false);
    // Read after the version asked about: never.
    expect(index.unchanged(reads([1]), 15n, 14n)).toBe(false);
  });

  it('says written from the write on, and unchanged for a read at or after it', () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    index.apply(versions(1, 50, (v) => (v === 30 ? [tableItem(1)] : [tableItem(2)])));
    expect(index.unchanged(reads([1]), 29n, 50n)).toBe(false);
    expect(index.unchanged(reads([1]), 30n, 50n)).toBe(true);
    expect(index.unchanged(reads([1]), 30n, 29n)).toBe(false);
    expect(index.unchanged(reads([3]), 1n, 50n)).toBe(true);
    // Any one of several keys written is enough.
    expect(index.unchanged(reads([3, 1]), 10n, 50n)).toBe(false);
  });

  it('keeps watching an id past the window, and forgets an unwatched one', () => {
    const index = new WriteIndex({ ...settings, windowVersions: 10 });
    index.restart(1n);
    index.apply(versions(1, 5));
    // Judged once: watched from then on.
    expect(index.unchanged(reads([1]), 5n, 5n)).toBe(true);
    index.apply(versions(6, 200));
    expect(index.unchanged(reads([1]), 5n, 200n)).toBe(true);
    // Key 2 was never judged: an answer from before the window cannot be told.
    expect(index.unchanged(reads([2]), 5n, 200n)).toBe(false);
    index.apply(versions(201, 300, (v) => (v === 250 ? [tableItem(1)] : [])));
    expect(index.unchanged(reads([1]), 5n, 300n)).toBe(false);
    expect(index.unchanged(reads([1]), 250n, 300n)).toBe(true);
  });

  it('judges an answer read at a version the feed had passed from the window', () => {
    const index = new WriteIndex({ ...settings, windowVersions: 10 });
    index.restart(1n);
    index.apply(versions(1, 100, (v) => (v === 95 ? [tableItem(1)] : [])));
    expect(index.unchanged(reads([1]), 94n, 100n)).toBe(false);
    expect(index.unchanged(reads([1]), 95n, 100n)).toBe(true);
    expect(index.unchanged(reads([2]), 91n, 100n)).toBe(true);
    expect(index.unchanged(reads([2]), 89n, 100n)).toBe(false);
  });

  it('bounds the window by writes as well as by versions', () => {
    const index = new WriteIndex({ ...settings, windowVersions: 1000, maxWindowWrites: 20 });
    index.restart(1n);
    index.apply(versions(1, 30, (v) => [tableItem(v)]));
    expect(index.size.window).toBeLessThanOrEqual(20);
    expect(index.unchanged(reads([100]), 1n, 30n)).toBe(false);
    expect(index.unchanged(reads([100]), 20n, 30n)).toBe(true);
  });

  it('knows nothing after a stop, and only what follows after a restart', () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    index.apply(versions(1, 10));
    expect(index.unchanged(reads([1]), 5n, 10n)).toBe(true);
    index.stop();
    expect(index.covered).toBeNull();
    expect(index.unchanged(reads([1]), 5n, 10n)).toBe(false);
    index.restart(50n);
    index.apply(versions(50, 60));
    expect(index.unchanged(reads([1]), 5n, 60n)).toBe(false);
    expect(index.unchanged(reads([1]), 49n, 60n)).toBe(true);
  });

  it('takes new bounds by starting afresh', () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    index.apply(versions(1, 10, (v) => [tableItem(v)]));
    index.reconfigure({ ...settings, windowVersions: 3, maxWatched: 2 });
    expect(index.covered).toBeNull();
    expect(index.size).toEqual({ watched: 0, window: 0 });
    index.restart(11n);
    index.apply(versions(11, 20, (v) => [tableItem(v)]));
    expect(index.size.window).toBe(3);
    for (const k of [30, 31, 32]) expect(index.unchanged(reads([k]), 18n, 20n)).toBe(true);
    expect(index.size.watched).toBe(2);
  });

  it('refuses a version that does not follow, and stops', () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    index.apply(versions(1, 10));
    expect(() => index.apply(versions(12, 12))).toThrow(RangeError);
    expect(index.covered).toBeNull();
  });

  it('applies the account rules: any AccessPath, any group, any code', () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    index.apply([
      { version: 1n, writes: [at(A, 'resource')] },
      { version: 2n, writes: [at(A, 'resource_group')] },
      { version: 3n, writes: [at(B, 'code')] },
      { version: 4n, writes: [at(B, 'access_path')] },
    ]);
    const any = (address: string) => reads([], [{ address, writes: 'any' }]);
    const group = (address: string) => reads([], [{ address, writes: 'group' }]);
    const code = (address: string) => reads([], [{ address, writes: 'code' }]);
    expect(index.unchanged(any(A), 0n, 4n)).toBe(false);
    expect(index.unchanged(any(A), 2n, 4n)).toBe(true);
    expect(index.unchanged(group(A), 1n, 4n)).toBe(false);
    expect(index.unchanged(group(A), 2n, 4n)).toBe(true);
    expect(index.unchanged(code(A), 0n, 4n)).toBe(true);
    // A path nobody could read counts as a group and as code.
    expect(index.unchanged(code(B), 3n, 4n)).toBe(false);
    expect(index.unchanged(group(B), 3n, 4n)).toBe(false);
    expect(index.unchanged(group(B), 4n, 4n)).toBe(true);
  });

  it('reads a module published anywhere as a write of every answer that reads any module', () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    index.apply([
      { version: 1n, writes: [at(A, 'resource')] },
      { version: 2n, writes: [at(B, 'code')] },
    ]);
    const anyModule = idsReadBy({ keys: [], accounts: [], anyModule: true });
    expect(index.unchanged(anyModule, 1n, 2n)).toBe(false);
    expect(index.unchanged(anyModule, 2n, 2n)).toBe(true);
    expect(index.unchanged(reads([5]), 1n, 2n)).toBe(true);
  });

  it('reads a module at a special address (0x0 to 0xf) as a write of every answer that reads the framework', () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    const framework = `0x${'0'.repeat(63)}3`;
    const reads = idsReadBy({ keys: [], accounts: [], frameworkModules: true });
    index.apply([{ version: 1n, writes: [at(B, 'code')] }]);
    expect(index.unchanged(reads, 0n, 1n)).toBe(true);
    index.apply([{ version: 2n, writes: [at(framework, 'code')] }]);
    expect(index.unchanged(reads, 1n, 2n)).toBe(false);
    expect(index.unchanged(reads, 2n, 2n)).toBe(true);
  });

  it("judges an answer that needs a key to exist by the key's removal alone", () => {
    const index = new WriteIndex(settings);
    index.restart(1n);
    const needsOne = idsReadBy({ keys: [], existing: [key(1)], accounts: [] });
    index.apply([{ version: 1n, writes: [tableItem(1)] }]);
    expect(index.unchanged(needsOne, 0n, 1n)).toBe(true);
    // Its value is read by another answer: every write changes that one.
    expect(index.unchanged(reads([1]), 0n, 1n)).toBe(false);
    index.apply([{ version: 2n, writes: [{ ...tableItem(1), deleted: true }] }]);
    expect(index.unchanged(needsOne, 1n, 2n)).toBe(false);
    index.apply([{ version: 3n, writes: [tableItem(1)] }]);
    expect(index.unchanged(needsOne, 2n, 3n)).toBe(true);
  });

  it('names a key by its bytes alone, and a class apart from any key', () => {
    expect(idsWrittenBy(tableItem(1))).toEqual(reads([1]));
    const classes = reads([], [{ address: A, writes: 'any' }]);
    expect(idsWrittenBy({ key: Buffer.from(`a${A}`), kind: 'raw' })).not.toEqual(classes);
  });
});
