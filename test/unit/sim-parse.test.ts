// The sim's own parsers (src/sim/parse/), each held to the rule it follows: the API
// contract (docs/api.md §2, §3) for u64s, addresses and Accept, the node code it is
// written from for the rest. So the oracle of the differential suite is code apart from
// the proxy's canonicalisation (src/wire/).
import { bcs } from '@mysten/bcs';
import { describe, expect, it } from 'vitest';
import { simAnswerFormat } from '../../src/sim/parse/accept.js';
import { parseNodeAddress, parseNodeHexBytes } from '../../src/sim/parse/address.js';
import { parseNodeTypeTag, simTypeName } from '../../src/sim/parse/type-tag.js';
import { parseNodeU64 } from '../../src/sim/parse/u64.js';
import { decodeNodeViewFunction, parseNodeFunctionId } from '../../src/sim/parse/view-request.js';

const ONE = '0x' + '1'.padStart(64, '0');

describe("u64 (the contract: Rust's u64::from_str, digits after an optional '+')", () => {
  it.each([
    ['0', 0n],
    ['007', 7n],
    ['0'.repeat(80) + '7', 7n],
    ['18446744073709551615', 18446744073709551615n],
    ['+5', 5n],
    ['+007', 7n],
    ['+18446744073709551615', 18446744073709551615n],
  ])('reads %j', (text, value) => expect(parseNodeU64(text)).toBe(value));
  it.each([
    '',
    '+',
    '-0',
    '-1',
    '++1',
    '+-1',
    ' +1',
    ' 1',
    '1 ',
    '1.0',
    '1e3',
    '0x10',
    '18446744073709551616',
    '+18446744073709551616',
    '１',
  ])('refuses %j', (text) => expect(parseNodeU64(text)).toBeNull());
});

describe("addresses (the API's Address) and hex bytes (HexEncodedBytes)", () => {
  it('pads 1 to 64 digits after 0x (the contract); takes exactly 64 digits without it', () => {
    expect(parseNodeAddress('0x1')).toBe(ONE);
    expect(parseNodeAddress('0x' + 'ab'.repeat(32))).toBe('0x' + 'ab'.repeat(32));
    expect(parseNodeAddress('0xAB')).toBe('0x' + 'ab'.padStart(64, '0'));
    expect(parseNodeAddress('ab'.repeat(32))).toBe('0x' + 'ab'.repeat(32));
    for (const bad of ['', '0x', '1', '0X1', '0x' + '1'.repeat(65), 'ab'.repeat(31), '0x1g', ' 0x1', '+0x1']) {
      expect(parseNodeAddress(bad), bad).toBeNull();
    }
  });
  it('drops one 0x and takes pairs of digits in either case', () => {
    expect(parseNodeHexBytes('0xAbCd')).toEqual(Buffer.from([0xab, 0xcd]));
    expect(parseNodeHexBytes('abcd')).toEqual(Buffer.from([0xab, 0xcd]));
    expect(parseNodeHexBytes('0x')).toEqual(Buffer.alloc(0));
    for (const bad of ['0xabc', '0x0xab', '0Xab', 'zz']) expect(parseNodeHexBytes(bad), bad).toBeNull();
  });
});

describe("type tags (move-core-types' parser)", () => {
  it.each([
    ['0x1::coin::CoinStore< 0x1::aptos_coin::AptosCoin >', `${ONE}::coin::CoinStore<${ONE}::aptos_coin::AptosCoin>`],
    ['0X1::a::B<u8,>', `${ONE}::a::B<u8>`],
    ['0x1::a::B<>', `${ONE}::a::B`],
    ['\tvector<\nvector<u8>>', 'vector<vector<u8>>'],
    ['vector<'.repeat(7) + 'u8' + '>'.repeat(7), 'vector<'.repeat(7) + 'u8' + '>'.repeat(7)],
  ])('reads %j', (text, name) => expect(simTypeName(parseNodeTypeTag(text)!)).toBe(name));
  it.each([
    '',
    'u7',
    'vector<>',
    '0x1::a::B<,>',
    '0x1::a::B<u8,,>',
    '0x1::vector::B',
    '0x1::a::true',
    '0x1::_a::B',
    '0x::a::B',
    '0x1::a::B\u00a0',
    'vector<'.repeat(8) + 'u8' + '>'.repeat(8),
  ])('refuses %j', (text) => expect(parseNodeTypeTag(text)).toBeNull());
});

describe('view requests', () => {
  it("splits a function id at its last '::', its module id at the first", () => {
    expect(parseNodeFunctionId('0x1::sim::add')).toEqual({ address: ONE, module: 'sim', function: 'add' });
    for (const bad of ['0x1::sim', '0x1::a::b::c', '0x1::sim::1add', 'sim::add', '0x1::sim::']) {
      expect(parseNodeFunctionId(bad), bad).toBeNull();
    }
  });
  it("decodes a BCS ViewFunction as the bcs crate does, saying why not in the crate's words", () => {
    const body = (module: string, tail: number[]): Buffer =>
      Buffer.concat([
        Buffer.alloc(31),
        Buffer.from([1]),
        Buffer.from(bcs.string().serialize(module).toBytes()),
        Buffer.from(tail),
      ]);
    const add = [3, ...Buffer.from('add'), 0, 1, 1, 7];
    expect(decodeNodeViewFunction(body('sim', add))).toEqual({
      call: { address: ONE, module: 'sim', function: 'add', typeArgs: [] },
      args: [Buffer.from([7])],
    });
    // A name that is no Move identifier decodes: the node finds no such module.
    expect(decodeNodeViewFunction(body('no-such', add))).toMatchObject({ call: { module: 'no-such' } });
    const reason = (bytes: Buffer): string | undefined => (decodeNodeViewFunction(bytes) as { reason?: string }).reason;
    expect(reason(Buffer.alloc(3))).toBe('unexpected end of input');
    expect(reason(body('sim', [...add, 0]))).toBe('remaining input');
    expect(reason(body('sim', [3, ...Buffer.from('add'), 0, 0x81, 0x00]))).toBe(
      'ULEB128 encoding was not minimal in size',
    );
    expect(reason(body('sim', [3, ...Buffer.from('add'), 1, 11, 0]))).toBe(
      'invalid value: integer `11`, expected variant index 0 <= i < 11',
    );
    expect(reason(body('sim', [3, ...Buffer.from('add'), 1, ...Array(9).fill(6), 1, 0]))).toBe(
      'type tag nesting exceeded during deserialization',
    );
    expect(reason(body('sim', [2, 0xff, 0xfe, 0, 0]))).toBe('malformed utf8');
  });
});

describe('Accept (the contract: the first of the two that appears, parameters ignored)', () => {
  it.each([
    [undefined, 'json'],
    ['', 'json'],
    ['application/x-bcs', 'bcs'],
    ['APPLICATION/X-BCS', 'bcs'],
    ['application/x-bcs, application/json', 'bcs'],
    ['application/json, application/x-bcs', 'json'],
    ['application/x-bcs;q=0.9, application/json', 'bcs'],
    ['application/json;q=0.5, text/html, application/x-bcs', 'json'],
    ['text/html, application/x-bcs;q=0', 'bcs'],
    ['application/x-bcs; charset=utf-8', 'bcs'],
    ['application/x-bcs;', 'bcs'],
    [' application/x-bcs ; q=1', 'bcs'],
    ['*/*', 'json'],
    ['application/*', 'json'],
  ])('%j → %s', (accept, format) => expect(simAnswerFormat(accept)).toBe(format));
});
