// The sparse write model without HTTP: its universe, how often each key is written,
// that each version's writes are exactly the keys whose value changes, and the sim
// CLI's options that choose it.
import { describe, expect, it } from 'vitest';
import { parseSimArgs } from '../../src/sim/cli-args.js';
import { SimFaultInjector } from '../../src/sim/faults.js';
import {
  SimSparseModel,
  simSparseUniverse,
  simStateKey,
  simUserVersion,
  simVersionKind,
  SIM_FAULT_MODES,
  SIM_FEED_MODES,
  SIM_VERSIONS_PER_BLOCK,
  type SimUniverseKey,
} from '../../src/sim/index.js';

const differs = (model: SimSparseModel, key: SimUniverseKey, version: bigint): boolean => {
  const before = model.stateAt(key, version - 1n);
  const after = model.stateAt(key, version);
  return (
    (before === null) !== (after === null) || (before !== null && after !== null && !before.bytes.equals(after.bytes))
  );
};

describe('the sparse universe', () => {
  it('holds accounts, objects, tables and 0x1, each key once, with its StateKey', () => {
    const u = simSparseUniverse({ accounts: 8, objects: 3, tables: 2, tableKeys: 5 });
    expect(u.accounts).toHaveLength(8);
    expect(u.objects).toHaveLength(3);
    expect(u.tables).toHaveLength(2);
    const kinds = new Set(u.keys.map((k) => k.kind));
    expect([...kinds].sort()).toEqual(
      ['account', 'block', 'code', 'coin_store', 'object_group', 'slot', 'table_item', 'timestamp'].sort(),
    );
    expect(new Set(u.keys.map((k) => k.stateKey.toString('hex'))).size).toBe(u.keys.length);
    for (const key of u.keys) expect(key.stateKey).toEqual(simStateKey(key.spec));
    expect(u.keys.filter((k) => k.kind === 'table_item')).toHaveLength(10);
    expect(u.keys.filter((k) => k.kind === 'object_group').map((k) => k.owner)).toEqual(u.objects);
  });

  it('derives the cold window from the write rate, and refuses options it cannot meet', () => {
    const slow = simSparseUniverse({ writeRate: 0.01 });
    const fast = simSparseUniverse({ writeRate: 0.05 });
    expect(slow.every.cold).toBeGreaterThan(fast.every.cold);
    expect(slow.every.code).toBe(slow.every.cold * 4n);
    expect(() => simSparseUniverse({ writeRate: 0, hotShare: 0.5 })).toThrow(RangeError);
    expect(() => simSparseUniverse({ accounts: -1 })).toThrow(RangeError);
    expect(() => simSparseUniverse({ hotShare: 2 })).toThrow(RangeError);
  });
});

describe('the sparse model', () => {
  const model = new SimSparseModel();
  const keys = model.universe.keys;

  it('writes about writeRate of the universe per version, hot keys far more often than cold ones', () => {
    let writes = 0;
    const byKey = new Map<number, number>();
    for (let v = 10_000n; v < 12_000n; v++) {
      for (const w of model.writesAt(v)) {
        writes++;
        byKey.set(w.key.index, (byKey.get(w.key.index) ?? 0) + 1);
      }
    }
    const rate = writes / 2000 / keys.length;
    expect(rate).toBeGreaterThan(0.015);
    expect(rate).toBeLessThan(0.025);
    const mean = (list: SimUniverseKey[]): number =>
      list.reduce((n, k) => n + (byKey.get(k.index) ?? 0), 0) / list.length;
    const hot = keys.filter((k) => k.hot);
    const cold = keys.filter((k) => !k.hot && k.schedule.kind === 'user' && k.kind !== 'code');
    expect(hot.length).toBeGreaterThan(0);
    expect(mean(hot)).toBeGreaterThan(4 * mean(cold));
  });

  it('lists at each version exactly the keys whose value differs from the version before, in StateKey order', () => {
    const small = new SimSparseModel({ accounts: 12, objects: 4, tables: 2, tableKeys: 12, writeRate: 0.05 });
    const ops = new Set<string>();
    for (let v = 5000n; v < 5100n; v++) {
      const writes = small.writesAt(v);
      const written = new Set(writes.map((w) => w.key.index));
      for (const key of small.universe.keys)
        expect(written.has(key.index), `${key.kind} ${key.index} at ${v}`).toBe(differs(model, key, v));
      for (const w of writes) {
        ops.add(w.op);
        expect(w.value).toEqual(model.stateAt(w.key, v)?.bytes ?? null);
        expect(w.op === 'creation').toBe(model.stateAt(w.key, v - 1n) === null);
      }
      const order = writes.map((w) => w.key.stateKey);
      expect(order).toEqual([...order].sort(Buffer.compare));
    }
    expect([...ops].sort()).toEqual(['creation', 'deletion', 'modification']);
  });

  it('says when a key was last written: its value is the same from that version on', () => {
    for (const key of keys.slice(0, 60)) {
      const last = model.lastWriteAt(key, 9000n);
      if (key.schedule.kind === 'never') {
        expect(last).toBeNull();
        continue;
      }
      expect(last).not.toBeNull();
      const at = last as bigint;
      expect(model.writesAt(at).some((w) => w.key.index === key.index) || !differs(model, key, at)).toBe(true);
      const value = model.stateAt(key, at)?.bytes;
      for (const v of [at, (at + 9000n) / 2n, 9000n]) expect(model.stateAt(key, v)?.bytes).toEqual(value);
      expect(model.lastWriteAt(key, at)).toBe(at);
    }
  });

  it('lays out blocks as mainnet does: metadata (0x1 block keys), user transactions, an epilogue that writes nothing', () => {
    const block = 700n * SIM_VERSIONS_PER_BLOCK;
    expect(simVersionKind(block)).toEqual({ kind: 'metadata' });
    expect(
      model
        .writesAt(block)
        .map((w) => w.key.kind)
        .sort(),
    ).toEqual(['block', 'timestamp']);
    expect(simVersionKind(block + SIM_VERSIONS_PER_BLOCK - 1n)).toEqual({ kind: 'epilogue' });
    expect(model.writesAt(block + SIM_VERSIONS_PER_BLOCK - 1n)).toEqual([]);
    const user = simVersionKind(block + 1n);
    expect(user.kind).toBe('user');
    if (user.kind === 'user') expect(simUserVersion(user.n)).toBe(block + 1n);
  });

  it('is the same model for the same options (tests and the bench compute what a node answers)', () => {
    const again = new SimSparseModel();
    for (const v of [1000n, 1001n, 1002n, 77_777n]) {
      expect(again.writesAt(v).map((w) => [w.key.index, w.op, w.value])).toEqual(
        model.writesAt(v).map((w) => [w.key.index, w.op, w.value]),
      );
    }
    expect(new SimSparseModel({ accounts: 5 }).universe.keys.length).not.toBe(keys.length);
  });
});

describe('the sim CLI chooses the write model', () => {
  it('takes --writes sparse with its knobs, period by default', () => {
    expect(parseSimArgs([])).toMatchObject({ help: false, options: { writes: undefined } });
    expect(
      parseSimArgs([
        '--writes',
        'sparse',
        '--write-rate',
        '0.05',
        '--hot-share',
        '0.1',
        '--hot-every',
        '4',
        '--accounts',
        '10',
        '--objects',
        '2',
        '--tables',
        '3',
        '--table-keys',
        '16',
      ]),
    ).toMatchObject({
      options: {
        writes: {
          model: 'sparse',
          writeRate: 0.05,
          hotShare: 0.1,
          hotEvery: 4,
          accounts: 10,
          objects: 2,
          tables: 3,
          tableKeys: 16,
        },
      },
    });
    expect(parseSimArgs(['--writes', 'period'])).toMatchObject({ options: { writes: { model: 'period' } } });
  });

  it('refuses an unknown model, a knob without --writes sparse, and a share above 1', () => {
    expect(() => parseSimArgs(['--writes', 'dense'])).toThrow(/--writes must be period or sparse/);
    expect(() => parseSimArgs(['--write-rate', '0.1'])).toThrow(/--write-rate needs --writes sparse/);
    expect(() => parseSimArgs(['--writes', 'sparse', '--write-rate', '2'])).toThrow(/--write-rate/);
    expect(() => parseSimArgs(['--writes', 'sparse', '--accounts', '1.5'])).toThrow(/--accounts/);
  });
});

describe('feed fault bookkeeping', () => {
  it('a feed mode faults only the feed route, and its range must run forward', () => {
    const faults = new SimFaultInjector();
    expect(() => faults.set({ mode: 'feedGap', range: { from: 5n, to: 4n } })).toThrow(RangeError);
    faults.set({ mode: 'feedGap', count: 1 });
    expect(faults.take('transactions')).toBeNull();
    expect(faults.take('view')).toBeNull();
    expect(faults.take('feed')).toMatchObject({ mode: 'feedGap' });
    expect(faults.take('feed')).toBeNull();
    for (const mode of SIM_FEED_MODES) expect(SIM_FAULT_MODES).toContain(mode);
  });
});
