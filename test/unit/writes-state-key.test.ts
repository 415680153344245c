// The StateKey a route names (encodeStateKey) is the very bytes a write set holds for the
// same key: checked against the tests' own encoder, read back, and read in a write set.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TypeTag } from '../../src/wire/move-type.js';
import { decodeTransactionPage } from '../../src/writes/page.js';
import { decodeStateKey, encodeStateKey, type StateKeySpec, stateKeyHash } from '../../src/writes/state-key.js';
import { Path, StateKey } from '../helpers/feed-bcs.js';
import { concatBytes } from '../helpers/bytes.js';
import { onChain, page, writeSetBytes } from '../helpers/feed-build.js';
import { aptosHash } from '../helpers/feed-page.js';
import { addr, fill } from '../helpers/feed-samples.js';

const hexBytes = (canonical: string) => Uint8Array.from(Buffer.from(canonical.slice(2), 'hex'));

/** A wire/ TypeTag as the tests' encoder takes it. */
function tagValue(tag: TypeTag): unknown {
  if (tag.kind === 'vector') return { vector: tagValue(tag.of) };
  if (tag.kind === 'struct') return { struct: structValue(tag) };
  return { [tag.kind]: true };
}
const structValue = (tag: TypeTag & { kind: 'struct' }) => ({
  address: hexBytes(tag.address),
  module: tag.module,
  name: tag.name,
  type_args: tag.typeArgs.map(tagValue),
});

/** The StateKey's bytes by the tests' encoder. */
function testEncoding(spec: StateKeySpec): Uint8Array {
  if (spec.kind === 'table_item')
    return StateKey.serialize({ TableItem: { handle: hexBytes(spec.handle), key: spec.key } }).toBytes();
  const path =
    spec.kind === 'code'
      ? { Code: { address: hexBytes(spec.address), name: spec.module } }
      : { [spec.kind === 'resource' ? 'Resource' : 'ResourceGroup']: structValue(spec.tag) };
  return StateKey.serialize({
    AccessPath: { address: hexBytes(spec.address), path: Path.serialize(path as never).toBytes() },
  }).toBytes();
}

const address = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => '0x' + Buffer.from(b).toString('hex'));
const identifier = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,24}$/);
const PRIMITIVES = ['bool', 'u8', 'u16', 'u32', 'u64', 'u128', 'u256', 'address', 'signer'] as const;
const { struct } = fc.letrec<{ tag: TypeTag; struct: TypeTag & { kind: 'struct' } }>((go) => ({
  tag: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...PRIMITIVES).map((kind) => ({ kind }) as TypeTag),
    go('tag').map((of) => ({ kind: 'vector', of }) as TypeTag),
    go('struct'),
  ),
  struct: fc.record({
    kind: fc.constant('struct' as const),
    address,
    module: identifier,
    name: identifier,
    typeArgs: fc.array(go('tag'), { maxLength: 3 }),
  }),
}));
const spec: fc.Arbitrary<StateKeySpec> = fc.oneof(
  fc.record({ kind: fc.constant('table_item' as const), handle: address, key: fc.uint8Array({ maxLength: 300 }) }),
  fc.record({ kind: fc.constantFrom('resource' as const, 'resource_group' as const), address, tag: struct }),
  fc.record({ kind: fc.constant('code' as const), address, module: identifier }),
);

describe('encodeStateKey', () => {
  it('writes the bytes the tests’ encoder writes, and decodeStateKey reads the spec back', () => {
    fc.assert(
      fc.property(spec, (s) => {
        const bytes = encodeStateKey(s);
        expect(bytes.toString('hex')).toBe(Buffer.from(testEncoding(s)).toString('hex'));
        expect(decodeStateKey(bytes)).toEqual(s.kind === 'table_item' ? { ...s, key: Uint8Array.from(s.key) } : s);
      }),
      { numRuns: 500 },
    );
  });

  it('names the key a write set holds: the page reads it as that kind at that address', () => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 6 }), (specs) => {
        const unique = [...new Map(specs.map((s) => [encodeStateKey(s).toString('hex'), s])).values()];
        const entries = unique.map((s) => [StateKey.parse(testEncoding(s)), { Deletion: true }] as const);
        const { body } = page([
          onChain({
            version: 0n,
            transaction: Uint8Array.of(3, ...fill(32, 1)),
            writeSet: writeSetBytes(entries as never),
          }),
        ]);
        const [decoded] = decodeTransactionPage(body, 0n);
        const read = new Map(decoded!.writes.map((w) => [w.key.toString('hex'), w]));
        for (const s of unique) {
          const w = read.get(encodeStateKey(s).toString('hex'));
          expect(w).toEqual({
            key: encodeStateKey(s),
            kind: s.kind,
            ...(s.kind === 'table_item' ? {} : { address: s.address }),
            deleted: true,
          });
        }
      }),
      { numRuns: 100 },
    );
  });

  it.each([
    ['a raw key', StateKey.serialize({ Raw: [1, 2, 3] }).toBytes()],
    ['a path that is no Path', StateKey.serialize({ AccessPath: { address: fill(32, 1), path: [9, 9] } }).toBytes()],
    [
      'a path with a byte after it',
      StateKey.serialize({
        AccessPath: {
          address: fill(32, 1),
          path: [...Path.serialize({ Code: { address: fill(32, 1), name: 'm' } }).toBytes(), 0],
        },
      }).toBytes(),
    ],
    [
      'code under another account',
      StateKey.serialize({
        AccessPath: {
          address: fill(32, 1),
          path: Path.serialize({ Code: { address: fill(32, 2), name: 'm' } }).toBytes(),
        },
      }).toBytes(),
    ],
    [
      'a key with a byte after it',
      Uint8Array.from([...encodeStateKey({ kind: 'code', address: '0x' + '01'.repeat(32), module: 'm' }), 0]),
    ],
    [
      'a struct with a signed integer argument',
      StateKey.serialize({
        AccessPath: {
          address: fill(32, 1),
          path: Path.serialize({
            Resource: { address: fill(32, 1), module: 'm', name: 'R', type_args: [{ i8: true }] },
          }).toBytes(),
        },
      }).toBytes(),
    ],
  ])('decodeStateKey says no spec makes %s', (_, bytes) => {
    expect(decodeStateKey(bytes)).toBeNull();
  });
});

// The node hashes a key's storage encoding (StateKeyInner::encode), not its BCS: the two are
// one for an AccessPath; a table item's key goes without its length, a raw key's tag is 255,
// a trading-native key's tag is 2. (Real table items' hashes: npm run check:real-vectors.)
describe('stateKeyHash', () => {
  it.each([
    ['an AccessPath', { AccessPath: { address: addr(1), path: [1, 2, 3] } }, concatBytes([0], addr(1), [3, 1, 2, 3])],
    ['a table item', { TableItem: { handle: addr(2), key: fill(200, 3) } }, concatBytes([1], addr(2), fill(200, 3))],
    ['a table item with an empty key', { TableItem: { handle: addr(2), key: [] } }, concatBytes([1], addr(2))],
    ['a raw key', { Raw: fill(5, 4) }, concatBytes([255], fill(5, 4))],
    [
      'a trading-native key',
      { TradingNative: { Position: { exchange: addr(5), account: addr(6), market: addr(7) } } },
      concatBytes([2, 0], addr(5), addr(6), addr(7)),
    ],
  ])('hashes %s by its storage encoding', (_, key, encoded) => {
    const bcs = StateKey.serialize(key as never).toBytes();
    expect(stateKeyHash(bcs).toString('hex')).toBe(aptosHash('StateKey', encoded).toString('hex'));
  });

  it('says so of bytes that are no StateKey', () => {
    expect(() => stateKeyHash(Uint8Array.of(9))).toThrow(RangeError);
    expect(() => stateKeyHash(Uint8Array.of(2, 1, 7, 0))).toThrow(RangeError);
    expect(() => stateKeyHash(Uint8Array.of(1, 5))).toThrow(RangeError);
    expect(() => stateKeyHash(Uint8Array.of(3, 1))).toThrow(RangeError);
  });
});
