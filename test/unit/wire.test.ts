import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptFormat } from '../../src/wire/accept.js';
import { parseAddress } from '../../src/wire/address.js';
import { canonicalJson, canonicalMembers, JsonSyntaxError } from '../../src/wire/canonical-json.js';
import { parseEntryFunctionId } from '../../src/wire/function-id.js';
import { parseHexBytes } from '../../src/wire/hex.js';
import { mediaType } from '../../src/wire/media-type.js';
import { formatTypeTag, parseTypeTag } from '../../src/wire/move-type.js';
import { parseNodeU64 } from '../../src/sim/parse/u64.js';
import { parseU64, U64_MAX } from '../../src/wire/u64.js';
import { decodeViewRequest, encodeViewRequest } from '../../src/wire/view-bcs.js';

const ONE = '0x' + '0'.repeat(63) + '1';

describe('u64', () => {
  it.each([
    ['0', 0n],
    ['007', 7n],
    ['18446744073709551615', 18446744073709551615n],
    // Leading zeros of any length mean the same number, as in Rust's u64::from_str.
    ['0'.repeat(70) + '1', 1n],
    ['0'.repeat(100), 0n],
    ['0'.repeat(40) + '18446744073709551615', 18446744073709551615n],
    // So does one leading '+' (sent as %2B: a bare '+' in a query string is a space).
    ['+5', 5n],
    ['+0', 0n],
    ['+007', 7n],
    ['+' + '0'.repeat(70) + '1', 1n],
    ['+18446744073709551615', 18446744073709551615n],
  ])('accepts %s', (text, value) => expect(parseU64(text)).toBe(value));
  it.each([
    // The contract (api.md §2): digits after at most one '+', nothing else.
    '-1',
    '+',
    '-0',
    '++1',
    '+-1',
    '-+1',
    '+ 1',
    ' +1',
    '1+',
    '+18446744073709551616',
    '+' + '0'.repeat(40) + '18446744073709551616',
    '1.0',
    'abc',
    '18446744073709551616',
    '0'.repeat(40) + '18446744073709551616',
    '1' + '0'.repeat(20),
    '0'.repeat(70) + '1x',
    '',
    ' 1',
    '1e3',
    '0x10',
    '%2B5',
  ])('refuses %j', (text) => expect(parseU64(text)).toBeNull());

  // Property: any spelling of a u64 (a '+' or not, any zeros) is that number; any
  // text at all is read as the sim reads it (src/sim/parse/u64.ts, written apart
  // from this parser from the same contract).
  const spelling = fc.tuple(fc.boolean(), fc.nat({ max: 40 }), fc.bigInt(0n, U64_MAX));
  it('reads every spelling of a u64 as that number', () => {
    fc.assert(
      fc.property(spelling, ([plus, zeros, value]) => {
        expect(parseU64(`${plus ? '+' : ''}${'0'.repeat(zeros)}${value}`)).toBe(value);
      }),
    );
  });
  it('agrees with the sim on any text', () => {
    const near = fc
      .tuple(
        fc.constantFrom('', '+', '-', '++', '+-', ' ', '0'),
        fc.oneof(fc.bigInt(0n, U64_MAX + 2n).map(String), fc.stringMatching(/^[0-9+\- .e]{0,24}$/)),
        fc.constantFrom('', ' ', '+', 'x', '0'),
      )
      .map(([before, middle, after]) => before + middle + after);
    fc.assert(
      fc.property(fc.oneof(near, fc.string({ maxLength: 30 })), (text) => {
        expect(parseU64(text)).toBe(parseNodeU64(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('media type', () => {
  it.each([
    ['application/json', 'application/json'],
    [' Application/JSON ; charset=utf-8', 'application/json'],
    ['application/x.node.view_function+bcs;q=1', 'application/x.node.view_function+bcs'],
    ['', ''],
    [undefined, ''],
  ])('%j is %j', (header, type) => expect(mediaType(header)).toBe(type));
});

describe('hex and addresses', () => {
  it('parses hex bytes with or without 0x, either case', () => {
    expect(parseHexBytes('0xABcd')).toEqual(Buffer.from([0xab, 0xcd]));
    expect(parseHexBytes('abcd')).toEqual(Buffer.from([0xab, 0xcd]));
    expect(parseHexBytes('0x')).toEqual(Buffer.alloc(0));
    expect(parseHexBytes('0xabc')).toBeNull();
    expect(parseHexBytes('0xzz')).toBeNull();
  });
  it('canonicalises short and long address forms', () => {
    expect(parseAddress('0x1')).toBe(ONE);
    expect(parseAddress('0x' + '0'.repeat(63) + '1')).toBe(ONE);
    expect(parseAddress('0'.repeat(63) + '1')).toBe(ONE);
    expect(parseAddress('0xAB')).toBe('0x' + '0'.repeat(62) + 'ab');
    expect(parseAddress('1')).toBeNull();
    // The contract (api.md §2): with 0x, at least one digit.
    expect(parseAddress('0x')).toBeNull();
    expect(parseAddress('0X1')).toBeNull();
    expect(parseAddress('')).toBeNull();
    expect(parseAddress('0x' + '1'.repeat(65))).toBeNull();
    expect(parseAddress('0x1/')).toBeNull();
  });
  it('parses entry function ids, case-sensitive names', () => {
    expect(parseEntryFunctionId('0x1::Coin::balance')).toEqual({ address: ONE, module: 'Coin', name: 'balance' });
    for (const bad of ['0x1::coin', '0x1::coin::', '0x1::co-in::b', 'x::coin::b', '0x1::coin::b::c', '0x1::1coin::b']) {
      expect(parseEntryFunctionId(bad)).toBeNull();
    }
  });
});

describe('Accept', () => {
  it.each([
    [undefined, 'json'],
    ['application/x-bcs', 'bcs'],
    ['application/json, application/x-bcs', 'json'],
    ['text/html, APPLICATION/X-BCS', 'bcs'],
    ['*/*', 'json'],
    // The contract (api.md §3): the first of the two that appears wins, parameters (weights too) ignored.
    ['application/x-bcs;q=0.9, application/json', 'bcs'],
    ['application/json;q=0.5, application/x-bcs', 'json'],
    ['application/x-bcs; charset=utf-8', 'bcs'],
    ['application/x-bcs;', 'bcs'],
    ['text/plain;q=1, application/x-bcs;q=0', 'bcs'],
  ])('%s → %s', (accept, format) => expect(acceptFormat(accept)).toBe(format));
});

describe('Move types', () => {
  it('round-trips to a canonical form', () => {
    const tag = parseTypeTag('0x1::coin::CoinStore< 0x1::aptos_coin::AptosCoin >');
    expect(formatTypeTag(tag!)).toBe(`${ONE}::coin::CoinStore<${ONE}::aptos_coin::AptosCoin>`);
    expect(formatTypeTag(parseTypeTag('vector<vector<u8>>')!)).toBe('vector<vector<u8>>');
  });
  it("reads what move-core-types' parser reads: empty or trailing-comma type arguments, 0X", () => {
    expect(formatTypeTag(parseTypeTag('0x1::a::B<u8,>')!)).toBe(`${ONE}::a::B<u8>`);
    expect(formatTypeTag(parseTypeTag('0x1::a::B<>')!)).toBe(`${ONE}::a::B`);
    expect(formatTypeTag(parseTypeTag('0X1::a::B')!)).toBe(`${ONE}::a::B`);
    expect(formatTypeTag(parseTypeTag('\tvector<\nu8 >\r')!)).toBe('vector<u8>');
    const nested = (n: number): string => 'vector<'.repeat(n) + 'u8' + '>'.repeat(n);
    expect(parseTypeTag(nested(7))).not.toBeNull();
    expect(parseTypeTag(nested(8))).toBeNull();
  });
  it.each([
    'vector<>',
    'u7',
    '0x1::coin',
    'vector<u8',
    '0x1::a::B<u8,,>',
    '0x1::a::B<,>',
    'u8 u8',
    '',
    // Keywords are no names; a name starts with a letter; whitespace is ASCII.
    '0x1::vector::B',
    '0x1::a::u8',
    '0x1::_a::B',
    '0x1::a::\u00a0B',
    '0x::a::B',
    '1::a::B',
  ])('refuses %j', (text) => expect(parseTypeTag(text)).toBeNull());
});

describe('canonical JSON', () => {
  it('sorts members and drops whitespace, keeping numbers as written', () => {
    expect(canonicalJson('{ "b": [1, 2.50, 12345678901234567891], "a": "x" }')).toBe(
      '{"a":"x","b":[1,2.50,12345678901234567891]}',
    );
    expect(canonicalJson('"\\u0041"')).toBe('"A"');
  });
  it('keeps numbers that one double cannot tell apart distinct', () => {
    expect(canonicalJson('[12345678901234567890]')).not.toBe(canonicalJson('[12345678901234567891]'));
  });
  it('returns top-level members', () => {
    expect(canonicalMembers('{"z": {"b":1,"a":2}}')!.get('z')).toBe('{"a":2,"b":1}');
    expect(canonicalMembers('[1]')).toBeNull();
    expect(canonicalMembers('{}')!.size).toBe(0);
  });
  it.each(['{', '{"a":1,}', '[1 2]', '{"a":1,"a":2}', 'nul', '"\u0001"', '01', '1 1'])('refuses %j', (text) =>
    expect(() => canonicalJson(text)).toThrow(JsonSyntaxError),
  );
});

describe('BCS view request', () => {
  const request = {
    address: ONE,
    module: 'sim',
    function: 'balance',
    typeArgs: [parseTypeTag('vector<0x1::a::B<u64>>')!],
    args: [Uint8Array.from(Buffer.alloc(32, 7))],
  };
  it('round-trips', () => {
    const bytes = encodeViewRequest(request);
    const decoded = decodeViewRequest(bytes).request!;
    expect(decoded.function).toBe('balance');
    expect(formatTypeTag(decoded.typeArgs[0])).toBe(`vector<${ONE}::a::B<u64>>`);
    expect(Buffer.from(decoded.args[0])).toEqual(Buffer.alloc(32, 7));
  });
  it("refuses what a node cannot decode, saying why in the bcs crate's words", () => {
    const bytes = Buffer.from(encodeViewRequest(request));
    const reason = (body: Uint8Array): string | undefined => decodeViewRequest(body).reason;
    expect(reason(Buffer.concat([bytes, Buffer.from([0])]))).toBe('remaining input');
    expect(reason(bytes.subarray(0, bytes.length - 1))).toBe('unexpected end of input');
    expect(reason(Buffer.from('{"function":"x"}'))).toBe('unexpected end of input');
    // A name that is no Move identifier decodes: a node's Identifier does not check what it deserializes.
    expect(decodeViewRequest(encodeViewRequest({ ...request, function: 'bad-name' })).request?.function).toBe(
      'bad-name',
    );
    // An argument count that claims more arguments than follow.
    const noArgs = Buffer.from(encodeViewRequest({ ...request, args: [] }));
    expect(reason(Buffer.concat([noArgs.subarray(0, -1), Buffer.from([3, 1, 7])]))).toBe('unexpected end of input');
    // A length in more bytes than it needs, or beyond a u32, or beyond a sequence's limit.
    expect(reason(Buffer.concat([noArgs.subarray(0, -1), Buffer.from([1, 0x81, 0x00, 7])]))).toBe(
      'ULEB128 encoding was not minimal in size',
    );
    expect(reason(Buffer.concat([noArgs.subarray(0, -1), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x1f])]))).toBe(
      'ULEB128-encoded integer did not fit in the target size',
    );
    expect(reason(Buffer.concat([noArgs.subarray(0, -1), Buffer.from([0x80, 0x80, 0x80, 0x80, 0x08])]))).toBe(
      'exceeded max sequence length: 2147483648',
    );
    // A name that is not UTF-8, an unknown type tag, types nested too deep.
    const badName = Buffer.from(encodeViewRequest({ ...request, module: 'ab' }));
    badName[33] = 0xff;
    expect(reason(badName)).toBe('malformed utf8');
    const noTypes = Buffer.from(encodeViewRequest({ ...request, typeArgs: [], args: [] }));
    expect(reason(Buffer.concat([noTypes.subarray(0, -2), Buffer.from([1, 11, 0])]))).toBe(
      'invalid value: integer `11`, expected variant index 0 <= i < 11',
    );
    expect(reason(Buffer.concat([noTypes.subarray(0, -2), Buffer.from([1, ...Array(10).fill(6), 1, 0])]))).toBe(
      'type tag nesting exceeded during deserialization',
    );
  });
  it('reads only the body it is given, never the bytes beside it in a shared buffer', () => {
    const bytes = Buffer.from(encodeViewRequest(request));
    // A body cut short inside a larger buffer whose next bytes would complete it.
    const shared = Buffer.concat([bytes, bytes]);
    expect(decodeViewRequest(shared.subarray(0, bytes.length - 4)).reason).toBe('unexpected end of input');
    expect(decodeViewRequest(shared.subarray(bytes.length)).request?.function).toBe('balance');
  });
});
